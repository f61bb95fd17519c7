#include "profile/interface_addresses.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>

#include "base/quote.hpp"
#include "base/text_words.hpp"

namespace stepmap::topology {
namespace {

using AddressList = std::unique_ptr<ifaddrs, decltype(&freeifaddrs)>;

using NamedAddress = std::pair<std::string, InterfaceAddress>;

// "fe800000000000005054fffe123456 02 40 20 80 eth0": address, index,
// prefix length (hex), scope, flags, name.
std::optional<NamedAddress> ifInet6Line(const std::vector<std::string_view> &parts) {
    if (parts.size() != 6 || parts[0].size() != 32 || parts[2].empty() || parts[2].size() > 2 ||
        parts[2].find_first_not_of("0123456789abcdef") != std::string_view::npos)
        return std::nullopt;
    std::string written;
    for (std::size_t i = 0; i < 32; i += 4)
        written += std::string(i == 0 ? "" : ":") + std::string(parts[0].substr(i, 4));
    const std::string prefix(parts[2]);
    written += "/" + std::to_string(std::strtoul(prefix.c_str(), nullptr, 16));
    const auto address = parseInterfaceAddress(written);
    if (!address)
        return std::nullopt;
    return NamedAddress{parts[5], *address};
}

// "eth0 10.0.0.5/24", the fixtures' stand-in for getifaddrs().
std::optional<NamedAddress> ipv4FixtureLine(const std::vector<std::string_view> &parts) {
    const auto address = parts.size() == 2 ? parseInterfaceAddress(parts[1]) : std::nullopt;
    if (!address || address->address.find(':') != std::string::npos)
        return std::nullopt;
    return NamedAddress{parts[0], *address};
}

// The addresses in a file of one address a line; no file, no addresses.
template <class ParseLine>
Expected<AddressesByInterface> readAddressFile(const RootedTree &tree, std::string_view path,
                                               ParseLine parseLine, const char *lineForm) {
    const auto text = tree.readIfPresent(path);
    if (!text)
        return text.error();
    AddressesByInterface found;
    const std::string content = text->value_or("");
    for (const std::string_view line : detail::splitAt(content, '\n')) {
        const std::vector<std::string_view> parts = detail::words(line);
        if (parts.empty())
            continue;
        const auto named = parseLine(parts);
        if (!named || !isProfileName(named->first))
            return UserError{tree.shown(path) + ": " + quoted(line) + " is not " + lineForm};
        found[named->first].push_back(named->second);
    }
    return found;
}

Expected<AddressesByInterface> liveIpv4() {
    ifaddrs *first = nullptr;
    if (getifaddrs(&first) != 0)
        return UserError{std::string("getifaddrs: ") + std::strerror(errno)};
    const AddressList owner(first, &freeifaddrs);
    AddressesByInterface found;
    for (const ifaddrs *entry = first; entry != nullptr; entry = entry->ifa_next) {
        if (entry->ifa_addr == nullptr || entry->ifa_netmask == nullptr ||
            entry->ifa_addr->sa_family != AF_INET)
            continue;
        sockaddr_in address{};
        sockaddr_in mask{};
        std::memcpy(&address, entry->ifa_addr, sizeof address);
        std::memcpy(&mask, entry->ifa_netmask, sizeof mask);
        std::array<char, INET_ADDRSTRLEN> text{};
        inet_ntop(AF_INET, &address.sin_addr, text.data(), text.size());
        const int prefix = std::popcount(ntohl(mask.sin_addr.s_addr));
        found[entry->ifa_name].push_back({text.data(), prefix});
    }
    return found;
}

bool ipv4First(const InterfaceAddress &a, const InterfaceAddress &b) {
    const bool aIs6 = a.address.find(':') != std::string::npos;
    const bool bIs6 = b.address.find(':') != std::string::npos;
    return std::tie(aIs6, a.address, a.prefixLength) < std::tie(bIs6, b.address, b.prefixLength);
}

} // namespace

Expected<AddressesByInterface> interfaceAddresses(const RootedTree &tree) {
    auto found = tree.root().empty()
                     ? liveIpv4()
                     : readAddressFile(tree, "/ipv4_addresses", ipv4FixtureLine,
                                       "'<interface> <IPv4 address>/<prefix length>'");
    if (!found)
        return found;
    const auto ipv6 =
        readAddressFile(tree, "/proc/net/if_inet6", ifInet6Line, "an if_inet6 address line");
    if (!ipv6)
        return ipv6.error();
    for (const auto &[name, addresses] : *ipv6)
        (*found)[name].insert((*found)[name].end(), addresses.begin(), addresses.end());
    for (auto &[name, addresses] : *found)
        std::sort(addresses.begin(), addresses.end(), ipv4First);
    return found;
}

} // namespace stepmap::topology
