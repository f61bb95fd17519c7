#include "modexless/interface_selection.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <string>

namespace stepmap::modexless {

namespace {

using topology::InterfaceAddress;
using topology::NetworkInterface;
using topology::NodeProfile;

// btl tcp's bandwidth when ethtool reports no speed (MCA_BTL_TCP_BTL_BANDWIDTH).
constexpr std::uint32_t kDefaultBandwidthMbps = 100;

std::optional<std::array<std::uint8_t, 16>> parseAddress(const InterfaceAddress &a,
                                                         AddressFamily family) {
    std::array<std::uint8_t, 16> bytes{};
    int af = family == AddressFamily::ipv4 ? AF_INET : AF_INET6;
    if (inet_pton(af, a.address.c_str(), bytes.data()) != 1)
        return std::nullopt;
    return bytes;
}

// Linux's global scope, the only one Open MPI's linux_ipv6 keeps: not
// loopback, link-local (fe80::/10), site-local (fec0::/10) or multicast.
bool isGlobalScope(const std::array<std::uint8_t, 16> &a) {
    static constexpr std::array<std::uint8_t, 16> loopback{0, 0, 0, 0, 0, 0, 0, 0,
                                                           0, 0, 0, 0, 0, 0, 0, 1};
    if (a == loopback || a[0] == 0xff)
        return false;
    return !(a[0] == 0xfe && (a[1] & 0xc0) == 0x80) && !(a[0] == 0xfe && (a[1] & 0xc0) == 0xc0);
}

std::uint32_t bandwidthOf(const NetworkInterface &iface) {
    if (!iface.speedMbps || *iface.speedMbps == 0 || *iface.speedMbps >= UINT_MAX)
        return kDefaultBandwidthMbps;
    return static_cast<std::uint32_t>(*iface.speedMbps);
}

PublishedAddress entryOf(const NetworkInterface &iface, AddressFamily family,
                         const std::array<std::uint8_t, 16> &address, int prefixLength) {
    return {static_cast<std::uint16_t>(iface.ifindex & 0xffff), family, address,
            static_cast<std::uint32_t>(prefixLength), bandwidthOf(iface)};
}

std::vector<const NetworkInterface *> byKernelIndex(const NodeProfile &node) {
    std::vector<const NetworkInterface *> interfaces;
    for (const NetworkInterface &iface : node.interfaces)
        if (iface.ifindex != 0)
            interfaces.push_back(&iface);
    std::stable_sort(interfaces.begin(), interfaces.end(),
                     [](auto *a, auto *b) { return a->ifindex < b->ifindex; });
    return interfaces;
}

bool isIpv4(const InterfaceAddress &a) {
    return a.address.find(':') == std::string::npos;
}

const NetworkInterface *interfaceWithIndex(const NodeProfile &node, std::uint16_t index) {
    for (const NetworkInterface &iface : node.interfaces)
        if (iface.ifindex != 0 && (iface.ifindex & 0xffff) == index)
            return &iface;
    return nullptr;
}

// The kernel indices btl tcp makes a module for, in its order.
std::vector<std::uint16_t> selectedInterfaces(const NodeProfile &node,
                                              const std::vector<PublishedAddress> &list) {
    std::vector<std::uint16_t> selected;
    std::vector<std::uint16_t> seen;
    for (const PublishedAddress &entry : list) {
        if (std::find(seen.begin(), seen.end(), entry.kernelIndex) != seen.end())
            continue;
        seen.push_back(entry.kernelIndex);
        const NetworkInterface *iface = interfaceWithIndex(node, entry.kernelIndex);
        if (iface != nullptr && !excludedByDefault(iface->name, node))
            selected.push_back(entry.kernelIndex);
    }
    return selected;
}

} // namespace

std::vector<PublishedAddress> openMpiInterfaceList(const NodeProfile &node) {
    const std::vector<const NetworkInterface *> interfaces = byKernelIndex(node);
    std::vector<PublishedAddress> list;
    for (const NetworkInterface *iface : interfaces)
        for (const InterfaceAddress &a : iface->addresses) {
            auto bytes = isIpv4(a) ? std::nullopt : parseAddress(a, AddressFamily::ipv6);
            if (bytes && isGlobalScope(*bytes))
                list.push_back(entryOf(*iface, AddressFamily::ipv6, *bytes, a.prefixLength));
        }
    for (const NetworkInterface *iface : interfaces) {
        if (!iface->adminUp)
            continue;
        auto first = std::find_if(iface->addresses.begin(), iface->addresses.end(), isIpv4);
        if (first == iface->addresses.end())
            continue;
        auto bytes = parseAddress(*first, AddressFamily::ipv4);
        if (!bytes)
            continue;
        auto count = std::count_if(iface->addresses.begin(), iface->addresses.end(), isIpv4);
        for (long i = 0; i < count; ++i)
            list.push_back(entryOf(*iface, AddressFamily::ipv4, *bytes, first->prefixLength));
    }
    return list;
}

bool excludedByDefault(std::string_view interfaceName, const NodeProfile &node) {
    std::vector<std::string> excluded{"sppp", "lo"};
    for (const NetworkInterface &iface : node.interfaces)
        for (const InterfaceAddress &a : iface.addresses) {
            auto bytes = isIpv4(a) ? parseAddress(a, AddressFamily::ipv4) : std::nullopt;
            if (bytes && (*bytes)[0] == 127 && iface.adminUp)
                excluded.push_back(iface.name);
        }
    return std::any_of(excluded.begin(), excluded.end(), [&](const std::string &prefix) {
        return interfaceName.starts_with(prefix);
    });
}

std::vector<PublishedAddress> openMpi41Addresses(const NodeProfile &node) {
    const std::vector<PublishedAddress> list = openMpiInterfaceList(node);
    std::vector<PublishedAddress> published;
    for (std::uint16_t index : selectedInterfaces(node, list))
        for (const PublishedAddress &entry : list)
            if (entry.kernelIndex == index)
                published.push_back(entry);
    return published;
}

std::vector<PublishedAddress> openMpi50Addresses(const NodeProfile &node) {
    const std::vector<PublishedAddress> list = openMpiInterfaceList(node);
    std::vector<PublishedAddress> published;
    for (std::uint16_t index : selectedInterfaces(node, list))
        published.push_back(*std::find_if(list.begin(), list.end(), [&](const auto &entry) {
            return entry.kernelIndex == index;
        }));
    return published;
}

} // namespace stepmap::modexless
