// srun's plan as a chain of values (srun/plan_step.hpp): each stage on
// tables of srun invocations, files read through a fake reader.

#include "srun/plan_step.hpp"

#include "options.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {
namespace {

SrunCommandLine scan(const std::vector<std::string> &args) {
    return scanSrunCommandLine(args, optionArity());
}

StepmapOptions options(const std::vector<std::string> &args) {
    return mergeOptions(scan(args).stepmapOptions, {});
}

Expected<std::string> readFile(const std::string &path) {
    static const std::map<std::string, std::string> files = {
        {"two.conf", "0-1 ./a\n2-4 ./b\n"},
        {"star.conf", "* ./a\n"},
        {"hosts", "n1\nn2\n"},
    };
    auto it = files.find(path);
    if (it == files.end())
        return UserError{"No such file or directory"};
    return it->second;
}

Allocation nodes(std::vector<std::pair<std::string, int>> list) {
    Allocation a;
    for (auto &[name, cpus] : list)
        a.nodes.push_back(AllocatedNode{name, cpus});
    return a;
}

SitePolicy siteWithDefaults() {
    SitePolicy policy;
    policy.path = "/etc/stepmap.yaml";
    policy.mapBy = "core";
    policy.bindTo = "core";
    return policy;
}

TEST(WrittenRequest, SiteDefaultsFillWhatTheUserLeftOpen) {
    struct Case {
        std::vector<std::string> args;
        EnvironmentValues psi;
        std::vector<std::string> defaults;
        std::optional<std::string> mapBy;
    };
    const Case cases[] = {
        {{"--host", "n1", "./app"}, {}, {"--map-by core", "--bind-to core"}, "core"},
        {{"--map-by", "node", "./app"}, {}, {"--bind-to core"}, "node"},
        // ParaStation placement decides the mapping itself.
        {{"--overbook", "./app"}, {}, {}, std::nullopt},
        {{"./app"}, {{"PSI_NODES", "0"}}, {}, std::nullopt},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.args[0]);
        const WrittenRequest written = writtenRequest(options(c.args), c.psi, siteWithDefaults());
        EXPECT_EQ(written.siteDefaults, c.defaults);
        EXPECT_EQ(written.options.apps.at(0).mapBy, c.mapBy);
    }
}

TEST(BuildStepRequest, Table) {
    struct Case {
        std::string what;
        std::optional<std::string> ntasks;
        std::optional<std::string> multiProg;
        std::optional<int> np;   // the request's, when it succeeds
        std::vector<int> appNps; // its application contexts
        std::string error;       // empty: succeeds
    };
    const Case cases[] = {
        {"no -n", std::nullopt, std::nullopt, std::nullopt, {}, ""},
        {"-n 4", "4", std::nullopt, 4, {}, ""},
        {"bad -n",
         "x",
         std::nullopt,
         std::nullopt,
         {},
         "-n/--ntasks: process count 'x': expected a positive number, e.g. -n 8"},
        {"--multi-prog", std::nullopt, "two.conf", std::nullopt, {2, 3}, ""},
        {"--multi-prog and its -n", "5", "two.conf", std::nullopt, {2, 3}, ""},
        {"--multi-prog and another -n",
         "4",
         "two.conf",
         std::nullopt,
         {},
         "-n 4 differs from the 5 ranks of --multi-prog file 'two.conf'; give -n 5"},
        {"unreadable --multi-prog file",
         std::nullopt,
         "gone.conf",
         std::nullopt,
         {},
         "cannot read --multi-prog's file 'gone.conf': No such file or directory"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        const StepmapOptions given = options({"--host", "n1", "./app"});
        const StepRequestInput input{c.ntasks, c.multiProg, given, {}};
        auto built = buildStepRequest(writtenRequest(given, {}, SitePolicy{}), input, readFile);
        if (!c.error.empty()) {
            ASSERT_FALSE(built);
            EXPECT_EQ(built.error().message, c.error);
            continue;
        }
        ASSERT_TRUE(built) << built.error().message;
        EXPECT_EQ(built->request.np, c.np);
        std::vector<int> appNps;
        for (const AppRequest &app : built->request.apps)
            appNps.push_back(app.np.value_or(0));
        EXPECT_EQ(appNps, c.appNps);
        EXPECT_TRUE(built->request.host.has_value());
    }
}

TEST(BuildStepRequest, NotesPsiVariablesAnOptionOverrode) {
    const StepmapOptions given = options({"--host", "n1", "./app"});
    const StepRequestInput input{std::nullopt, std::nullopt, given, {{"PSI_HOSTS", "n2"}}};
    auto built = buildStepRequest(writtenRequest(given, input.psi, SitePolicy{}), input, readFile);
    ASSERT_TRUE(built) << built.error().message;
    EXPECT_FALSE(built->psiNotes.empty());
}

TEST(SrunTaskCount, Table) {
    struct Case {
        std::string what;
        bool bySitePolicy;
        std::optional<int> np;
        SrunEnvironment environment;
        bool applies;
        std::optional<int> jobTasks;
        std::string error;
    };
    const Case cases[] = {
        {"stepmap's options",
         false,
         std::nullopt,
         {{"SLURM_NTASKS", "4"}},
         false,
         std::nullopt,
         ""},
        {"the site's policy, -n given", true, 3, {{"SLURM_NTASKS", "4"}}, false, std::nullopt, ""},
        {"the site's policy", true, std::nullopt, {}, true, std::nullopt, ""},
        {"the job's SLURM_NTASKS", true, std::nullopt, {{"SLURM_NTASKS", "4"}}, true, 4, ""},
        {"SLURM_NPROCS", true, std::nullopt, {{"SLURM_NPROCS", "6"}}, true, 6, ""},
        {"SLURM_NTASKS first",
         true,
         std::nullopt,
         {{"SLURM_NTASKS", "4"}, {"SLURM_NPROCS", "x"}},
         true,
         4,
         ""},
        {"a bad SLURM_NTASKS",
         true,
         std::nullopt,
         {{"SLURM_NTASKS", "0"}},
         false,
         std::nullopt,
         "SLURM_NTASKS=0: process count '0': expected a positive number, e.g. -n 8"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        PlanRequest request;
        request.np = c.np;
        auto count = srunTaskCount(request, c.bySitePolicy, c.environment);
        if (!c.error.empty()) {
            ASSERT_FALSE(count);
            EXPECT_EQ(count.error().message, c.error);
            continue;
        }
        ASSERT_TRUE(count) << count.error().message;
        EXPECT_EQ(count->applies, c.applies);
        EXPECT_EQ(count->jobTasks, c.jobTasks);
    }
}

TEST(StepNodeRequest, ReadsMinusNWAndX) {
    auto req = stepNodeRequest(scan({"-N", "2", "-w", "n[1-3]", "-x", "n2", "./app"}), readFile);
    ASSERT_TRUE(req) << req.error().message;
    ASSERT_TRUE(req->count);
    EXPECT_EQ(req->count->min, 2u);
    EXPECT_EQ(req->include, (std::vector<std::string>{"n1", "n2", "n3"}));
    EXPECT_EQ(req->exclude, (std::vector<std::string>{"n2"}));
    EXPECT_EQ(req->includeOption, "-w");
    EXPECT_FALSE(stepNodeRequest(scan({"./app"}), readFile)->any());
    EXPECT_FALSE(stepNodeRequest(scan({"-N", "0", "./app"}), readFile));
}

TEST(SrunSettings, CpusPerTaskAndTasksPerNodeAsWritten) {
    const std::string var = "SLURM_CPUS_PER_TASK";
    EXPECT_EQ(cpusPerTask(scan({"-c", "2", "./app"}), {{var, "4"}}, var),
              (CpusPerTask{"2", "-c 2"}));
    EXPECT_EQ(cpusPerTask(scan({"--cpus-per-task=3", "./app"}), {}, var),
              (CpusPerTask{"3", "--cpus-per-task 3"}));
    EXPECT_EQ(cpusPerTask(scan({"./app"}), {{var, "4"}}, var),
              (CpusPerTask{"4", "SLURM_CPUS_PER_TASK=4"}));
    EXPECT_EQ(cpusPerTask(scan({"./app"}), {}, var), std::nullopt);
    EXPECT_EQ(tasksPerNode(scan({"--ntasks-per-node=2", "./app"})),
              (WrittenSetting{"--ntasks-per-node", "2"}));
    EXPECT_EQ(tasksPerNode(scan({"./app"})), std::nullopt);
}

TEST(PlanStep, Table) {
    struct Case {
        std::string what;
        std::optional<int> np;
        StepRules rules;
        SitePolicy policy;
        std::vector<std::string> hosts; // host of each rank; empty: error
        std::string error;
    };
    SitePolicy noOverbook;
    noOverbook.path = "/etc/stepmap.yaml";
    noOverbook.allowOverbook = false;
    const Case cases[] = {
        {"by slot", 4, {}, {}, {"n1", "n1", "n2", "n2"}, ""},
        {"-c 2 halves the slots",
         2,
         {CpusPerTask{"2", "-c 2"}, std::nullopt, std::nullopt},
         {},
         {"n1", "n2"},
         ""},
        {"--ntasks-per-node agrees",
         4,
         {std::nullopt, WrittenSetting{"--ntasks-per-node", "2"}, std::nullopt},
         {},
         {"n1", "n1", "n2", "n2"},
         ""},
        {"--ntasks-per-node disagrees",
         3,
         {std::nullopt, WrittenSetting{"--ntasks-per-node", "1"}, std::nullopt},
         {},
         {},
         "--ntasks-per-node 1 disagrees with the plan, which puts 2 ranks on n1; drop "
         "--ntasks-per-node or change the placement options"},
        {"the site forbids overbooking",
         2,
         {std::nullopt, std::nullopt, "--overbook"},
         noOverbook,
         {},
         "--overbook: this cluster does not allow overbooking (allow.overbook: false in "
         "/etc/stepmap.yaml); drop it and run at most one rank per CPU"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        PlanRequest request;
        request.np = c.np;
        auto planned = planStep(request, nodes({{"n1", 2}, {"n2", 2}}), c.rules, c.policy);
        if (!c.error.empty()) {
            ASSERT_FALSE(planned);
            EXPECT_EQ(planned.error().message, c.error);
            continue;
        }
        ASSERT_TRUE(planned) << planned.error().message;
        std::vector<std::string> hosts;
        for (const RankPlacement &rank : planned->plan.ranks)
            hosts.push_back(planned->plan.nodes.at(rank.node).name);
        EXPECT_EQ(hosts, c.hosts);
        EXPECT_EQ(planned->request.np, c.np);
    }
}

TEST(PlanStep, KeepsTheDividedAllocationForTheMap) {
    PlanRequest request;
    request.np = 2;
    auto planned = planStep(request, nodes({{"n1", 4}, {"n2", 1}}),
                            {CpusPerTask{"2", "-c 2"}, std::nullopt, std::nullopt}, {});
    ASSERT_TRUE(planned) << planned.error().message;
    ASSERT_EQ(planned->allocation.nodes.size(), 1u);
    EXPECT_EQ(planned->allocation.nodes[0].slots, 2);
}

TEST(CheckStepAgainstPlan, Table) {
    LaunchPlan plan;
    plan.nodes = {PlannedNode{"n1", 2}, PlannedNode{"n2", 2}};
    plan.ranks = {RankPlacement{0}, RankPlacement{0}, RankPlacement{1}};
    struct Case {
        CreatedStep step;
        std::string error;
    };
    const Case cases[] = {
        {{7, 0, 3, 2}, ""},
        {{7, 1, 4, 2},
         "Slurm created step 7.1 with 4 tasks on 2 nodes, but the plan has 3 tasks on 2 nodes; "
         "not starting a layout that differs from the plan (is -n consistent with "
         "--host/--hostfile?)"},
        {{7, 2, 3, 1},
         "Slurm created step 7.2 with 3 tasks on 1 nodes, but the plan has 3 tasks on 2 nodes; "
         "not starting a layout that differs from the plan (is -n consistent with "
         "--host/--hostfile?)"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.step.stepId);
        const Expected<void> matches = checkStepAgainstPlan(plan, c.step);
        EXPECT_EQ(matches.ok(), c.error.empty());
        if (!matches) {
            EXPECT_EQ(matches.error().message, c.error);
        }
    }
}

} // namespace
} // namespace stepmap::plugin
