#include "profile/sysfs_probe.hpp"

#include <algorithm>
#include <ctime>
#include <optional>

#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "profile/interface_addresses.hpp"
#include "profile/rooted_tree.hpp"

namespace stepmap::topology {
namespace {

// IFF_UP in /sys/class/net/<if>/flags: the interface is administratively up.
constexpr std::uint64_t kInterfaceUpFlag = 0x1;

// Reads one file and checks it; a failed check names the file and the text.
class FieldReader {
public:
    explicit FieldReader(const RootedTree &tree) : tree_(tree) {}

    template <class Check>
    Expected<std::string> text(const std::string &path, Check check, const char *what) const {
        auto text = tree_.read(path);
        if (text && !check(*text))
            return bad(path, *text, what);
        return text;
    }

    Expected<std::uint64_t> number(const std::string &path, std::uint64_t limit,
                                   int base = 10) const {
        const auto text = tree_.read(path);
        if (!text)
            return text.error();
        std::string_view digits = *text;
        if (base == 16 && digits.starts_with("0x"))
            digits.remove_prefix(2);
        const auto value =
            base == 16 ? parseHex(digits, limit) : detail::parseUnsigned(digits, limit);
        if (!value)
            return bad(path, *text, "a number");
        return *value;
    }

    // "4: ACTIVE" -> "ACTIVE", as the kernel writes port states.
    template <class Check>
    Expected<std::string> wordAfterColon(const std::string &path, Check check,
                                         const char *what) const {
        auto text = tree_.read(path);
        if (!text)
            return text;
        const auto colon = text->find(": ");
        const std::string word = colon == std::string::npos ? *text : text->substr(colon + 2);
        if (!check(word))
            return bad(path, *text, what);
        return word;
    }

    UserError bad(const std::string &path, const std::string &text, const char *what) const {
        return UserError{tree_.shown(path) + ": " + quoted(text) + " is not " + what};
    }

private:
    static std::optional<std::uint64_t> parseHex(std::string_view text, std::uint64_t limit) {
        if (text.empty() || text.size() > 15)
            return std::nullopt;
        std::uint64_t value = 0;
        for (char c : text) {
            const auto digit = std::string_view("0123456789abcdef").find(c);
            if (digit == std::string_view::npos)
                return std::nullopt;
            value = value * 16 + digit;
        }
        return value <= limit ? std::optional(value) : std::nullopt;
    }

    const RootedTree &tree_;
};

// Moves a read value into `target`, or gives the read's error.
template <class T, class U> std::optional<UserError> take(T &target, Expected<U> &&read) {
    if (!read)
        return read.error();
    target = static_cast<T>(std::move(*read));
    return std::nullopt;
}

// The PCI address and NUMA node of the interface's device, when it has one.
// A virtio-net interface's device is a virtio node ("virtio2") with the PCI
// function as its parent: the parent gives both then. A virtual interface
// has no device and keeps neither.
Expected<void> probeDevice(const RootedTree &tree, const std::string &dir,
                           NetworkInterface &interface) {
    const auto device = tree.resolve(dir + "/device");
    if (!device)
        return device.error();
    if (!tree.exists(*device))
        return {}; // a virtual interface
    std::string pciDevice = *device;
    const std::string base = device->substr(device->rfind('/') + 1);
    const std::string parent = device->substr(0, device->rfind('/'));
    if (!isPciAddress(base) && base.starts_with("virtio") &&
        isPciAddress(parent.substr(parent.rfind('/') + 1)))
        pciDevice = parent;
    const std::string pciBase = pciDevice.substr(pciDevice.rfind('/') + 1);
    if (isPciAddress(pciBase))
        interface.pciAddress = pciBase;
    const auto numa = tree.readIfPresent(pciDevice + "/numa_node");
    if (!numa)
        return numa.error();
    if (*numa && **numa != "-1") {
        const auto node = detail::parseUnsigned(**numa, 1 << 16);
        if (!node)
            return FieldReader(tree).bad(pciDevice + "/numa_node", **numa, "a NUMA node");
        interface.numaNode = static_cast<int>(*node);
    }
    return {};
}

Expected<NetworkInterface> probeInterface(const RootedTree &tree, const std::string &name) {
    const FieldReader read(tree);
    const std::string dir = "/sys/class/net/" + name;
    NetworkInterface interface;
    interface.name = name;
    if (auto error = take(interface.ifindex, read.number(dir + "/ifindex", kMaxInterfaceIndex)))
        return *error;
    if (interface.ifindex == 0)
        return read.bad(dir + "/ifindex", "0", "an interface index");
    if (auto error = take(interface.mtu, read.number(dir + "/mtu", 1 << 20)))
        return *error;
    std::uint64_t flags = 0;
    if (auto error = take(flags, read.number(dir + "/flags", 0xffffffff, 16)))
        return *error;
    interface.adminUp = (flags & kInterfaceUpFlag) != 0;
    if (auto error =
            take(interface.operstate, read.text(dir + "/operstate", isOperstate, "an operstate")))
        return *error;
    std::string mac;
    if (auto error = take(mac, tree.read(dir + "/address")))
        return *error;
    interface.mac = mac.empty() ? "none" : mac;
    if (!isLinkAddress(interface.mac))
        return read.bad(dir + "/address", mac, "a MAC address");
    const auto speed = tree.readIfPresent(dir + "/speed");
    if (!speed)
        return speed.error();
    if (*speed && **speed != "-1") {
        if (auto error = take(interface.speedMbps, read.number(dir + "/speed", 1u << 30)))
            return *error;
    }
    const auto device = probeDevice(tree, dir, interface);
    if (!device)
        return device.error();
    return interface;
}

Expected<RdmaPort> probePort(const RootedTree &tree, const std::string &dir, int number) {
    const FieldReader read(tree);
    RdmaPort port;
    port.number = number;
    if (auto error =
            take(port.state, read.wordAfterColon(dir + "/state", isPortState, "a port state")))
        return *error;
    if (auto error = take(port.physState, read.wordAfterColon(dir + "/phys_state", isProfileName,
                                                              "a physical port state")))
        return *error;
    if (auto error =
            take(port.linkLayer, read.text(dir + "/link_layer", isLinkLayer, "a link layer")))
        return *error;
    if (auto error = take(port.rate, read.text(dir + "/rate", isPortRate, "a port rate")))
        return *error;
    if (auto error = take(port.lid, read.number(dir + "/lid", 0xffff, 16)))
        return *error;
    std::vector<std::string> indexes;
    if (auto error = take(indexes, tree.list(dir + "/gids")))
        return *error;
    for (const std::string &index : indexes) {
        const auto value = detail::parseUnsigned(index, 1 << 16);
        std::string gid;
        if (auto error = take(gid, read.text(dir + "/gids/" + index, isGid, "a GID")))
            return *error;
        if (!value)
            return read.bad(dir + "/gids/" + index, index, "a GID index");
        if (gid != "0000:0000:0000:0000:0000:0000:0000:0000")
            port.gids.push_back({static_cast<int>(*value), gid});
    }
    std::sort(port.gids.begin(), port.gids.end(),
              [](const RdmaGid &a, const RdmaGid &b) { return a.index < b.index; });
    return port;
}

Expected<RdmaDevice> probeRdmaDevice(const RootedTree &tree, const std::string &name) {
    const std::string dir = "/sys/class/infiniband/" + name;
    RdmaDevice device;
    device.name = name;
    if (auto error =
            take(device.nodeGuid, FieldReader(tree).text(dir + "/node_guid", isGuid, "a GUID")))
        return *error;
    std::vector<std::string> numbers;
    if (auto error = take(numbers, tree.list(dir + "/ports")))
        return *error;
    for (const std::string &number : numbers) {
        const auto value = detail::parseUnsigned(number, 255);
        if (!value)
            return FieldReader(tree).bad(dir + "/ports/" + number, number, "a port number");
        RdmaPort port;
        if (auto error =
                take(port, probePort(tree, dir + "/ports/" + number, static_cast<int>(*value))))
            return *error;
        device.ports.push_back(std::move(port));
    }
    std::sort(device.ports.begin(), device.ports.end(),
              [](const RdmaPort &a, const RdmaPort &b) { return a.number < b.number; });
    return device;
}

} // namespace

std::string utcNow() {
    const std::time_t now = std::time(nullptr);
    std::tm parts{};
    gmtime_r(&now, &parts);
    char text[32] = {};
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts);
    return text;
}

Expected<NodeProfile> probeNode(const ProbeOptions &options) {
    if (!isProfileName(options.nodeName))
        return UserError{"node name " + quoted(options.nodeName) + " is not a host name"};
    if (!isProfileName(options.method))
        return UserError{"method " + quoted(options.method) + " is not a name"};
    const RootedTree tree(options.root, kMaxSysfsFileBytes);
    NodeProfile node;
    node.name = options.nodeName;
    node.profiledAt = options.profiledAt.empty() ? utcNow() : options.profiledAt;
    node.method = options.method;
    std::vector<std::string> names;
    if (auto error = take(names, tree.list("/sys/class/net")))
        return *error;
    if (names.empty())
        return UserError{tree.shown("/sys/class/net") + ": no network interfaces there"};
    AddressesByInterface addresses;
    if (auto error = take(addresses, interfaceAddresses(tree)))
        return *error;
    for (const std::string &name : names) {
        // Not interfaces: lo, and files beside them (the bonding driver's
        // bonding_masters).
        if (name == "lo" || !tree.isDirectory("/sys/class/net/" + name))
            continue;
        NetworkInterface interface;
        if (auto error = take(interface, probeInterface(tree, name)))
            return *error;
        interface.addresses = addresses[name];
        if (options.numaNodes && options.numaNodes->count(name) != 0)
            interface.numaNode = options.numaNodes->at(name);
        node.interfaces.push_back(std::move(interface));
    }
    std::vector<std::string> devices;
    if (auto error = take(devices, tree.list("/sys/class/infiniband")))
        return *error;
    for (const std::string &name : devices) {
        RdmaDevice device;
        if (auto error = take(device, probeRdmaDevice(tree, name)))
            return *error;
        node.rdmaDevices.push_back(std::move(device));
    }
    node.digest = staticDigest(node);
    return node;
}

} // namespace stepmap::topology
