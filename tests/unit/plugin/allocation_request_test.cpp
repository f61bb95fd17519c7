// What stepmap asks Slurm for when srun has no allocation: srun's own
// allocation options and variables, the placement's needs, and refusals
// for what it cannot pass on.

#include "options.hpp"
#include "srun/allocation_request.hpp"
#include "srun/srun_command_line.hpp"

#include <gtest/gtest.h>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

Expected<AllocationRequest> request(std::vector<std::string> args,
                                    std::map<std::string, std::string> environment = {},
                                    AllocationShape shape = {}) {
    auto cmd = scanSrunCommandLine(args, optionArity());
    return allocationRequestFor(cmd, environment, shape, cmd.program.value_or(""),
                                [](const std::string &path) -> Expected<std::string> {
                                    if (path == "/nodes")
                                        return std::string("n2\nn[3-4]\n");
                                    return UserError{"No such file or directory"};
                                });
}

} // namespace

TEST(AllocationRequest, SrunOptionsShapeTheAllocation) {
    auto r = request({"-n",          "4",    "-N2",     "-p",       "small",
                      "-A",          "acct", "-q",      "high",     "-t",
                      "1-02:03",     "-C",   "ib",      "--mem=2G", "--reservation=r1",
                      "--exclusive", "-c",   "2",       "-J",       "name",
                      "--map-by",    "node", "/bin/app"})
                 .value();
    EXPECT_EQ(r.tasks, 4);
    EXPECT_EQ(r.minNodes, 2);
    EXPECT_EQ(r.maxNodes, 2);
    EXPECT_EQ(r.partition, "small");
    EXPECT_EQ(r.account, "acct");
    EXPECT_EQ(r.qos, "high");
    EXPECT_EQ(r.timeLimitMin, 24u * 60 + 2 * 60 + 3);
    EXPECT_EQ(r.constraint, "ib");
    EXPECT_EQ(r.memPerNodeMb, 2048u);
    EXPECT_EQ(r.reservation, "r1");
    EXPECT_EQ(r.sharing, AllocationRequest::Sharing::Exclusive);
    EXPECT_EQ(r.cpusPerTask, 2);
    EXPECT_EQ(r.name, "name");
}

TEST(AllocationRequest, JobNameDefaultsToTheProgram) {
    EXPECT_EQ(request({"-n", "2", "/usr/bin/hostname"}).value().name, "hostname");
}

TEST(AllocationRequest, AbbreviatedLongOptionsCount) {
    auto r = request({"--nodel=n1", "--part", "small", "./app"}).value();
    EXPECT_EQ(r.requiredNodes, (std::vector<std::string>{"n1"}));
    EXPECT_EQ(r.partition, "small");
    // Ambiguous ("--ntask": --ntasks, --ntasks-per-node, ...): srun refuses
    // it; it shapes nothing here.
    EXPECT_EQ(request({"--ntask=3", "./app"}).value().tasks, std::nullopt);
}

TEST(AllocationRequest, VariablesCountAndTheCommandLineWins) {
    auto r =
        request({"-p", "debug", "./app"},
                {{"SLURM_PARTITION", "small"}, {"SLURM_ACCOUNT", "a1"}, {"SLURM_TIMELIMIT", "5"}})
            .value();
    EXPECT_EQ(r.partition, "debug");
    EXPECT_EQ(r.account, "a1");
    EXPECT_EQ(r.timeLimitMin, 5u);
}

TEST(AllocationRequest, PlacementFillsWhatTheUserLeftOpen) {
    AllocationShape shape;
    shape.tasks = 4;
    shape.spread = true;
    shape.cpusPerTask = 2;
    shape.namedNodes = {"n3"};
    shape.namedBy = "--host";
    auto r = request({"./app"}, {}, shape).value();
    EXPECT_EQ(r.tasks, 4);
    EXPECT_EQ(r.cpusPerTask, 2);
    EXPECT_EQ(r.requiredNodes, (std::vector<std::string>{"n3"}));
    // Named nodes decide where, not a spread.
    EXPECT_FALSE(r.spread);

    shape.namedNodes.clear();
    EXPECT_TRUE(request({"./app"}, {}, shape).value().spread);
    // A node count the user gave decides too.
    EXPECT_FALSE(request({"-N", "2", "./app"}, {}, shape).value().spread);
}

TEST(AllocationRequest, NodelistFromAFileAndExclusions) {
    auto r = request({"-w", "/nodes", "-x", "n1", "./app"}).value();
    EXPECT_EQ(r.requiredNodes, (std::vector<std::string>{"n2", "n3", "n4"}));
    EXPECT_EQ(r.excludedNodes, (std::vector<std::string>{"n1"}));
    auto clash = request({"-w", "n[1-2]", "-x", "n2", "./app"});
    ASSERT_FALSE(clash);
    EXPECT_EQ(clash.error().message,
              "node 'n2' is both excluded by -x and named by -w; drop it from one of them");
    auto missing = request({"-w", "./missing/file", "./app"});
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("cannot read -w file './missing/file'"),
              std::string::npos);
}

TEST(AllocationRequest, WhatCannotBePassedOnIsRefusedNamingTheWayOut) {
    auto r = request({"--gres=gpu:1", "-n", "2", "./app"});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              "--gres shapes the job's allocation, and stepmap does not pass it on when it asks "
              "Slurm for one; get the allocation first, e.g. `salloc --gres gpu:1 srun ...` or "
              "#SBATCH --gres");
    auto v = request({"./app"}, {{"SLURM_GPUS", "2"}});
    ASSERT_FALSE(v);
    EXPECT_NE(v.error().message.find("SLURM_GPUS (srun's --gpus) shapes the job's allocation"),
              std::string::npos);
}

TEST(AllocationRequest, BadValuesNameTheOption) {
    auto t = request({"-t", "1:2:3:4", "./app"});
    ASSERT_FALSE(t);
    EXPECT_NE(t.error().message.find("-t '1:2:3:4': expected minutes"), std::string::npos);
    auto m = request({"--mem", "lots", "./app"});
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message.find("--mem 'lots'"), std::string::npos);
    auto n = request({"-n", "0", "./app"});
    ASSERT_FALSE(n);
    auto e = request({"--exclusive=all", "./app"});
    ASSERT_FALSE(e);
    EXPECT_NE(e.error().message.find("expected nothing, 'user' or 'mcs'"), std::string::npos);
}

TEST(SlurmTime, Forms) {
    bool unlimited = false;
    EXPECT_EQ(parseSlurmMinutes("-t", "90", unlimited).value(), 90u);
    EXPECT_EQ(parseSlurmMinutes("-t", "1:30", unlimited).value(), 2u); // M:S, rounded up
    EXPECT_EQ(parseSlurmMinutes("-t", "2:00:00", unlimited).value(), 120u);
    EXPECT_EQ(parseSlurmMinutes("-t", "1-0", unlimited).value(), 1440u);
    EXPECT_EQ(parseSlurmMinutes("-t", "1-1:1:1", unlimited).value(), 1440u + 61 + 1);
    EXPECT_FALSE(unlimited);
    parseSlurmMinutes("-t", "UNLIMITED", unlimited);
    EXPECT_TRUE(unlimited);
    EXPECT_FALSE(parseSlurmMinutes("-t", "", unlimited));
    EXPECT_FALSE(parseSlurmMinutes("-t", "abc", unlimited));
}

TEST(SlurmMemory, Units) {
    EXPECT_EQ(parseSlurmMegabytes("--mem", "100").value(), 100u);
    EXPECT_EQ(parseSlurmMegabytes("--mem", "2048K").value(), 2u);
    EXPECT_EQ(parseSlurmMegabytes("--mem", "3G").value(), 3072u);
    EXPECT_EQ(parseSlurmMegabytes("--mem", "1T").value(), 1024u * 1024);
    EXPECT_FALSE(parseSlurmMegabytes("--mem", "1X"));
    EXPECT_FALSE(parseSlurmMegabytes("--mem", "G"));
}

TEST(AllocationRequest, TasksPerNodeInEitherSpellingAndTheShapeOtherwise) {
    EXPECT_EQ(request({"--ntasks-per-node=3", "./app"}).value().tasksPerNode, 3);
    EXPECT_EQ(request({"--tasks-per-node=2", "./app"}).value().tasksPerNode, 2);
    EXPECT_EQ(request({"--ntasks-per-node=3", "--tasks-per-node=2", "./app"}).value().tasksPerNode,
              3);
    AllocationShape shape;
    shape.nodes = 2;
    shape.tasksPerNode = 4;
    auto r = request({"./app"}, {}, shape).value();
    EXPECT_EQ(r.minNodes, 2);
    EXPECT_EQ(r.maxNodes, 2);
    EXPECT_EQ(r.tasksPerNode, 4);
    auto bad = request({"--ntasks-per-node=0", "./app"});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("--ntasks-per-node '0': expected a number from 1 to"),
              std::string::npos);
}

TEST(AllocationRequest, NamedNodesRunningSeveralProcessesNeedTheirCpus) {
    AllocationShape shape;
    shape.processesPerNamedNode = 3;
    shape.cpusPerTask = 2;
    EXPECT_EQ(request({"./app"}, {}, shape).value().minCpusPerNode, 6);
    // --mincpus counts when it asks for more.
    EXPECT_EQ(request({"--mincpus=8", "./app"}, {}, shape).value().minCpusPerNode, 8);
    EXPECT_EQ(request({"--mincpus=4", "./app"}, {}, shape).value().minCpusPerNode, 6);
    EXPECT_EQ(request({"--mincpus=4", "./app"}).value().minCpusPerNode, 4);
}

TEST(AllocationRequest, MemoryPerNodeOrPerCpu) {
    EXPECT_EQ(request({"--mem-per-cpu=512", "./app"}).value().memPerCpuMb, 512u);
    auto both = request({"--mem-per-cpu=512", "./app"}, {{"SLURM_MEM_PER_NODE", "1G"}});
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().message,
              "--mem-per-cpu and --mem (or SLURM_MEM_PER_NODE) exclude each other; give one of "
              "them");
}

TEST(AllocationRequest, TimeLimitsMayBeUnlimited) {
    auto r = request({"-t", "UNLIMITED", "--time-min=30", "./app"}).value();
    EXPECT_TRUE(r.unlimitedTime);
    EXPECT_EQ(r.timeLimitMin, std::nullopt);
    EXPECT_EQ(r.timeMinMin, 30u);
    EXPECT_EQ(request({"--time-min=INFINITE", "./app"}).value().timeMinMin, std::nullopt);
    auto bad = request({"--time-min=x", "./app"});
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("--time-min 'x': expected minutes"), std::string::npos);
}

TEST(AllocationRequest, TextSettingsPassAsWritten) {
    auto r = request({"-d", "afterok:1", "--comment=c", "--wckey=w", "-L", "lic:1", "-D", "/tmp",
                      "./app"})
                 .value();
    EXPECT_EQ(r.dependency, "afterok:1");
    EXPECT_EQ(r.comment, "c");
    EXPECT_EQ(r.wckey, "w");
    EXPECT_EQ(r.licenses, "lic:1");
    EXPECT_EQ(r.workDir, "/tmp");
    EXPECT_EQ(r.name, "app");
}

TEST(AllocationRequest, PlacementNodesJoinTheUsers) {
    AllocationShape shape;
    shape.namedNodes = {"n2", "n5"};
    shape.namedBy = "--host";
    shape.excludedNodes = {"n9"};
    auto r = request({"-w", "n[1-2]", "-x", "n8", "./app"}, {}, shape).value();
    EXPECT_EQ(r.requiredNodes, (std::vector<std::string>{"n1", "n2", "n5"}));
    EXPECT_EQ(r.excludedNodes, (std::vector<std::string>{"n8", "n9"}));
    auto clash = request({"-x", "n5", "./app"}, {}, shape);
    ASSERT_FALSE(clash);
    EXPECT_EQ(clash.error().message,
              "node 'n5' is both excluded by -x and named by --host; drop it from one of them");
}

TEST(AllocationRequest, SharingAndFlags) {
    EXPECT_EQ(request({"--exclusive=user", "./app"}).value().sharing,
              AllocationRequest::Sharing::ExclusiveUser);
    EXPECT_EQ(request({"--exclusive=mcs", "./app"}).value().sharing,
              AllocationRequest::Sharing::ExclusiveMcs);
    EXPECT_EQ(request({"-s", "./app"}).value().sharing, AllocationRequest::Sharing::Oversubscribe);
    auto both = request({"--exclusive", "-s", "./app"});
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().message, "--exclusive and --oversubscribe exclude each other; give one");
    auto r =
        request({"-O", "--contiguous", "-I", "--use-min-nodes", "--spread-job", "-N", "2", "./app"})
            .value();
    EXPECT_TRUE(r.overcommit);
    EXPECT_TRUE(r.contiguous);
    EXPECT_TRUE(r.immediate);
    EXPECT_TRUE(r.useMinNodes);
    EXPECT_TRUE(r.spread);
    AllocationShape shape;
    shape.overcommit = true;
    auto plain = request({"./app"}, {}, shape).value();
    EXPECT_TRUE(plain.overcommit);
    EXPECT_FALSE(plain.contiguous);
    EXPECT_FALSE(plain.immediate);
    EXPECT_FALSE(plain.useMinNodes);
    EXPECT_FALSE(plain.spread);
}

// --overbook when srun asks Slurm for the job (issue 28): the processes
// fit the pool's CPUs, or the job is every node of the pool, whole.
TEST(OverbookOverPool, AsksForWhatSpreadsTheProcessesOverThePool) {
    const std::vector<std::pair<std::string, int>> pool = {{"n2", 2}, {"n3", 2}, {"n4", 2}};
    struct Row {
        const char *what;
        int tasks;
        bool overcommit;
        std::optional<int> nodes;
        std::vector<std::string> required;
        AllocationRequest::Sharing sharing;
    };
    const Row rows[] = {
        {"10 processes, 6 CPUs: every node, whole",
         10,
         true,
         3,
         {"n2", "n3", "n4"},
         AllocationRequest::Sharing::Exclusive},
        {"6 fit: no overbooking", 6, false, std::nullopt, {}, AllocationRequest::Sharing::Default},
        {"4 fit", 4, false, std::nullopt, {}, AllocationRequest::Sharing::Default},
    };
    for (const Row &row : rows) {
        AllocationRequest r;
        r.tasks = row.tasks;
        r.overcommit = true;
        auto ask = overbookOverPool(r, pool);
        EXPECT_EQ(ask.request.overcommit, row.overcommit) << row.what;
        EXPECT_EQ(ask.request.minNodes, row.nodes) << row.what;
        EXPECT_EQ(ask.request.maxNodes, row.nodes) << row.what;
        EXPECT_EQ(ask.request.requiredNodes, row.required) << row.what;
        EXPECT_EQ(ask.request.sharing, row.sharing) << row.what;
        EXPECT_FALSE(ask.note.empty()) << row.what;
    }
    AllocationRequest ten;
    ten.tasks = 10;
    EXPECT_EQ(overbookOverPool(ten, pool).note,
              "--overbook: 10 processes for the 6 CPUs of n[2-4]: asked Slurm for every one of "
              "those nodes, whole, to spread them evenly over all their CPUs");
}

TEST(OverbookOverPool, ANodeCountOrAnEmptyPoolChangesNothing) {
    AllocationRequest r;
    r.tasks = 10;
    r.overcommit = true;
    r.minNodes = 1;
    auto ask = overbookOverPool(r, {{"n2", 2}});
    EXPECT_EQ(ask.request, r);
    EXPECT_EQ(ask.note, "");
    r.minNodes.reset();
    EXPECT_EQ(overbookOverPool(r, {}).request, r);
}

TEST(OverbookOverPool, CpusPerTaskCount) {
    AllocationRequest r;
    r.tasks = 4;
    r.cpusPerTask = 2;
    r.overcommit = true;
    // 8 CPUs needed, 6 there: every node.
    EXPECT_EQ(overbookOverPool(r, {{"n2", 2}, {"n3", 2}, {"n4", 2}}).request.minNodes, 3);
}

namespace {

ParaStationRequest psi(bool exclusive, bool fromEnvironment, bool wait,
                       const std::string &exclusiveBy = "PSI_EXCLUSIVE") {
    ParaStationRequest ps;
    ps.exclusive = exclusive;
    ps.fromEnvironment = fromEnvironment;
    ps.wait = wait;
    ps.sources.exclusive = exclusiveBy;
    return ps;
}

} // namespace

// Seed 004: PSI_EXCLUSIVE takes only nodes no other job uses, held for the
// job: Slurm's --exclusive when srun asks for the job.
TEST(ParaStationQueueRules, ExclusiveAsksForNodesNoOtherJobUses) {
    using Sharing = AllocationRequest::Sharing;
    auto ask = parastationQueueRules(AllocationRequest{}, psi(true, true, true));
    ASSERT_TRUE(ask.ok());
    EXPECT_EQ(ask->request.sharing, Sharing::Exclusive);
    EXPECT_FALSE(ask->request.immediate);
    EXPECT_EQ(ask->notes, std::vector<std::string>{"PSI_EXCLUSIVE: asked Slurm for nodes no "
                                                   "other job uses, held for this job "
                                                   "(--exclusive)"});
    // Overbooking enforces it, and says so.
    ask = parastationQueueRules(AllocationRequest{}, psi(true, false, false, "--overbook"));
    ASSERT_TRUE(ask.ok());
    EXPECT_EQ(ask->request.sharing, Sharing::Exclusive);
    EXPECT_EQ(ask->notes.at(0).rfind("--overbook (which enforces PSI_EXCLUSIVE): ", 0), 0u);
    // A user's --exclusive=user is kept; --oversubscribe contradicts it.
    AllocationRequest user;
    user.sharing = Sharing::ExclusiveUser;
    ask = parastationQueueRules(user, psi(true, true, true));
    ASSERT_TRUE(ask.ok());
    EXPECT_EQ(ask->request.sharing, Sharing::ExclusiveUser);
    AllocationRequest shared;
    shared.sharing = Sharing::Oversubscribe;
    auto refused = parastationQueueRules(shared, psi(true, true, true));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().message,
              "PSI_EXCLUSIVE asks for nodes no other job uses, and --oversubscribe lets other "
              "jobs onto them: give one of them");
    // Not exclusive: the sharing is the user's.
    ask = parastationQueueRules(shared, psi(false, true, true));
    ASSERT_TRUE(ask.ok());
    EXPECT_EQ(ask->request.sharing, Sharing::Oversubscribe);
}

// Seed 004: without PSI_WAIT a request that cannot start now fails at
// once (srun's --immediate); with it, it waits in the queue as srun does.
// Only ParaStation's environment brings that rule; stepmap's options keep
// srun's.
TEST(ParaStationQueueRules, WithoutPsiWaitTheJobMustStartNow) {
    struct Row {
        bool fromEnvironment, wait, userImmediate;
        bool immediate, forPsi;
    } rows[] = {
        {true, false, false, true, true},    // PSI_* without PSI_WAIT
        {true, true, false, false, false},   // PSI_WAIT: waits
        {false, false, false, false, false}, // options only: srun's rule
        {true, false, true, true, false},    // the user's --immediate stays theirs
    };
    for (const Row &row : rows) {
        AllocationRequest r;
        r.immediate = row.userImmediate;
        auto ask = parastationQueueRules(r, psi(false, row.fromEnvironment, row.wait));
        ASSERT_TRUE(ask.ok());
        EXPECT_EQ(ask->request.immediate, row.immediate) << row.fromEnvironment << row.wait;
        EXPECT_EQ(ask->immediateForPsi, row.forPsi) << row.fromEnvironment << row.wait;
        EXPECT_EQ(ask->notes.size(), row.forPsi ? 1u : 0u);
    }
}
