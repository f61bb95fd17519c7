#include "modexless/tcp_record.hpp"

#include <bit>

namespace stepmap::modexless {

namespace {

// Open MPI fills the records from a zeroed buffer (memset in
// mca_btl_tcp_component_exchange, 4.1 and 5.0), so padding and 4.1's
// addr_inuse are zero. The port comes from getsockname (network order); the
// other integers are written by the host, in its order.
void putNetwork16(std::string &out, std::size_t offset, std::uint16_t value) {
    out[offset] = static_cast<char>(value >> 8);
    out[offset + 1] = static_cast<char>(value & 0xff);
}

template <class T> void putHost(std::string &out, std::size_t offset, T value) {
    for (std::size_t i = 0; i < sizeof(T); ++i) {
        std::size_t shift = std::endian::native == std::endian::little ? i : sizeof(T) - 1 - i;
        out[offset + i] = static_cast<char>((value >> (8 * shift)) & 0xff);
    }
}

void putAddress(std::string &out, std::size_t offset, const PublishedAddress &a) {
    std::size_t length = a.family == AddressFamily::ipv4 ? 4 : 16;
    for (std::size_t i = 0; i < length; ++i)
        out[offset + i] = static_cast<char>(a.address[i]);
}

// mca_btl_tcp_addr_t (4.1 btl_tcp_addr.h): addr_inet[16] @0, addr_port @16,
// addr_ifkindex (uint16) @18, addr_inuse @20, addr_family @22, pad @23.
void put41(std::string &out, std::size_t at, const PublishedAddress &a, std::uint16_t port) {
    putAddress(out, at, a);
    putNetwork16(out, at + 16, port);
    putHost<std::uint16_t>(out, at + 18, a.kernelIndex);
    out[at + 22] = static_cast<char>(a.family);
}

// mca_btl_tcp_modex_addr_t (5.0 btl_tcp_addr.h, static-asserted 32 bytes):
// addr[16] @0, addr_ifkindex @16, addr_mask @20, addr_bandwidth @24 (uint32),
// addr_port @28, addr_family @30, padding @31.
void put50(std::string &out, std::size_t at, const PublishedAddress &a, std::uint16_t port) {
    putAddress(out, at, a);
    putHost<std::uint32_t>(out, at + 16, a.kernelIndex);
    putHost<std::uint32_t>(out, at + 20, a.prefixLength);
    putHost<std::uint32_t>(out, at + 24, a.bandwidthMbps);
    putNetwork16(out, at + 28, port);
    out[at + 30] = static_cast<char>(a.family);
}

} // namespace

std::string_view tcpModexKey(OpenMpiLayout layout) {
    return layout == OpenMpiLayout::v41 ? "btl.tcp.4.1" : "btl.tcp.5.0";
}

std::size_t tcpEntrySize(OpenMpiLayout layout) {
    return layout == OpenMpiLayout::v41 ? 24 : 32;
}

std::string tcpRecord(OpenMpiLayout layout, const std::vector<PublishedAddress> &addresses,
                      std::uint16_t port) {
    const std::size_t size = tcpEntrySize(layout);
    std::string out(addresses.size() * size, '\0');
    for (std::size_t i = 0; i < addresses.size(); ++i) {
        if (layout == OpenMpiLayout::v41)
            put41(out, i * size, addresses[i], port);
        else
            put50(out, i * size, addresses[i], port);
    }
    return out;
}

std::string openMpi41TcpRecord(const topology::NodeProfile &node, std::uint16_t port) {
    return tcpRecord(OpenMpiLayout::v41, openMpi41Addresses(node), port);
}

std::string openMpi50TcpRecord(const topology::NodeProfile &node, std::uint16_t port) {
    return tcpRecord(OpenMpiLayout::v50, openMpi50Addresses(node), port);
}

} // namespace stepmap::modexless
