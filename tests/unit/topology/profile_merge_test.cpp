// profile_merge.hpp and writeProfileFile: `update` replaces and adds the
// probed nodes and leaves every other entry byte for byte as it was.

#include "profile/profile_merge.hpp"

#include <stdlib.h>

#include <filesystem>
#include <string>

#include <gtest/gtest.h>

#include "profile/profile_yaml.hpp"
#include "profile_test_files.hpp"

namespace stepmap::topology {
namespace {

namespace fs = std::filesystem;
using testing::fileText;
using testing::sysfsFixtures;

NodeProfile goldenNode(const std::string &tree) {
    return loadProfileYaml(fileText(sysfsFixtures() + "/" + tree + ".yaml"), tree)
        .value()
        .nodes.at(0);
}

// The lines of `text` from "  - name: <node>" up to the next node.
std::string entryText(const std::string &text, const std::string &node) {
    const auto start = text.find("  - name: " + node + "\n");
    if (start == std::string::npos)
        return "";
    const auto end = text.find("  - name: ", start + 1);
    return text.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

TEST(ProfileMerge, UpdateReplacesItsNodesAndLeavesTheOthersByteForByte) {
    const Profile before{kProfileFormatVersion,
                         {goldenNode("ethernet"), goldenNode("rdma"), goldenNode("veth")}};
    const std::string beforeText = writeProfileYaml(before);

    NodeProfile fresh = goldenNode("rdma");
    fresh.profiledAt = "2027-06-01T12:00:00Z";
    fresh.interfaces[0].mtu = 4092;
    fresh.digest = staticDigest(fresh);
    NodeProfile added = goldenNode("veth");
    added.name = "aaa-node";
    added.digest = staticDigest(added);
    const Profile after = mergedProfile(before, {fresh, added});
    const std::string afterText = writeProfileYaml(after);

    ASSERT_EQ(after.nodes.size(), 4u);
    EXPECT_EQ(after.nodes[0].name, "aaa-node"); // sorted by name
    EXPECT_EQ(after.nodes[2], fresh);
    for (const std::string node : {"ethernet-node", "veth-node"}) {
        EXPECT_FALSE(entryText(beforeText, node).empty());
        EXPECT_EQ(entryText(afterText, node), entryText(beforeText, node)) << node;
    }
    EXPECT_NE(entryText(afterText, "rdma-node"), entryText(beforeText, "rdma-node"));
    EXPECT_EQ(loadProfileYaml(afterText, "after.yaml").value(), after);
}

TEST(ProfileMerge, ANodeProbedAgainUnchangedGivesTheSameFile) {
    const Profile before{kProfileFormatVersion, {goldenNode("ethernet"), goldenNode("veth")}};
    EXPECT_EQ(writeProfileYaml(mergedProfile(before, {goldenNode("veth")})),
              writeProfileYaml(before));
}

class ProfileFile : public ::testing::Test {
protected:
    void SetUp() override {
        std::string name = (fs::temp_directory_path() / "stepmap-profile-file-XXXXXX").string();
        ASSERT_NE(mkdtemp(name.data()), nullptr);
        dir_ = name;
    }
    void TearDown() override { fs::remove_all(dir_); }

    fs::path dir_;
};

TEST_F(ProfileFile, IsWrittenWholeAndAloneInItsDirectory) {
    const Profile profile{kProfileFormatVersion, {goldenNode("rdma")}};
    const std::string path = (dir_ / "cluster.yaml").string();
    ASSERT_EQ(writeProfileFile(path, profile), std::nullopt);
    EXPECT_EQ(fileText(path), writeProfileYaml(profile));
    EXPECT_EQ(readProfileFile(path).value(), profile);
    // Replacing it keeps its mode and leaves no temporary file behind.
    fs::permissions(path, fs::perms(0640));
    ASSERT_EQ(writeProfileFile(path, Profile{}), std::nullopt);
    EXPECT_EQ(readProfileFile(path).value(), Profile{});
    EXPECT_EQ(fs::status(path).permissions(), fs::perms(0640));
    EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(ProfileFile, ADirectoryThatIsNotThereIsNamed) {
    const std::string path = (dir_ / "missing" / "cluster.yaml").string();
    EXPECT_EQ(writeProfileFile(path, Profile{})->message,
              path + ": cannot make a new file in its directory: No such file or directory");
}

} // namespace
} // namespace stepmap::topology
