// srun_probe.hpp and slurm_allocation.hpp: what `make`, `update` and
// `check` ask srun to run, how they read its labelled output back, and
// which nodes they take from the allocation's environment.

#include "srun_probe.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "slurm_allocation.hpp"

namespace stepmap::tools {
namespace {

using Tasks = std::map<unsigned, std::string>;

std::string golden(const std::string &tree) {
    const char *dir = std::getenv("STEPMAP_SYSFS_FIXTURES");
    std::ifstream file(std::string(dir ? dir : "") + "/" + tree + ".yaml");
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

// `text` as srun --label prints task `task`'s lines.
std::string labelled(const std::string &label, const std::string &text) {
    std::string out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        out += label + ": " + line + "\n";
    return out;
}

TEST(SrunProbe, TheCommandProbesEachNodeOnceUnderItsSlurmName) {
    const ProbeTargets targets{"42", {"n1", "n2", "n4"}, "n[1-2,4]"};
    EXPECT_EQ(srunProbeCommand("srun", targets, "/opt/stepmap/bin/stepmap-profile"),
              (std::vector<std::string>{
                  "srun", "--nodes=3", "--ntasks=3", "--ntasks-per-node=1", "--nodelist=n[1-2,4]",
                  "--kill-on-bad-exit=1", "--label", "--overlap", "--mpi=none",
                  "/opt/stepmap/bin/stepmap-profile", "probe", "--name-from-slurmd"}));
}

TEST(SrunProbe, LabelledOutputIsSplitByTask) {
    EXPECT_EQ(splitLabeledOutput("0: a\n1: b\n0: c\n").value(), (Tasks{{0, "a\nc\n"}, {1, "b\n"}}));
    // srun pads labels to the width of the largest task number.
    EXPECT_EQ(splitLabeledOutput(" 3: x: y\n10: \n").value(), (Tasks{{3, "x: y\n"}, {10, "\n"}}));
    EXPECT_EQ(splitLabeledOutput("").value(), Tasks{});
    for (const char *bad : {"no label\n", "x: y\n", ": y\n", "-1: y\n"}) {
        EXPECT_EQ(splitLabeledOutput(bad).error().message,
                  "srun printed a line without a task label: '" +
                      std::string(bad).substr(0, std::string(bad).size() - 1) + "'");
    }
}

TEST(SrunProbe, ProbesAreCollectedInTheOrderOfTheNodes) {
    const ProbeTargets targets{"42", {"veth-node", "rdma-node"}, "veth-node,rdma-node"};
    const auto nodes =
        collectProbes(labelled("0", golden("rdma")) + labelled("1", golden("veth")), targets);
    ASSERT_TRUE(nodes.ok()) << nodes.error().message;
    ASSERT_EQ(nodes->size(), 2u);
    EXPECT_EQ((*nodes)[0].name, "veth-node");
    EXPECT_EQ((*nodes)[1].name, "rdma-node");
}

TEST(SrunProbe, WrongOrMissingProbesAreErrors) {
    const ProbeTargets targets{"42", {"rdma-node", "veth-node"}, "rdma-node,veth-node"};
    EXPECT_EQ(collectProbes(labelled("0", golden("rdma")), targets).error().message,
              "no profile came back from node 'veth-node'");
    EXPECT_EQ(collectProbes(labelled("0", golden("ethernet")), targets).error().message,
              "srun task 0: probed node 'ethernet-node', not one of rdma-node,veth-node");
    EXPECT_EQ(collectProbes(labelled("0", golden("rdma")) + labelled("1", golden("rdma")), targets)
                  .error()
                  .message,
              "srun task 1: node 'rdma-node' was probed twice");
    std::string broken = golden("rdma");
    broken.replace(broken.find("mtu: 2044"), 9, "mtu: big");
    EXPECT_EQ(collectProbes(labelled("0", broken), targets).error().message,
              "srun task 0:14: nodes[0].interfaces[0].mtu: 'big' is not a number");
    EXPECT_EQ(
        collectProbes(labelled("0", "format_version: 1\nnodes: []\n"), targets).error().message,
        "srun task 0: printed 0 nodes, not one");
}

// Sets the allocation's variables for one test and takes them away after.
class Allocation : public ::testing::Test {
protected:
    void TearDown() override {
        unsetenv("SLURM_JOB_ID");
        unsetenv("SLURM_JOB_NODELIST");
    }
    static void allocate(const char *jobId, const char *nodeList) {
        setenv("SLURM_JOB_ID", jobId, 1);
        setenv("SLURM_JOB_NODELIST", nodeList, 1);
    }
};

TEST_F(Allocation, OutsideAnAllocationNothingIsProbed) {
    unsetenv("SLURM_JOB_ID");
    EXPECT_EQ(probeTargets(std::nullopt).error().message,
              "not inside a Slurm allocation (no SLURM_JOB_ID); run it under salloc or sbatch");
}

TEST_F(Allocation, AllNodesOrThoseOfNodesInside) {
    allocate("7", "n[1-4]");
    const auto all = probeTargets(std::nullopt);
    ASSERT_TRUE(all.ok()) << all.error().message;
    EXPECT_EQ(all->nodes, (std::vector<std::string>{"n1", "n2", "n3", "n4"}));
    EXPECT_EQ(all->nodeList, "n[1-4]");
    const auto some = probeTargets("n4,n2,n4");
    ASSERT_TRUE(some.ok()) << some.error().message;
    EXPECT_EQ(some->nodes, (std::vector<std::string>{"n2", "n4"}));
    EXPECT_EQ(some->nodeList, "n[2,4]");
    EXPECT_EQ(probeTargets("n[3-5]").error().message,
              "--nodes 'n[3-5]': n5 is not in job 7 (n[1-4])");
}

TEST_F(Allocation, ABrokenNodeListIsNamed) {
    allocate("7", "n[4-1]");
    EXPECT_EQ(probeTargets(std::nullopt).error().message.substr(0, 20), "SLURM_JOB_NODELIST: ");
    allocate("7", "");
    EXPECT_EQ(probeTargets(std::nullopt).error().message, "SLURM_JOB_NODELIST is not set in job 7");
}

} // namespace
} // namespace stepmap::tools
