// What the srun side reads from srun's environment and writes to it, as
// values (srun/step_environment.hpp).

#include "srun/step_environment.hpp"

#include "job_variables.hpp"
#include "options.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace stepmap::plugin {
namespace {

SrunCommandLine scan(const std::vector<std::string> &args) {
    return scanSrunCommandLine(args, optionArity());
}

const EnvironmentChanges kUnsetJobNodes = {{"SLURM_JOB_NODELIST", std::nullopt},
                                           {"SLURM_JOB_CPUS_PER_NODE", std::nullopt}};

TEST(JobToRunIn, Table) {
    const SrunEnvironment inJob7 = {{"SLURM_JOB_ID", "7"},
                                    {"SLURM_JOB_NODELIST", "n[1-2]"},
                                    {"SLURM_JOB_CPUS_PER_NODE", "4(x2)"}};
    struct Case {
        std::string what;
        std::vector<std::string> args;
        SrunEnvironment environment;
        JobToRunIn expected;
    };
    const Case cases[] = {
        {"no allocation", {"./app"}, {}, {}},
        {"salloc's job", {"./app"}, inJob7, {"7", "n[1-2]", "4(x2)", {}}},
        {"--jobid without a job",
         {"--jobid=9", "./app"},
         {},
         {"9", std::nullopt, std::nullopt, {}}},
        {"--jobid of the same job",
         {"--jobid", "7", "./app"},
         inJob7,
         {"7", "n[1-2]", "4(x2)", {}}},
        {"--jobid of another job",
         {"--jobid=9", "./app"},
         inJob7,
         {"9", std::nullopt, std::nullopt, kUnsetJobNodes}},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        EXPECT_EQ(jobToRunIn(scan(c.args), c.environment), c.expected);
    }
}

TEST(AllocationOfJobVariables, ReadsOrNamesTheBadValue) {
    auto a = allocationOfJobVariables({"7", "n[1-2]", "4,2", {}});
    ASSERT_TRUE(a) << a.error().message;
    ASSERT_EQ(a->nodes.size(), 2u);
    EXPECT_EQ(a->nodes[1].slots, 2);
    auto bad = allocationOfJobVariables({"7", "n[1-2]", "4", {}});
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message.rfind("cannot read the job's allocation: ", 0), 0u);
}

TEST(AllocationOfLookedUpJob, SetsTheJobsVariables) {
    auto a = allocationOfLookedUpJob("9", "n3", "8");
    ASSERT_TRUE(a) << a.error().message;
    EXPECT_EQ(a->allocation.nodes.at(0).name, "n3");
    EXPECT_EQ(a->changes,
              (EnvironmentChanges{{"SLURM_JOB_NODELIST", "n3"}, {"SLURM_JOB_CPUS_PER_NODE", "8"}}));
    auto bad = allocationOfLookedUpJob("9", "n3", "x");
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message.rfind("cannot read job 9's allocation: ", 0), 0u);
}

LaunchPlan twoRanks(bool oversubscribed) {
    LaunchPlan plan;
    plan.nodes = {PlannedNode{"n1", 1}, PlannedNode{"n2", 1}};
    plan.ranks = {RankPlacement{0}, RankPlacement{1}};
    plan.oversubscribed = oversubscribed;
    return plan;
}

TEST(HostfileText, OneLinePerRankInRankOrder) {
    LaunchPlan plan;
    plan.nodes = {PlannedNode{"n2", 2}, PlannedNode{"n1", 1}};
    plan.ranks = {RankPlacement{0}, RankPlacement{1}, RankPlacement{0}};
    EXPECT_EQ(hostfileText(plan), "n2\nn1\nn2\n");
    EXPECT_EQ(hostfileText(LaunchPlan{}), "");
}

TEST(PlanEnvironment, Table) {
    struct Case {
        std::string what;
        bool oversubscribed;
        std::optional<int> tpp;
        std::vector<std::string> extra; // set after the fixed five, before the plan
        bool psiEnvironment = false, psiWait = false;
    };
    const Case cases[] = {
        {"plain", false, std::nullopt, {}},
        {"oversubscribed", true, std::nullopt, {"SLURM_OVERCOMMIT=1"}},
        {"--tpp 1", false, 1, {}},
        {"--tpp 4", true, 4, {"SLURM_OVERCOMMIT=1", "SLURM_CPUS_PER_TASK=4"}},
        // ParaStation's queue rule for the step: no PSI_WAIT, no waiting.
        {"PSI_* without PSI_WAIT", false, std::nullopt, {"SLURM_IMMEDIATE=1 (unless set)"}, true},
        {"PSI_WAIT", false, std::nullopt, {}, true, true},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        PlanRequest request;
        request.parastation.threadsPerProcess = c.tpp;
        request.parastation.fromEnvironment = c.psiEnvironment;
        request.parastation.wait = c.psiWait;
        const LaunchPlan plan = twoRanks(c.oversubscribed);
        auto changes = planEnvironment(plan, request, "/proc/self/fd/5", "SLURM_CPUS_PER_TASK");
        ASSERT_TRUE(changes) << changes.error().message;
        std::vector<std::string> written;
        for (const EnvironmentChange &change : *changes)
            written.push_back(change.name + "=" + change.value.value_or("(unset)") +
                              (change.overwrite ? "" : " (unless set)"));
        std::vector<std::string> expected = {
            "SLURM_HOSTFILE=/proc/self/fd/5", "SLURM_DISTRIBUTION=arbitrary", "SLURM_MPI_TYPE=none",
            "SLURM_CPU_BIND=none", "SLURM_KILL_BAD_EXIT=1 (unless set)"};
        expected.insert(expected.end(), c.extra.begin(), c.extra.end());
        expected.push_back(std::string(kPlanVariable) + "=" + encodePlan(plan));
        EXPECT_EQ(written, expected);
    }
}

TEST(FaultToleranceEnvironment, UlfmKeepsTheStepGoingAndTellsOpenMpiAndTheServers) {
    auto none = faultToleranceEnvironment(std::nullopt, scan({"true"}));
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
    auto off = faultToleranceEnvironment(std::string("none"), scan({"true"}));
    ASSERT_TRUE(off);
    EXPECT_TRUE(off->empty());
    auto bad = faultToleranceEnvironment(std::string("yes"), scan({"true"}));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message.rfind("--with-ft=yes is not a fault tolerance mode", 0), 0u);
    for (const auto &args :
         {std::vector<std::string>{"true"}, std::vector<std::string>{"-K0", "true"},
          std::vector<std::string>{"--kill-on-bad-exit=0", "true"}}) {
        auto ulfm = faultToleranceEnvironment(std::string("ulfm"), scan(args));
        ASSERT_TRUE(ulfm) << ulfm.error().message;
        const EnvironmentChanges expected = {{"SLURM_KILL_BAD_EXIT", "0"},
                                             {"OMPI_MCA_mpi_ft_enable", "1", false},
                                             {kFaultToleranceVariable, "ulfm"}};
        EXPECT_EQ(*ulfm, expected);
    }
    for (const auto &[args, written] :
         {std::pair{std::vector<std::string>{"-K", "true"}, std::string("-K ends")},
          std::pair{std::vector<std::string>{"-K1", "true"}, std::string("-K1 ends")},
          std::pair{std::vector<std::string>{"--kill-on-bad-exit=1", "true"},
                    std::string("--kill-on-bad-exit=1 ends")}}) {
        auto refused = faultToleranceEnvironment(std::string("ulfm"), scan(args));
        ASSERT_FALSE(refused) << written;
        EXPECT_NE(refused.error().message.find(written), std::string::npos)
            << refused.error().message;
    }
}

TEST(ApplyToEnvironment, SetsKeepsAndUnsetsInOrder) {
    setenv("STEPMAP_TEST_KEPT", "mine", 1);
    setenv("STEPMAP_TEST_GONE", "x", 1);
    applyToEnvironment({{"STEPMAP_TEST_SET", "1"},
                        {"STEPMAP_TEST_KEPT", "theirs", false},
                        {"STEPMAP_TEST_GONE", std::nullopt},
                        {"STEPMAP_TEST_SET", "2"}});
    const SrunEnvironment seen = readSrunEnvironment(
        {"STEPMAP_TEST_SET", "STEPMAP_TEST_KEPT", "STEPMAP_TEST_GONE", "STEPMAP_TEST_NEVER"});
    EXPECT_EQ(seen, (SrunEnvironment{{"STEPMAP_TEST_SET", "2"}, {"STEPMAP_TEST_KEPT", "mine"}}));
}

} // namespace
} // namespace stepmap::plugin
