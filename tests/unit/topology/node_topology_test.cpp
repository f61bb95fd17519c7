#include "node_topology.hpp"

#include <hwloc.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace stepmap::topology {
namespace {

std::string dataDir(const char *variable) {
    const char *value = std::getenv(variable);
    return value == nullptr ? std::string() : std::string(value);
}

std::vector<std::string> xmlFiles(const char *variable) {
    std::vector<std::string> files;
    const std::string dir = dataDir(variable);
    if (dir.empty() || !std::filesystem::is_directory(dir))
        return files;
    for (const auto &entry : std::filesystem::directory_iterator(dir)) {
        if (entry.path().extension() == ".xml")
            files.push_back(entry.path().string());
    }
    std::sort(files.begin(), files.end());
    return files;
}

TEST(NodeTopology, ModelsEveryShippedTopology) {
    std::vector<std::string> files = xmlFiles("STEPMAP_TOPOLOGIES");
    const std::vector<std::string> more = xmlFiles("STEPMAP_PRRTE_TOPOLOGIES");
    files.insert(files.end(), more.begin(), more.end());
    if (files.empty())
        FAIL() << "no topology files (tests/fixtures/topologies)";
    for (const std::string &file : files) {
        SCOPED_TRACE(file);
        auto topology = NodeTopology::fromXmlFile(file);
        ASSERT_TRUE(topology.ok()) << topology.error().message;
        auto model = topology->nodeModel();
        ASSERT_TRUE(model.ok()) << model.error().message;
        const NodeModel &m = *model.value();
        const int allowed = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(topology->get()));
        EXPECT_EQ(m.puCount(), static_cast<std::uint32_t>(allowed));
        EXPECT_EQ(m.machinePus(), topology->count(HwLevel::Pu));
        EXPECT_EQ(m.machineCores(), topology->count(HwLevel::Core));
        // Every PU keeps hwloc's indices.
        for (std::uint32_t pu = 0; pu < m.puCount(); ++pu) {
            EXPECT_EQ(topology->osIndex(HwLevel::Pu, m.puLogical(pu)), m.puOs(pu));
            EXPECT_EQ(topology->logicalIndex(HwLevel::Pu, m.puOs(pu)), m.puLogical(pu));
        }
        // The levels partition what they cover.
        for (std::size_t level = 0; level < kHwLevelCount; ++level) {
            std::uint32_t covered = 0;
            for (const HwObject &object : m.objects(static_cast<HwLevel>(level)))
                covered += object.puCount;
            EXPECT_LE(covered, m.puCount());
        }
        std::uint32_t inCores = 0;
        for (const HwObject &core : m.objects(HwLevel::Core))
            inCores += core.puCount;
        EXPECT_EQ(inCores, m.puCount());
    }
}

TEST(NodeTopology, KeepsWholeMachineLogicalIndicesForAPartOfIt) {
    const std::string dir = dataDir("STEPMAP_PRRTE_TOPOLOGIES");
    if (dir.empty() || !std::filesystem::exists(dir + "/test-topo2.xml"))
        FAIL() << "no test-topo2.xml in tests/fixtures";
    auto topology = NodeTopology::fromXmlFile(dir + "/test-topo2.xml");
    ASSERT_TRUE(topology.ok()) << topology.error().message;
    // test-topo2: 24 cores x 2 hwthreads; core L#1 holds PUs P#1 and P#25.
    EXPECT_EQ(topology->osIndex(HwLevel::Pu, 1), 24u);
    EXPECT_EQ(topology->logicalIndex(HwLevel::Pu, 25), 3u);
    auto pus = topology->pusOfCores({1, 7});
    ASSERT_TRUE(pus.ok());
    EXPECT_EQ(pus.value(), (std::vector<std::uint32_t>{1, 7, 25, 31}));
    auto model = topology->nodeModel(pus.value());
    ASSERT_TRUE(model.ok()) << model.error().message;
    const NodeModel &m = *model.value();
    ASSERT_EQ(m.puCount(), 4u);
    EXPECT_EQ(m.logicalOf({0, 1, 2, 3}), (std::vector<std::uint32_t>{2, 3, 14, 15}));
    ASSERT_EQ(m.objects(HwLevel::Core).size(), 2u);
    EXPECT_EQ(m.objects(HwLevel::Core)[1].logicalIndex, 7u);
    ASSERT_EQ(m.objects(HwLevel::Numa).size(), 2u);
    EXPECT_EQ(m.objects(HwLevel::Numa)[1].osIndex, 1u);
    EXPECT_TRUE(m.hasHwthreads());
    EXPECT_EQ(m.machineCores(), 24u);

    auto bad = topology->pusOfCores({24});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message, "the node has no core L#24 (it has 24 cores)");
}

TEST(NodeTopology, RestrictsKeepingIoAndExportsXml) {
    const std::string dir = dataDir("STEPMAP_PRRTE_TOPOLOGIES");
    if (dir.empty() || !std::filesystem::exists(dir + "/turin-4gpu-nvml.xml"))
        FAIL() << "no turin-4gpu-nvml.xml in tests/fixtures";
    auto topology = NodeTopology::fromXmlFile(dir + "/turin-4gpu-nvml.xml");
    ASSERT_TRUE(topology.ok()) << topology.error().message;
    auto whole = topology->nodeModel();
    ASSERT_TRUE(whole.ok()) << whole.error().message;
    std::size_t gpus = 0;
    for (const HwDevice &device : whole.value()->devices())
        gpus += device.kind == DeviceKind::Gpu ? 1 : 0;
    EXPECT_EQ(gpus, 4u);

    auto pus = topology->pusOfCores({0, 1, 2, 3});
    ASSERT_TRUE(pus.ok());
    auto part = topology->restrictedTo(pus.value());
    ASSERT_TRUE(part.ok()) << part.error().message;
    EXPECT_EQ(part->count(HwLevel::Pu), 8u);
    EXPECT_EQ(part->count(HwLevel::Core), 4u);
    // The GPUs are still there, moved up to what is left.
    int osdevs = 0;
    for (hwloc_obj_t obj = hwloc_get_next_osdev(part->get(), nullptr); obj != nullptr;
         obj = hwloc_get_next_osdev(part->get(), obj))
        ++osdevs;
    EXPECT_GT(osdevs, 0);

    for (const XmlVersion version : {XmlVersion::V2, XmlVersion::V1}) {
        auto xml = part->exportXml(version);
        ASSERT_TRUE(xml.ok()) << xml.error().message;
        EXPECT_NE(xml->find(version == XmlVersion::V1 ? "hwloc.dtd" : "hwloc2.dtd"),
                  std::string::npos);
        auto back = NodeTopology::fromXmlText(xml.value());
        ASSERT_TRUE(back.ok()) << back.error().message;
        EXPECT_EQ(back->count(HwLevel::Pu), 8u);
    }

    auto none = topology->restrictedTo({});
    ASSERT_FALSE(none.ok());
    EXPECT_EQ(none.error().message, "cannot restrict the topology to no PU at all");
    auto missing = topology->restrictedTo({100000});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message,
              "cannot restrict the topology to PU P#100000: the node has no such PU");
}

TEST(NodeTopology, LoadsSyntheticTopologiesAndReportsErrors) {
    auto topology = NodeTopology::fromSynthetic("pack:2 l3:1 core:4 pu:2");
    ASSERT_TRUE(topology.ok()) << topology.error().message;
    auto model = topology->nodeModel();
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_EQ(model.value()->puCount(), 16u);
    EXPECT_EQ(model.value()->objects(HwLevel::Package).size(), 2u);
    EXPECT_EQ(model.value()->objects(HwLevel::L3Cache).size(), 2u);
    EXPECT_EQ(model.value()->objects(HwLevel::Core).size(), 8u);

    auto bad = NodeTopology::fromSynthetic("pack:two");
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().message.rfind("hwloc refuses the synthetic topology 'pack:two'", 0), 0u);
    auto missing = NodeTopology::fromXmlFile("/nonexistent/topology.xml");
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().message.rfind("hwloc cannot read the topology file "
                                            "/nonexistent/topology.xml",
                                            0),
              0u);
    auto noPu = topology->nodeModel({999});
    ASSERT_FALSE(noPu.ok());
    EXPECT_EQ(noPu.error().message, "the node has no PU P#999 (its PUs: 16)");
}

TEST(NodeTopology, ModelsThisMachine) {
    auto topology = NodeTopology::fromThisMachine();
    ASSERT_TRUE(topology.ok()) << topology.error().message;
    auto model = topology->nodeModel();
    ASSERT_TRUE(model.ok()) << model.error().message;
    EXPECT_GE(model.value()->puCount(), 1u);
}

} // namespace
} // namespace stepmap::topology
