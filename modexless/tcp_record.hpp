#pragma once

// The bytes Open MPI's btl tcp commits under its modex key, predicted from a
// node's profile entry and the rank's pinned listen port (the same port for
// IPv4 and IPv6, see client_environment.hpp). Built field by field at Open
// MPI's offsets and byte orders; the layouts are described in README.md.

#include "modexless/interface_selection.hpp"
#include "profile/interconnect_profile.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::modexless {

enum class OpenMpiLayout {
    v41, // Open MPI 4.1: mca_btl_tcp_addr_t, 24 bytes, one per address
    v50, // Open MPI 5.0: mca_btl_tcp_modex_addr_t, 32 bytes, one per interface
};

// The modex key: "btl.tcp.4.1" or "btl.tcp.5.0".
std::string_view tcpModexKey(OpenMpiLayout layout);
// Bytes per published address: 24 or 32.
std::size_t tcpEntrySize(OpenMpiLayout layout);

// The whole byte object (the entries back to back); empty when Open MPI
// would publish nothing (no selected interface).
std::string tcpRecord(OpenMpiLayout layout, const std::vector<PublishedAddress> &addresses,
                      std::uint16_t port);
std::string openMpi41TcpRecord(const topology::NodeProfile &node, std::uint16_t port);
std::string openMpi50TcpRecord(const topology::NodeProfile &node, std::uint16_t port);

} // namespace stepmap::modexless
