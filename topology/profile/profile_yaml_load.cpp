// The strict loader half of profile_yaml.hpp, on yaml/strict_yaml.hpp: a bad
// value throws LoadFailure with the finished message; loadProfileYaml runs
// the reader in loadStrictly, so no exception leaves the API.

#include "profile/profile_yaml.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <set>

#include "base/quote.hpp"
#include "yaml/strict_yaml.hpp"

namespace stepmap::topology {
namespace {

using namespace yaml;

// Closes the profile file on every path out.
class FileCloser {
public:
    explicit FileCloser(int fd) : fd_(fd) {}
    FileCloser(const FileCloser &) = delete;
    FileCloser &operator=(const FileCloser &) = delete;
    ~FileCloser() { ::close(fd_); }

private:
    int fd_;
};

// The kernel numbers interfaces from 1 up, in an int.
std::uint32_t interfaceIndex(const Field &field) {
    const auto index = number(field, kMaxInterfaceIndex);
    if (index == 0)
        field.second.fail(field.first, "'0' is not an interface index (they start at 1)");
    return static_cast<std::uint32_t>(index);
}

NetworkInterface readInterface(const Field &field) {
    const StrictMap map(field.first, field.second,
                        {"name", "ifindex", "addresses", "mtu", "speed_mbps", "operstate",
                         "admin_up", "mac", "pci_address", "numa_node"});
    NetworkInterface interface;
    interface.name = checked(map["name"], isProfileName, "an interface name");
    interface.ifindex = interfaceIndex(map["ifindex"]);
    interface.addresses = sequence<InterfaceAddress>(map["addresses"], [](const auto &item) {
        const std::string text = scalar(item);
        const auto address = parseInterfaceAddress(text);
        if (!address)
            item.second.fail(item.first, quoted(text) + " is not an address/prefix length");
        return *address;
    });
    interface.mtu = smallNumber(map["mtu"], 1 << 20);
    interface.speedMbps = numberOr<std::uint64_t>(map["speed_mbps"], 1u << 30, "unknown");
    interface.operstate = checked(map["operstate"], isOperstate, "an operstate");
    interface.adminUp = truth(map["admin_up"]);
    interface.mac = checked(map["mac"], isLinkAddress, "a MAC address");
    const auto pci = map["pci_address"];
    if (scalar(pci) != "none")
        interface.pciAddress = checked(pci, isPciAddress, "a PCI address");
    interface.numaNode = numberOr<int>(map["numa_node"], 1 << 16, "unknown");
    return interface;
}

RdmaPort readPort(const Field &field) {
    const StrictMap map(field.first, field.second,
                        {"number", "state", "phys_state", "link_layer", "rate", "lid", "gids"});
    RdmaPort port;
    port.number = smallNumber(map["number"], 255);
    port.state = checked(map["state"], isPortState, "a port state");
    port.physState = checked(map["phys_state"], isProfileName, "a physical port state");
    port.linkLayer = checked(map["link_layer"], isLinkLayer, "a link layer");
    port.rate = checked(map["rate"], isPortRate, "a port rate");
    port.lid = smallNumber(map["lid"], 0xffff);
    port.gids = sequence<RdmaGid>(map["gids"], [](const auto &item) {
        const StrictMap gid(item.first, item.second, {"index", "gid"});
        return RdmaGid{smallNumber(gid["index"], 1 << 16), checked(gid["gid"], isGid, "a GID")};
    });
    return port;
}

RdmaDevice readDevice(const Field &field) {
    const StrictMap map(field.first, field.second, {"name", "node_guid", "ports"});
    RdmaDevice device;
    device.name = checked(map["name"], isProfileName, "a device name");
    device.nodeGuid = checked(map["node_guid"], isGuid, "a GUID");
    device.ports = sequence<RdmaPort>(map["ports"], readPort);
    return device;
}

NodeProfile readNode(const Field &field) {
    const StrictMap map(field.first, field.second,
                        {"name", "profiled_at", "method", "digest", "interfaces", "rdma_devices"});
    NodeProfile node;
    node.name = checked(map["name"], isProfileName, "a node name");
    node.profiledAt = checked(map["profiled_at"], isUtcTime, "a UTC time (YYYY-MM-DDTHH:MM:SSZ)");
    node.method = checked(map["method"], isProfileName, "a method name");
    node.interfaces = sequence<NetworkInterface>(map["interfaces"], readInterface);
    node.rdmaDevices = sequence<RdmaDevice>(map["rdma_devices"], readDevice);
    const auto digest = map["digest"];
    node.digest = scalar(digest);
    const std::string expected = staticDigest(node);
    if (node.digest != expected) {
        digest.second.fail(digest.first, quoted(node.digest) +
                                             " does not match the node's fields (they give " +
                                             expected + "); profile the node again");
    }
    return node;
}

Profile readProfile(const YAML::Node &root, std::string_view fileName, std::size_t itemBudget) {
    const Place top(fileName, "", &itemBudget);
    const StrictMap map(root, top, {"format_version", "nodes"});
    Profile profile;
    const auto version = map["format_version"];
    if (scalar(version) != std::to_string(kProfileFormatVersion)) {
        version.second.fail(version.first, quoted(scalar(version)) +
                                               " is not a format this stepmap reads (" +
                                               std::to_string(kProfileFormatVersion) + ")");
    }
    profile.nodes = sequence<NodeProfile>(map["nodes"], readNode);
    std::set<std::string> names;
    const auto nodes = map["nodes"];
    for (std::size_t i = 0; i < profile.nodes.size(); ++i) {
        if (!names.insert(profile.nodes[i].name).second) {
            nodes.second.item(i).key("name").fail(
                nodes.first[i]["name"], "node " + quoted(profile.nodes[i].name) + " appears twice");
        }
    }
    return profile;
}

} // namespace

Expected<Profile> loadProfileYaml(std::string_view text, std::string_view fileName) {
    return loadStrictly(fileName, [&] {
        return readProfile(YAML::Load(std::string(text)), fileName, text.size());
    });
}

Expected<Profile> readProfileFile(const std::string &path) {
    const std::string shown = escaped(path, kShownPathBytes);
    int fd = -1;
    do {
        // O_NONBLOCK: a FIFO without a writer would hold open() (and
        // stepmap-profile, or srun at every step) for good; it is refused
        // below instead.
        fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return UserError{shown + ": cannot open the profile"};
    const FileCloser closer(fd);
    struct stat status {};
    if (fstat(fd, &status) != 0)
        return UserError{shown + ": cannot read the profile"};
    if (!S_ISREG(status.st_mode))
        return UserError{shown + ": not a regular file; name the profile file itself "
                                 "(stepmap-profile make -o FILE writes one)"};
    std::string text;
    std::string chunk(std::size_t{1} << 16, '\0');
    while (text.size() <= kMaxProfileBytes) {
        const ssize_t got = ::read(fd, chunk.data(), chunk.size());
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return UserError{shown + ": cannot read the profile"};
        if (got == 0)
            break;
        text.append(chunk, 0, static_cast<std::size_t>(got));
    }
    if (text.size() > kMaxProfileBytes) {
        return UserError{shown + ": larger than " + std::to_string(kMaxProfileBytes >> 20) +
                         " MiB"};
    }
    return loadProfileYaml(text, path);
}

} // namespace stepmap::topology
