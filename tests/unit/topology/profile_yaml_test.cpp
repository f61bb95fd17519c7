// profile_yaml.hpp: the deterministic writer and the strict loader, against
// the golden files in tests/fixtures/sysfs and a table of broken profiles
// whose messages must name the file, the line and the key.

#include "profile/profile_yaml.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "profile_test_files.hpp"

namespace stepmap::topology {
namespace {

using testing::fileText;
using testing::kFixtureTrees;
using testing::sysfsFixtures;

std::string golden(const std::string &tree) {
    return fileText(sysfsFixtures() + "/" + tree + ".yaml");
}

TEST(ProfileYaml, GoldenFilesLoadAndWriteBackByteForByte) {
    for (const std::string tree : kFixtureTrees) {
        const std::string text = golden(tree);
        const auto profile = loadProfileYaml(text, tree + ".yaml");
        ASSERT_TRUE(profile.ok()) << profile.error().message;
        EXPECT_EQ(profile->nodes.at(0).name, tree + "-node");
        EXPECT_EQ(writeProfileYaml(*profile), text) << tree;
    }
}

TEST(ProfileYaml, LoadOfWriteGivesTheSameProfileWithNodesSortedByName) {
    Profile all;
    for (const std::string tree : {"veth", "ethernet", "rdma"})
        all.nodes.push_back(loadProfileYaml(golden(tree), "g.yaml").value().nodes.at(0));
    const std::string text = writeProfileYaml(all);
    const auto loaded = loadProfileYaml(text, "all.yaml");
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    ASSERT_EQ(loaded->nodes.size(), 3u);
    EXPECT_EQ(loaded->nodes[0], all.nodes[1]);
    EXPECT_EQ(loaded->nodes[1], all.nodes[2]);
    EXPECT_EQ(loaded->nodes[2], all.nodes[0]);
    EXPECT_EQ(writeProfileYaml(*loaded), text);
}

TEST(ProfileYaml, AnEmptyProfileRoundTrips) {
    const std::string text = writeProfileYaml(Profile{});
    EXPECT_EQ(text, "# stepmap interconnect profile (topology/profile/README.md)\n"
                    "format_version: 1\nnodes: []\n");
    EXPECT_EQ(loadProfileYaml(text, "p.yaml").value(), Profile{});
}

struct BrokenProfile {
    const char *tree; // golden file to start from
    const char *from; // first occurrence replaced...
    const char *to;   // ...by this
    const char *message;
};

const BrokenProfile kBrokenProfiles[] = {
    {"ethernet", "mtu: 9000", "mtu: abc",
     "profile.yaml:15: nodes[0].interfaces[0].mtu: 'abc' is not a number"},
    {"ethernet", "mtu: 9000", "mtu: [9000]",
     "profile.yaml:15: nodes[0].interfaces[0].mtu: expected a single value"},
    {"ethernet", "mtu: 9000", "mtu: 9000\n        colour: red",
     "profile.yaml:16: nodes[0].interfaces[0].colour: unknown key"},
    {"ethernet", "method: sysfs", "method: sysfs\n    method: sysfs",
     "profile.yaml:7: nodes[0].method: repeated key"},
    {"ethernet", "    method: sysfs\n", "", "profile.yaml:4: nodes[0]: missing key 'method'"},
    {"ethernet", "mac: 52:54:00:12:34:56", "mac: 52:54:00:12:34",
     "profile.yaml:19: nodes[0].interfaces[0].mac: '52:54:00:12:34' is not a MAC address"},
    {"ethernet", "10.0.0.5/24", "10.0.0.300/24",
     "profile.yaml:12: nodes[0].interfaces[0].addresses[0]: '10.0.0.300/24' is not an "
     "address/prefix length"},
    {"ethernet", "2001:db8::5/64", "2001:db8::5/129",
     "profile.yaml:13: nodes[0].interfaces[0].addresses[1]: '2001:db8::5/129' is not an "
     "address/prefix length"},
    {"ethernet", "operstate: up", "operstate: sideways",
     "profile.yaml:17: nodes[0].interfaces[0].operstate: 'sideways' is not an operstate"},
    {"ethernet", "speed_mbps: 25000", "speed_mbps: -1",
     "profile.yaml:16: nodes[0].interfaces[0].speed_mbps: '-1' is not a number"},
    {"ethernet", "numa_node: 0", "numa_node: 99999999",
     "profile.yaml:21: nodes[0].interfaces[0].numa_node: '99999999' is above 65536"},
    {"ethernet", "pci_address: 0000:00:03.0", "pci_address: 00:03.0",
     "profile.yaml:20: nodes[0].interfaces[0].pci_address: '00:03.0' is not a PCI address"},
    {"ethernet", "rdma_devices: []", "rdma_devices: 3",
     "profile.yaml:22: nodes[0].rdma_devices: expected a list"},
    {"ethernet", "format_version: 1", "format_version: 2",
     "profile.yaml:2: format_version: '2' is not a format this stepmap reads (1)"},
    {"ethernet", "profiled_at: 2026-01-01T00:00:00Z", "profiled_at: yesterday",
     "profile.yaml:5: nodes[0].profiled_at: 'yesterday' is not a UTC time "
     "(YYYY-MM-DDTHH:MM:SSZ)"},
    {"ethernet", "name: ethernet-node", "name: ethernet node",
     "profile.yaml:4: nodes[0].name: 'ethernet node' is not a node name"},
    {"ethernet", "mtu: 9000", "mtu: 1500",
     "profile.yaml:7: nodes[0].digest: "
     "'sha256:8027d338aa8d79c9fd724fb3d0444fbfded3abc7a76c6e11b15a5d92650340d6' does not match "
     "the node's fields (they give "
     "sha256:9f5b6bb6ca38904d77a1c2a63fb29af5a79b492f3edb4eef29aa178436b752c0); profile the node "
     "again"},
    {"ethernet", "mtu: 9000", "mtu: [9000", "profile.yaml:16: end of sequence flow not found"},
    {"ethernet", "ifindex: 2", "ifindex: 0",
     "profile.yaml:10: nodes[0].interfaces[0].ifindex: '0' is not an interface index (they start "
     "at 1)"},
    {"ethernet", "ifindex: 2", "ifindex: -2",
     "profile.yaml:10: nodes[0].interfaces[0].ifindex: '-2' is not a number"},
    {"ethernet", "ifindex: 2", "ifindex: 2147483648",
     "profile.yaml:10: nodes[0].interfaces[0].ifindex: '2147483648' is above 2147483647"},
    {"ethernet", "        ifindex: 2\n", "",
     "profile.yaml:9: nodes[0].interfaces[0]: missing key 'ifindex'"},
    {"ethernet", "admin_up: true", "admin_up: yes",
     "profile.yaml:18: nodes[0].interfaces[0].admin_up: 'yes' is not true or false"},
    {"ethernet", "admin_up: true", "admin_up: [true]",
     "profile.yaml:18: nodes[0].interfaces[0].admin_up: expected a single value"},
    {"rdma", "state: ACTIVE", "state: UP",
     "profile.yaml:26: nodes[0].rdma_devices[0].ports[0].state: 'UP' is not a port state"},
    {"rdma", "link_layer: InfiniBand", "link_layer: Myrinet",
     "profile.yaml:28: nodes[0].rdma_devices[0].ports[0].link_layer: 'Myrinet' is not a link "
     "layer"},
    {"rdma", "rate: 100 Gb/sec (4X EDR)", "rate: \"100\\e[31m\"",
     "profile.yaml:29: nodes[0].rdma_devices[0].ports[0].rate: '100\\x1b[31m' is not a port "
     "rate"},
    {"rdma", "lid: 7", "lid: 70000",
     "profile.yaml:30: nodes[0].rdma_devices[0].ports[0].lid: '70000' is above 65535"},
    {"rdma", "gid: fe80:0000:0000:0000:0002:c903:00f1:e9c1", "gid: fe80::2:c903:f1:e9c1",
     "profile.yaml:33: nodes[0].rdma_devices[0].ports[0].gids[0].gid: 'fe80::2:c903:f1:e9c1' "
     "is not a GID"},
    {"rdma", "node_guid: 0002:c903:00f1:e9c0", "node_guid: 0002c90300f1e9c0",
     "profile.yaml:23: nodes[0].rdma_devices[0].node_guid: '0002c90300f1e9c0' is not a GUID"},
};

TEST(ProfileYaml, BrokenProfilesAreErrorsNamingFileLineAndKey) {
    for (const BrokenProfile &broken : kBrokenProfiles) {
        std::string text = golden(broken.tree);
        const auto at = text.find(broken.from);
        ASSERT_NE(at, std::string::npos) << broken.from;
        text.replace(at, std::string(broken.from).size(), broken.to);
        const auto loaded = loadProfileYaml(text, "profile.yaml");
        ASSERT_FALSE(loaded.ok()) << broken.to;
        EXPECT_EQ(loaded.error().message, broken.message);
    }
}

TEST(ProfileYaml, ANodeTwiceIsAnError) {
    std::string text = golden("ethernet");
    const std::string node = text.substr(text.find("  - name:"));
    const auto loaded = loadProfileYaml(text + node, "twice.yaml");
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().message,
              "twice.yaml:23: nodes[1].name: node 'ethernet-node' appears twice");
}

TEST(ProfileYaml, AliasesCannotMultiplyTheWork) {
    // 41 interfaces, 40 of them aliases of the first, each with the same 40
    // addresses: 1,640 list items from a file of under 900 bytes.
    std::string addresses;
    for (int i = 0; i < 40; ++i)
        addresses += std::string(i ? "," : "") + "1.0.0.1/8";
    std::string text = "format_version: 1\nnodes:\n  - name: n\n    profiled_at: "
                       "2026-01-01T00:00:00Z\n    method: m\n    digest: x\n    rdma_devices: []\n"
                       "    interfaces: [&i {name: e, addresses: [" +
                       addresses +
                       "], mtu: 1, speed_mbps: 1, operstate: up, admin_up: true, mac: none, "
                       "pci_address: none, ifindex: 1, "
                       "numa_node: 0}";
    for (int i = 0; i < 40; ++i)
        text += ", *i";
    text += "]\n";
    ASSERT_LT(text.size(), 900u);
    const auto loaded = loadProfileYaml(text, "p.yaml");
    ASSERT_FALSE(loaded.ok());
    EXPECT_EQ(loaded.error().message,
              "p.yaml:8: nodes[0].interfaces[20].addresses: more list items than the file has "
              "bytes (YAML aliases repeating parts)");
}

TEST(ProfileYaml, TheTopLevelMustBeAMap) {
    for (const std::string text : {"", "- 1\n", "just text\n"}) {
        const auto loaded = loadProfileYaml(text, "p.yaml");
        ASSERT_FALSE(loaded.ok()) << text;
        EXPECT_EQ(loaded.error().message.substr(0, 7), "p.yaml:");
    }
}

TEST(ProfileYaml, ReadProfileFileNamesTheFile) {
    const std::string missing = sysfsFixtures() + "/no-such-profile.yaml";
    EXPECT_EQ(readProfileFile(missing).error().message, missing + ": cannot open the profile");
    const std::string path = sysfsFixtures() + "/rdma.yaml";
    const auto loaded = readProfileFile(path);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message;
    EXPECT_EQ(loaded->nodes.at(0).rdmaDevices.at(0).ports.at(0).gids.size(), 2u);
}

// readProfileFile(path)'s error in a child killed after 5 s: nullopt if it
// was still waiting (a FIFO's open() without O_NONBLOCK waits for a writer).
std::optional<std::string> readErrorWithin5s(const std::string &path) {
    int fds[2];
    if (pipe(fds) != 0)
        return "pipe failed";
    const pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        const auto loaded = readProfileFile(path);
        const std::string said = loaded ? std::string("loaded") : loaded.error().message;
        const ssize_t put = write(fds[1], said.data(), said.size());
        _exit(put == static_cast<ssize_t>(said.size()) ? 0 : 1);
    }
    close(fds[1]);
    pollfd ready{fds[0], POLLIN, 0};
    std::optional<std::string> said;
    if (poll(&ready, 1, 5000) == 1) {
        char buf[1024];
        const ssize_t got = read(fds[0], buf, sizeof buf);
        said = std::string(buf, got > 0 ? static_cast<std::size_t>(got) : 0);
    }
    close(fds[0]);
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    return said;
}

// `stepmap-profile check FIFO` (or a site's profile= replaced by one) must
// not hang in open(): anything but a regular file is refused at once.
TEST(ProfileYaml, ReadProfileFileRefusesAFifoAtOnce) {
    char pattern[] = "/tmp/profile-yaml-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    const std::string dir = pattern;
    const std::string fifo = dir + "/profile.yaml";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    const auto said = readErrorWithin5s(fifo);
    unlink(fifo.c_str());
    rmdir(dir.c_str());
    ASSERT_TRUE(said) << "readProfileFile still waited for a writer after 5 s";
    EXPECT_EQ(*said, fifo + ": not a regular file; name the profile file itself "
                            "(stepmap-profile make -o FILE writes one)");
    EXPECT_EQ(readProfileFile("/dev/zero").error().message,
              "/dev/zero: not a regular file; name the profile file itself (stepmap-profile "
              "make -o FILE writes one)");
}

} // namespace
} // namespace stepmap::topology
