#pragma once

// The interconnect profile as values: what one probe saw of a node's network
// interfaces and RDMA devices, and a file's worth of such nodes. The YAML
// form is in profile_yaml.hpp, the prober in sysfs_probe.hpp.
//
// Static fields (names, interface indexes, addresses, MTU, MAC, PCI address,
// NUMA node, GUIDs, LIDs, GIDs, link layers) describe how the node is built and configured;
// the digest covers only them, so a link that goes down or renegotiates its
// speed does not make a profile stale, while a new or renamed interface,
// address or port does.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::topology {

// The format version this build writes and the only one it loads.
inline constexpr int kProfileFormatVersion = 1;

// The kernel's interface indexes are positive ints.
inline constexpr std::uint32_t kMaxInterfaceIndex = 0x7fffffff;

struct InterfaceAddress {
    std::string address;  // canonical text (inet_ntop), IPv4 or IPv6
    int prefixLength = 0; // 0..32 for IPv4, 0..128 for IPv6

    bool operator==(const InterfaceAddress &) const = default;
};

struct NetworkInterface {
    std::string name;
    std::uint32_t ifindex = 0; // the kernel's interface index (Open MPI's TCP records carry it)
    std::vector<InterfaceAddress> addresses;
    int mtu = 0;
    std::optional<std::uint64_t> speedMbps; // unknown: virtual or down links
    std::string operstate;                  // /sys/class/net/<if>/operstate
    bool adminUp = false; // IFF_UP: Open MPI publishes only interfaces that are up
    std::string mac;      // lower-case "xx:xx:xx:xx:xx:xx" (20 bytes for IPoIB), or "none"
    std::optional<std::string> pciAddress; // "0000:3b:00.0" when a PCI device
    std::optional<int> numaNode;           // unknown: no device or no NUMA

    bool operator==(const NetworkInterface &) const = default;
};

struct RdmaGid {
    int index = 0;
    std::string gid; // "fe80:0000:0000:0000:0002:c903:00f1:e9c1"

    bool operator==(const RdmaGid &) const = default;
};

struct RdmaPort {
    int number = 0;
    std::string state;     // ACTIVE, DOWN, INIT, ARMED, NOP, ACTIVE_DEFER
    std::string physState; // LinkUp, Polling, Disabled, ...
    std::string linkLayer; // InfiniBand or Ethernet
    std::string rate;      // "100 Gb/sec (4X EDR)", as the kernel words it
    int lid = 0;
    std::vector<RdmaGid> gids; // all-zero GIDs left out

    bool operator==(const RdmaPort &) const = default;
};

struct RdmaDevice {
    std::string name;
    std::string nodeGuid; // "0002:c903:00f1:e9c0"
    std::vector<RdmaPort> ports;

    bool operator==(const RdmaDevice &) const = default;
};

struct NodeProfile {
    std::string name;
    std::string profiledAt; // UTC, "2026-11-24T00:30:53Z"
    std::string method;     // how: "sysfs"
    std::vector<NetworkInterface> interfaces;
    std::vector<RdmaDevice> rdmaDevices;
    std::string digest; // staticDigest(*this) when made by the prober

    bool operator==(const NodeProfile &) const = default;
};

struct Profile {
    int formatVersion = kProfileFormatVersion;
    std::vector<NodeProfile> nodes;

    bool operator==(const Profile &) const = default;
};

// One line per static field, in a fixed order: what the digest covers.
std::string staticFieldsText(const NodeProfile &node);

// "sha256:" + the SHA-256 of staticFieldsText(node), in lower-case hex.
std::string staticDigest(const NodeProfile &node);

// Checks of single values, shared by the prober and the loader. Each is true
// when the text is in the form the profile stores.
bool isLinkAddress(std::string_view text); // a MAC (6 or 20 bytes) or "none"
bool isGuid(std::string_view text);
bool isGid(std::string_view text);
bool isOperstate(std::string_view text);
bool isPortState(std::string_view text);
bool isLinkLayer(std::string_view text);
bool isPciAddress(std::string_view text);
bool isUtcTime(std::string_view text);
// A port's rate as the kernel words it: 1..64 printable ASCII bytes.
bool isPortRate(std::string_view text);
// A name of a node, interface or device: 1..255 printable ASCII bytes, no
// blank, no '/'.
bool isProfileName(std::string_view text);

// "10.0.0.1/24" or "fe80::1/64" in canonical form, or nothing when `text` is
// not an address with a prefix length that fits its family.
std::optional<InterfaceAddress> parseInterfaceAddress(std::string_view text);
std::string addressText(const InterfaceAddress &address);

} // namespace stepmap::topology
