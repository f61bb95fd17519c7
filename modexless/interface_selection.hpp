#pragma once

// Which addresses Open MPI's btl tcp publishes for a node, predicted from the
// node's profile entry with Open MPI's default settings (btl_tcp_if_include
// empty, btl_tcp_if_exclude "127.0.0.1/8,sppp", btl_tcp_links 1,
// btl_tcp_disable_family 0). Read in Open MPI 4.1.4 and 5.0.10 (opal/mca/if,
// btl_tcp_component.c) and checked against records committed by Open MPI
// 4.1.4 here; the rules and their limits are in README.md.

#include "profile/interconnect_profile.hpp"

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

namespace stepmap::modexless {

// Open MPI's MCA_BTL_TCP_AF_INET / MCA_BTL_TCP_AF_INET6 (not AF_INET/AF_INET6).
enum class AddressFamily : std::uint8_t { ipv4 = 0, ipv6 = 1 };

// One entry of Open MPI's interface list (opal_if_list) as btl tcp sees it.
struct PublishedAddress {
    std::uint16_t kernelIndex = 0; // Open MPI keeps 16 bits of the ifindex
    AddressFamily family = AddressFamily::ipv4;
    std::array<std::uint8_t, 16> address{}; // network order; IPv4 in the first 4 bytes
    std::uint32_t prefixLength = 0;
    std::uint32_t bandwidthMbps = 0; // ethtool speed, 100 when unknown

    bool operator==(const PublishedAddress &) const = default;
};

// Open MPI's interface list: first every global-scope IPv6 address of every
// interface (its linux_ipv6 component runs before posix_ipv4), then, for each
// administratively up interface, one entry per IPv4 address, each carrying
// the interface's first IPv4 address (SIOCGIFADDR answers the first address
// of the interface's label). Interfaces go by ifindex, addresses in the
// profile's order; interfaces without a kernel index (0) are left out.
std::vector<PublishedAddress> openMpiInterfaceList(const topology::NodeProfile &node);

// True when btl tcp's default exclude list drops the interface: its name
// starts with "sppp" or with the name of an interface holding an IPv4 address
// in 127.0.0.0/8 (the kernel's "lo", which profiles leave out, always does).
// Open MPI compares only the excluded name's length, so "lonely0" goes too.
bool excludedByDefault(std::string_view interfaceName, const topology::NodeProfile &node);

// The entries Open MPI 4.1 publishes: per selected interface (in order of
// first appearance in the interface list), every list entry of that
// interface.
std::vector<PublishedAddress> openMpi41Addresses(const topology::NodeProfile &node);

// The entries Open MPI 5.0 publishes: per selected interface, its first list
// entry only.
std::vector<PublishedAddress> openMpi50Addresses(const topology::NodeProfile &node);

} // namespace stepmap::modexless
