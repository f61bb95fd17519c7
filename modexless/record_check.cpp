#include "modexless/record_check.hpp"

#include <arpa/inet.h>

#include <algorithm>
#include <bit>
#include <vector>

namespace stepmap::modexless {

namespace {

// One entry read back at Open MPI's offsets (see tcp_record.cpp).
struct Entry {
    std::uint32_t kernelIndex = 0;
    std::uint8_t family = 0;
    std::string address; // 16 bytes
    std::uint16_t port = 0;
    std::uint32_t mask = 0;
    std::uint32_t bandwidth = 0;
    std::string unused; // 4.1's addr_inuse and padding, 5.0's padding

    bool operator==(const Entry &) const = default;
    auto operator<=>(const Entry &) const = default;
};

std::uint32_t host(std::string_view bytes, std::size_t offset, std::size_t size) {
    std::uint32_t value = 0;
    for (std::size_t i = 0; i < size; ++i) {
        std::size_t shift = std::endian::native == std::endian::little ? i : size - 1 - i;
        value |= static_cast<std::uint32_t>(static_cast<std::uint8_t>(bytes[offset + i]))
                 << (8 * shift);
    }
    return value;
}

std::uint16_t network16(std::string_view bytes, std::size_t offset) {
    return static_cast<std::uint16_t>(static_cast<std::uint8_t>(bytes[offset]) << 8 |
                                      static_cast<std::uint8_t>(bytes[offset + 1]));
}

Entry decode(OpenMpiLayout layout, std::string_view e) {
    Entry entry;
    entry.address = std::string(e.substr(0, 16));
    if (layout == OpenMpiLayout::v41) {
        entry.port = network16(e, 16);
        entry.kernelIndex = host(e, 18, 2);
        entry.family = static_cast<std::uint8_t>(e[22]);
        entry.unused = std::string(e.substr(20, 2)) + e[23];
    } else {
        entry.kernelIndex = host(e, 16, 4);
        entry.mask = host(e, 20, 4);
        entry.bandwidth = host(e, 24, 4);
        entry.port = network16(e, 28);
        entry.family = static_cast<std::uint8_t>(e[30]);
        entry.unused = std::string(1, e[31]);
    }
    return entry;
}

std::vector<Entry> decodeAll(OpenMpiLayout layout, std::string_view bytes) {
    std::vector<Entry> entries;
    const std::size_t size = tcpEntrySize(layout);
    for (std::size_t at = 0; at + size <= bytes.size(); at += size)
        entries.push_back(decode(layout, bytes.substr(at, size)));
    return entries;
}

std::string familyText(std::uint8_t family) {
    if (family == static_cast<std::uint8_t>(AddressFamily::ipv4))
        return "IPv4";
    if (family == static_cast<std::uint8_t>(AddressFamily::ipv6))
        return "IPv6";
    return "family " + std::to_string(family);
}

std::string addressText(const Entry &e) {
    char text[INET6_ADDRSTRLEN] = {};
    bool v6 = e.family == static_cast<std::uint8_t>(AddressFamily::ipv6);
    if (inet_ntop(v6 ? AF_INET6 : AF_INET, e.address.data(), text, sizeof text) == nullptr)
        return "?";
    return text;
}

template <class T>
void compare(std::vector<std::string> &out, const char *what, T a, T b, const char *unit = "") {
    if (a != b)
        out.push_back(std::string(what) + std::to_string(a) + " vs " + std::to_string(b) + unit);
}

// The fields that differ between two entries, committed value first.
std::vector<std::string> fieldDifferences(const Entry &a, const Entry &b) {
    std::vector<std::string> out;
    if (a.family != b.family)
        out.push_back("family " + familyText(a.family) + " vs " + familyText(b.family));
    else if (a.address != b.address)
        out.push_back("address " + addressText(a) + " vs " + addressText(b));
    compare(out, "kernel index ", a.kernelIndex, b.kernelIndex);
    compare(out, "port ", a.port, b.port);
    if (a.mask != b.mask)
        out.push_back("netmask /" + std::to_string(a.mask) + " vs /" + std::to_string(b.mask));
    compare(out, "bandwidth ", a.bandwidth, b.bandwidth, " Mb/s");
    if (a.unused != b.unused)
        out.push_back("unused bytes");
    return out;
}

std::string joined(const std::vector<std::string> &parts) {
    std::string text;
    for (const std::string &part : parts)
        text += (text.empty() ? "" : ", ") + part;
    return text;
}

} // namespace

std::optional<std::string> tcpRecordDifference(OpenMpiLayout layout, std::string_view committed,
                                               std::string_view expected) {
    if (committed == expected)
        return std::nullopt;
    const std::size_t size = tcpEntrySize(layout);
    if (committed.size() % size != 0 || expected.size() % size != 0)
        return "a record of " + std::to_string(committed.size()) + " bytes vs " +
               std::to_string(expected.size()) + ", not whole " + std::to_string(size) +
               "-byte entries";
    std::vector<Entry> a = decodeAll(layout, committed);
    std::vector<Entry> b = decodeAll(layout, expected);
    if (a.size() != b.size())
        return std::to_string(a.size()) + (a.size() == 1 ? " address vs " : " addresses vs ") +
               std::to_string(b.size());
    std::vector<Entry> sortedA = a, sortedB = b;
    std::sort(sortedA.begin(), sortedA.end());
    std::sort(sortedB.begin(), sortedB.end());
    if (sortedA == sortedB)
        return "the same addresses in another order";
    std::size_t i = 0;
    while (a[i] == b[i])
        ++i;
    const std::vector<std::string> fields = fieldDifferences(a[i], b[i]);
    std::string text = joined(fields);
    // A port alone differs in every entry: no entry to name.
    const bool portOnly = fields.size() == 1 && a[i].port != b[i].port;
    if (a.size() > 1 && !portOnly)
        text += " in entry " + std::to_string(i + 1);
    return text;
}

std::string tcpRecordMismatchLine(std::uint32_t rank, std::string_view difference) {
    return "rank " + std::to_string(rank) +
           " published a TCP record that differs from the profile's: " + std::string(difference) +
           "; its peers were handed the profile's and would wait on it, so the step ends (the "
           "profile is out of date, or Open MPI reads interface settings stepmap does not see, "
           "e.g. btl_tcp_if_include in an mca-params.conf; run it with --modex=async)";
}

} // namespace stepmap::modexless
