// ParaStation's memory binding in the task: which NUMA nodes hold a rank's
// CPUs (sysfs), and the MPOL_BIND policy the program then inherits.

#include "os/memory_binding.hpp"

#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

namespace stepmap {
namespace {

namespace fs = std::filesystem;

// A sysfs node directory: node<N>/cpulist for each entry, and the files
// beside them that are not nodes.
class FakeNodeDir : public ::testing::Test {
protected:
    void SetUp() override {
        char name[] = "/tmp/stepmap-numa-XXXXXX";
        ASSERT_NE(mkdtemp(name), nullptr);
        dir_ = name;
        node(0, "0-1,8");
        node(1, "2-3");
        node(2, ""); // memory only
        node(11, "4");
        std::ofstream(dir_ / "has_cpu") << "0-1,11\n";
        fs::create_directory(dir_ / "nodeX");
    }
    void TearDown() override { fs::remove_all(dir_); }
    void node(int n, const std::string &cpus) {
        fs::create_directory(dir_ / ("node" + std::to_string(n)));
        std::ofstream(dir_ / ("node" + std::to_string(n)) / "cpulist") << cpus << "\n";
    }
    fs::path dir_;
};

TEST_F(FakeNodeDir, TheNodesHoldingAnyOfTheCpus) {
    using Nodes = std::vector<std::uint32_t>;
    EXPECT_EQ(numaNodesOfCpus({1}, dir_).value(), Nodes{0});
    EXPECT_EQ(numaNodesOfCpus({8, 2}, dir_).value(), (Nodes{0, 1}));
    EXPECT_EQ(numaNodesOfCpus({4}, dir_).value(), Nodes{11}); // "node11" after "node2"
    EXPECT_EQ(numaNodesOfCpus({9}, dir_).value(), Nodes{});
}

TEST_F(FakeNodeDir, ABrokenCpulistIsNamed) {
    std::ofstream(dir_ / "node1" / "cpulist") << "2-x\n";
    auto nodes = numaNodesOfCpus({1}, dir_);
    ASSERT_FALSE(nodes);
    EXPECT_EQ(nodes.error().message.rfind((dir_ / "node1" / "cpulist").string() + ": ", 0), 0u)
        << nodes.error().message;
}

TEST(NumaNodes, AMissingDirectoryIsNamed) {
    auto nodes = numaNodesOfCpus({0}, "/nonexistent/node");
    ASSERT_FALSE(nodes);
    EXPECT_EQ(nodes.error().message.rfind("cannot list the NUMA nodes in /nonexistent/node: ", 0),
              0u);
}

// The machine's own first NUMA node: the thread that binds gets MPOL_BIND
// to it; another thread keeps its policy.
TEST(BindMemory, SetsTheThreadsPolicyToTheNodes) {
    auto nodes = numaNodesOfCpus({0});
    if (!nodes || nodes->empty())
        GTEST_SKIP() << "no NUMA node holds CPU 0 in /sys/devices/system/node";
    int mode = -1;
    unsigned long mask[16] = {};
    std::thread([&] {
        ASSERT_TRUE(bindMemoryToNodes(nodes.value()));
        ASSERT_EQ(syscall(SYS_get_mempolicy, &mode, mask, 1025, nullptr, 0), 0);
    }).join();
    EXPECT_EQ(mode, MPOL_BIND);
    const std::uint32_t first = nodes->front();
    EXPECT_TRUE(mask[first / 64] & (1UL << (first % 64)));
    int mine = -1;
    ASSERT_EQ(syscall(SYS_get_mempolicy, &mine, nullptr, 0, nullptr, 0), 0);
    EXPECT_EQ(mine, MPOL_DEFAULT);
    EXPECT_TRUE(bindMemoryToNodes({})); // nothing to bind: no change
}

} // namespace
} // namespace stepmap
