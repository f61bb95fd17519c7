// Where a rank's MPI_Comm_spawn goes inside the job, and the srun that
// starts it: free slots first, host filters of the allocation, mpirun's
// errors (spawn_command.hpp).

#include "srun/spawn_command.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

// n1-n3, two slots each; the spawning step's rank on n1.
SpawnContext threeNodes() {
    SpawnContext c;
    c.jobId = 42;
    c.allocation.nodes = {{"n1", 2, nullptr}, {"n2", 2, nullptr}, {"n3", 2, nullptr}};
    c.used = {{"n1", 1}};
    c.srun = "/usr/bin/srun";
    c.readFile = [](const std::string &path) -> Expected<std::string> {
        if (path == "hosts.txt")
            return std::string("n3 slots=1\nn2\n");
        return UserError{"no such file"};
    };
    return c;
}

wire::SpawnRequestMsg request(std::uint32_t n,
                              std::vector<std::pair<std::string, std::string>> info = {}) {
    wire::SpawnRequestMsg r;
    wire::SpawnApp app;
    app.cmd = "./worker";
    app.argv = {"./worker", "-x", "1"};
    app.env = {"OMPI_PARENT_PORT=abc"};
    app.cwd = "/home/u";
    app.maxprocs = n;
    r.apps.push_back(std::move(app));
    r.info = std::move(info); // the job's keys
    return r;
}

std::string hostArgument(const SpawnCommand &c) {
    for (const auto &a : c.argv)
        if (a.rfind("--host=", 0) == 0)
            return a.substr(7);
    return "";
}

bool has(const SpawnCommand &c, const std::string &arg) {
    return std::find(c.argv.begin(), c.argv.end(), arg) != c.argv.end();
}

} // namespace

TEST(SpawnCommand, ChildrenGoToTheFreeSlotsOfTheJobInItsOrder) {
    struct Case {
        std::uint32_t n;
        std::vector<std::pair<std::string, std::string>> info;
        std::string hosts;
    } cases[] = {
        {1, {}, "n1:1,n2:2,n3:2"},
        {5, {}, "n1:1,n2:2,n3:2"},
        {2, {{"host", "n3"}}, "n3:2"},
        {1, {{"host", "n3:1,n1"}}, "n1:1,n3:1"},       // allocation order, counts cap slots
        {3, {{"host", "!^n1"}}, "n2:2,n3:2"},          // PRRTE's exclusion form
        {2, {{"hostfile", "hosts.txt"}}, "n2:2,n3:1"}, // slots= caps as well
    };
    for (const auto &c : cases) {
        auto command = spawnCommand(request(c.n, c.info), threeNodes());
        ASSERT_TRUE(command) << c.hosts << ": " << command.error().message;
        EXPECT_EQ(hostArgument(*command), c.hosts);
    }
}

TEST(SpawnCommand, IsAnOverlappingSrunOfTheJobWithTheProgramItsArgumentsAndDirectory) {
    auto command = spawnCommand(request(2), threeNodes());
    ASSERT_TRUE(command);
    EXPECT_EQ(command->argv, (std::vector<std::string>{"/usr/bin/srun", "--jobid=42", "--overlap",
                                                       "--ntasks=2", "--host=n1:1,n2:2,n3:2",
                                                       "--chdir=/home/u", "./worker", "-x", "1"}));
    EXPECT_EQ(command->environment, (std::vector<std::string>{"OMPI_PARENT_PORT=abc"}));
    EXPECT_EQ(command->summary, "2 x ./worker on n1:1,n2:2,n3:2");
}

TEST(SpawnCommand, PlacementKeysBecomeStepmapsOptions) {
    auto command = spawnCommand(
        request(
            2,
            {{"map-by", "node"}, {"rank-by", "slot"}, {"bind-to", "core"}, {"wdir", "/scratch"}}),
        threeNodes());
    ASSERT_TRUE(command);
    EXPECT_TRUE(has(*command, "--map-by=node"));
    EXPECT_TRUE(has(*command, "--rank-by=slot"));
    EXPECT_TRUE(has(*command, "--bind-to=core"));
    EXPECT_TRUE(has(*command, "--chdir=/scratch"));
    auto ppr = spawnCommand(request(2, {{"ppr", "1:node"}}), threeNodes());
    ASSERT_TRUE(ppr);
    EXPECT_TRUE(has(*ppr, "--map-by=ppr:1:node"));
    // Open MPI 4.1's npernode 2 (ppr "2:n").
    auto npernode = spawnCommand(request(2, {{"ppr", "2:n"}}), threeNodes());
    ASSERT_TRUE(npernode);
    EXPECT_TRUE(has(*npernode, "--map-by=ppr:2:node"));
}

TEST(SpawnCommand, OversubscribingSharesEverySlotWhenNoneIsFree) {
    auto context = threeNodes();
    context.used = {{"n1", 2}, {"n2", 2}, {"n3", 2}};
    auto refused = spawnCommand(request(1), context);
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message,
              "1 processes but 0 of the allocation's 6 slots are free (the job's running steps "
              "use the others); spawn at most 0, or allow oversubscription (MPI_Info key map_by, "
              "value :OVERSUBSCRIBE)");
    auto shared = spawnCommand(request(8, {{"map-by", "slot:OVERSUBSCRIBE"}}), context);
    ASSERT_TRUE(shared) << shared.error().message;
    EXPECT_EQ(hostArgument(*shared), "n1:2,n2:2,n3:2");
    EXPECT_TRUE(has(*shared, "--map-by=slot:OVERSUBSCRIBE"));
}

TEST(SpawnCommand, BadRequestsAreRefusedSayingWhy) {
    struct Case {
        wire::SpawnRequestMsg request;
        std::string error;
    } cases[] = {
        {request(1, {{"host", "n1,n9,n8"}}),
         "At least one of the requested hosts is not included in the current allocation: n9,n8 "
         "(a spawn runs inside the job's nodes; allocate the job with them, e.g. salloc -w ...)"},
        {request(1, {{"add-host", "n9"}}),
         "the spawn's add-host asks for nodes outside the job: Slurm fixed the job's nodes when "
         "it was allocated, so allocate it with them (salloc -w ...) and name them with host"},
        {request(1, {{"add-hostfile", "f"}}),
         "the spawn's add-hostfile asks for nodes outside the job: Slurm fixed the job's nodes "
         "when it was allocated, so allocate it with them (salloc -w ...) and name them with "
         "host"},
        {request(1, {{"hostfile", "missing"}}), "the spawn's hostfile missing: no such file"},
        {request(0), "a program of the spawn asks for no processes"},
        {request(3, {{"host", "n3"}}),
         "3 processes but 2 of the filtered nodes' 2 slots are free (the job's running steps use "
         "the others); spawn at most 2, or allow oversubscription (MPI_Info key map_by, value "
         ":OVERSUBSCRIBE)"},
    };
    for (const auto &c : cases) {
        auto command = spawnCommand(c.request, threeNodes());
        ASSERT_FALSE(command) << c.error;
        EXPECT_EQ(command.error().message, c.error);
    }
    auto badEnv = request(1);
    badEnv.apps[0].env = {"NOEQUALS"};
    auto refused = spawnCommand(badEnv, threeNodes());
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message, "the spawn's environment line 'NOEQUALS' is not NAME=VALUE");
}

// MPI_Comm_spawn_multiple: one step of the programs in order, through
// srun's --multi-prog file; one environment, the first value of a name.
TEST(SpawnCommand, SeveralProgramsAreOneStepThroughAMultiProgFile) {
    auto r = request(2);
    wire::SpawnApp second;
    second.cmd = "./other";
    second.argv = {"./other", "--fast"};
    second.env = {"OMPI_PARENT_PORT=xyz", "ONLY_OTHER=1"};
    second.maxprocs = 3;
    r.apps.push_back(second);
    auto command = spawnCommand(r, threeNodes());
    ASSERT_TRUE(command) << command.error().message;
    EXPECT_TRUE(has(*command, "--ntasks=5"));
    EXPECT_EQ(command->argv.back(), kMultiProgFile);
    EXPECT_EQ(command->argv[command->argv.size() - 2], "--multi-prog");
    EXPECT_EQ(command->multiProg, "0-1 ./worker -x 1\n2-4 ./other --fast\n");
    EXPECT_EQ(command->environment,
              (std::vector<std::string>{"OMPI_PARENT_PORT=abc", "ONLY_OTHER=1"}));
    EXPECT_EQ(command->summary, "2 x ./worker + 3 x ./other on n1:1,n2:2,n3:2");

    auto spaced = r;
    spaced.apps[1].argv = {"./other", "two words"};
    auto refused = spawnCommand(spaced, threeNodes());
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message,
              "program 1 of the spawn: 'two words': the programs and arguments of "
              "MPI_Comm_spawn_multiple cannot hold spaces, quotes, backslashes, % or #");
    auto hosts = r;
    hosts.apps[0].info = {{"host", "n2"}};
    hosts.apps[1].info = {{"host", "n3"}};
    auto differing = spawnCommand(hosts, threeNodes());
    ASSERT_FALSE(differing);
    EXPECT_EQ(differing.error().message,
              "the programs of the spawn name different hosts: stepmap places a spawn's programs "
              "over one set of hosts, so give each the same (or name it once, for the first)");
}

// Seed 000's parent-mapping: the children go where the caller's step's
// ranks are, as many on each node as it holds of the first N ranks.
TEST(SpawnCommand, ParentMappingPutsTheChildrenBesideTheCallersRanks) {
    auto context = threeNodes();
    context.spawnerNodes = {"n2", "n3", "n2"}; // the caller's step: 3 ranks
    auto mapped = spawnCommand(request(4, {{"parent-mapping", "true"}}), context);
    ASSERT_TRUE(mapped) << mapped.error().message;
    EXPECT_EQ(hostArgument(*mapped), "n2:3,n3:1"); // ranks 0,1,2,0 of the caller
    EXPECT_TRUE(has(*mapped, "--map-by=slot:OVERSUBSCRIBE"));
    auto off = spawnCommand(request(1, {{"parent-mapping", "false"}}), context);
    ASSERT_TRUE(off);
    EXPECT_EQ(hostArgument(*off), "n1:1,n2:2,n3:2");
    auto both = spawnCommand(request(1, {{"parent-mapping", "true"}, {"host", "n1"}}), context);
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().message,
              "the spawn's parent-mapping places the children itself: give it no host");
    auto bad = spawnCommand(request(1, {{"parent-mapping", "maybe"}}), context);
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, "the spawn's parent-mapping 'maybe': expected true or false");
}
