// The node's per-boot topology cache (node_cache.hpp): what root writes is
// served to a step, restricted to the step's cores; a cache from another
// boot, hwloc or hardware, or one that someone other than root could have
// written, is refused with the reason, never served.

#include "node_cache.hpp"
#include "step_topology.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace stepmap::topology {
namespace {

namespace fs = std::filesystem;

class NodeCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (geteuid() != 0)
            GTEST_SKIP() << "the cache is root's: these tests run as root";
        char templ[] = "/tmp/stepmap-cache-XXXXXX";
        ASSERT_NE(mkdtemp(templ), nullptr);
        dir_ = templ;
        chmod(dir_.c_str(), 0755);
    }
    void TearDown() override {
        if (!dir_.empty())
            fs::remove_all(dir_);
    }
    std::string path() const { return dir_ + "/" + kNodeTopologyCacheName; }
    void write(const std::string &text, mode_t mode = 0644) {
        {
            std::ofstream f(path(), std::ios::trunc);
            f << text;
        }
        chmod(path().c_str(), mode);
    }
    std::string xmlOf(const std::string &cacheText) {
        return cacheText.substr(cacheText.find("\nxml\n") + 5);
    }
    std::string read() {
        std::ifstream f(path());
        return {std::istreambuf_iterator<char>(f), {}};
    }
    std::string refusal() {
        auto r = readNodeTopologyCache(path());
        EXPECT_FALSE(r.ok());
        return r.ok() ? "" : r.error().message;
    }
    std::string dir_;
};

TEST_F(NodeCacheTest, WhatRootWroteIsServedAndRestrictedToTheStepsCores) {
    auto written = writeNodeTopologyCache(dir_);
    ASSERT_TRUE(written.ok()) << written.error().message;
    EXPECT_EQ(*written, path());
    struct stat st {};
    ASSERT_EQ(stat(path().c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0644u);
    auto xml = readNodeTopologyCache(path());
    ASSERT_TRUE(xml.ok()) << xml.error().message;
    auto step = loadStepTopologyFromMachineXml("0", *xml);
    ASSERT_TRUE(step.ok()) << step.error().message;
    // The same step as hwloc's own discovery gives.
    auto live = loadStepTopology("0");
    ASSERT_TRUE(live.ok());
    EXPECT_EQ(bitmapListString(step->cpuset.get()), bitmapListString(live->cpuset.get()));
    EXPECT_EQ(hwloc_get_nbobjs_by_type(step->topology.get(), HWLOC_OBJ_PU),
              hwloc_get_nbobjs_by_type(live->topology.get(), HWLOC_OBJ_PU));
    EXPECT_EQ(hwloc_topology_is_thissystem(step->topology.get()), 1);
    // Written again (slurmd restarts), it replaces the old one in place.
    ASSERT_TRUE(writeNodeTopologyCache(dir_).ok());
    EXPECT_TRUE(readNodeTopologyCache(path()).ok());
}

TEST_F(NodeCacheTest, ACacheThatIsNotThisMachinesNowIsRefusedSayingWhy) {
    ASSERT_TRUE(writeNodeTopologyCache(dir_).ok());
    const std::string xml = xmlOf(read());
    const MachineSignature now = currentMachineSignature();
    struct Case {
        const char *changed;
        MachineSignature signature;
        const char *why;
    };
    MachineSignature boot = now, hwloc = now, cpus = now, numa = now, pci = now;
    boot.bootId = "00000000-0000-0000-0000-000000000000";
    hwloc.hwloc = "1.11.0";
    cpus.cpus = now.cpus + ",4096";
    numa.numa = "0-7";
    pci.pci = "0000:ff:00.0";
    const Case cases[] = {
        {"boot", boot, "it was made in another boot"},
        {"hwloc", hwloc, "it was made by hwloc 1.11.0, this server uses "},
        {"cpus", cpus, "the online CPUs changed since it was made"},
        {"numa", numa, "the online NUMA nodes changed since it was made"},
        {"pci", pci, "the PCI devices changed since it was made"},
    };
    for (const auto &c : cases) {
        write(nodeTopologyCacheText(c.signature, xml));
        EXPECT_EQ(refusal().rfind(c.why, 0), 0u) << c.changed << ": " << refusal();
    }
    write(nodeTopologyCacheText(now, xml));
    EXPECT_TRUE(readNodeTopologyCache(path()).ok());
}

TEST_F(NodeCacheTest, WhatAnotherUserCouldHaveWrittenIsNeverRead) {
    ASSERT_TRUE(writeNodeTopologyCache(dir_).ok());
    const std::string text = read();
    // Group- or other-writable file.
    write(text, 0664);
    EXPECT_EQ(refusal(), "it is not a file root alone may write");
    write(text, 0646);
    EXPECT_EQ(refusal(), "it is not a file root alone may write");
    // Another user's file.
    write(text);
    ASSERT_EQ(chown(path().c_str(), 65534, 65534), 0);
    EXPECT_EQ(refusal(), "it is not a file root alone may write");
    // A link, even to root's own good cache.
    const std::string good = dir_ + "/good.xml";
    fs::rename(path(), good);
    ASSERT_EQ(chown(good.c_str(), 0, 0), 0);
    ASSERT_EQ(symlink(good.c_str(), path().c_str()), 0);
    EXPECT_EQ(refusal().rfind("cannot open it", 0), 0u) << refusal();
    fs::remove(path());
    fs::rename(good, path());
    EXPECT_TRUE(readNodeTopologyCache(path()).ok());
    // A directory others may write in (they could swap the file).
    chmod(dir_.c_str(), 0777);
    EXPECT_EQ(refusal(), "its directory " + dir_ + " is not root's alone");
    chmod(dir_.c_str(), 0755);
    // Root does not write into a directory it does not own alone either.
    ASSERT_EQ(chown(dir_.c_str(), 65534, 65534), 0);
    auto written = writeNodeTopologyCache(dir_);
    ASSERT_FALSE(written.ok());
    EXPECT_NE(written.error().message.find("is not root's alone"), std::string::npos);
}

TEST_F(NodeCacheTest, WhatIsNoCacheIsRefused) {
    write("");
    EXPECT_EQ(refusal().rfind("it is not a stepmap topology cache", 0), 0u) << refusal();
    write("<topology/>\n");
    EXPECT_EQ(refusal().rfind("it is not a stepmap topology cache", 0), 0u);
    write("stepmap-node-topology 1\nboot_id x\n");
    EXPECT_EQ(refusal(), "its header has no 'hwloc ' line where expected");
    EXPECT_EQ(readNodeTopologyCache("relative/path").error().message,
              "'relative/path' is not an absolute file path");
    EXPECT_EQ(readNodeTopologyCache(dir_ + "/missing").error().message.rfind("cannot open it", 0),
              0u);
    // XML that is not hwloc's passes the header but not hwloc.
    write(nodeTopologyCacheText(currentMachineSignature(), "not xml"));
    auto xml = readNodeTopologyCache(path());
    ASSERT_TRUE(xml.ok());
    EXPECT_FALSE(loadStepTopologyFromMachineXml("0", *xml).ok());
}

} // namespace
} // namespace stepmap::topology
