#include "modexless/pinned_ports.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <netinet/in.h>
#include <optional>
#include <string>
#include <sys/socket.h>
#include <unistd.h>

namespace stepmap::modexless {

namespace {

std::optional<std::uint16_t> parsePort(std::string_view text) {
    unsigned value = 0;
    if (text.empty() || text.size() > 5 || text.front() == '+')
        return std::nullopt;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value == 0 || value > 65535)
        return std::nullopt;
    return static_cast<std::uint16_t>(value);
}

// "A-B" with A <= B, or "A" when single ports are allowed.
std::optional<PortRange> parseRangeText(std::string_view text, bool singleAllowed) {
    std::size_t dash = text.find('-');
    if (dash == std::string_view::npos) {
        auto port = singleAllowed ? parsePort(text) : std::nullopt;
        return port ? std::optional<PortRange>(PortRange{*port, *port}) : std::nullopt;
    }
    auto first = parsePort(text.substr(0, dash));
    auto last = parsePort(text.substr(dash + 1));
    if (!first || !last || *first > *last)
        return std::nullopt;
    return PortRange{*first, *last};
}

// Binds a TCP socket of this family to the port on the wildcard address.
// EAFNOSUPPORT (no IPv6 in the kernel) counts as free, as btl tcp ignores it.
bool canBind(int family, std::uint16_t port) {
    int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return errno == EAFNOSUPPORT;
    int off = 0, on = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &off, sizeof off);
    int rc;
    if (family == AF_INET) {
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_port = htons(port);
        a.sin_addr.s_addr = htonl(INADDR_ANY);
        rc = bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    } else {
        // btl tcp's IPv6 socket is IPv6-only, so it shares the port number.
        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
        sockaddr_in6 a{};
        a.sin6_family = AF_INET6;
        a.sin6_port = htons(port);
        a.sin6_addr = in6addr_any;
        rc = bind(fd, reinterpret_cast<sockaddr *>(&a), sizeof a);
    }
    close(fd);
    return rc == 0;
}

} // namespace

Expected<PortRange> parsePortRange(std::string_view text, std::string_view what) {
    if (auto range = parseRangeText(text, false))
        return *range;
    return UserError{std::string(what) + "=" + std::string(text) +
                     ": expected a port range BASE-END with 1 <= BASE <= END <= 65535, "
                     "e.g. 40000-40999"};
}

Expected<std::vector<std::uint16_t>> parseReservedPorts(std::string_view text) {
    std::vector<std::uint16_t> ports;
    std::string_view rest = text;
    while (true) {
        std::size_t comma = rest.find(',');
        auto range = parseRangeText(rest.substr(0, comma), true);
        if (!range || ports.size() + (range->last - range->first + 1u) > 65535)
            return UserError{"SLURM_STEP_RESV_PORTS=" + std::string(text) +
                             ": expected ports or port ranges separated by commas, "
                             "e.g. 12000-12015 or 12000,12004-12007"};
        for (std::uint32_t p = range->first; p <= range->last; ++p)
            ports.push_back(static_cast<std::uint16_t>(p));
        if (comma == std::string_view::npos)
            return ports;
        rest.remove_prefix(comma + 1);
    }
}

Expected<PortRange> parseLocalPortRange(std::string_view text) {
    std::string_view rest = text;
    while (!rest.empty() && (rest.back() == '\n' || rest.back() == ' '))
        rest.remove_suffix(1);
    std::size_t gap = rest.find_first_of(" \t");
    std::optional<PortRange> range;
    if (gap != std::string_view::npos) {
        std::string_view last = rest.substr(rest.find_first_not_of(" \t", gap));
        auto first = parsePort(rest.substr(0, gap));
        auto end = parsePort(last);
        if (first && end && *first <= *end)
            range = PortRange{*first, *end};
    }
    if (range)
        return *range;
    return UserError{"net.ipv4.ip_local_port_range '" + std::string(rest) +
                     "': expected two ports, the first not above the second"};
}

std::optional<std::string> ephemeralOverlap(const PortRange &pinned, const PortRange &ephemeral,
                                            std::string_view reservedText) {
    std::vector<std::uint16_t> reserved;
    while (!reservedText.empty() && (reservedText.back() == '\n' || reservedText.back() == ' '))
        reservedText.remove_suffix(1);
    if (auto parsed = parseReservedPorts(reservedText); parsed)
        reserved = std::move(parsed).value();
    std::uint32_t exposed = 0;
    for (std::uint32_t p = std::max(pinned.first, ephemeral.first);
         p <= std::min(pinned.last, ephemeral.last); ++p)
        if (std::find(reserved.begin(), reserved.end(), p) == reserved.end())
            ++exposed;
    if (exposed == 0)
        return std::nullopt;
    return "the port range " + std::to_string(pinned.first) + "-" + std::to_string(pinned.last) +
           " shares " + std::to_string(exposed) + " ports with the kernel's ephemeral ports " +
           std::to_string(ephemeral.first) + "-" + std::to_string(ephemeral.last) +
           " (net.ipv4.ip_local_port_range): any outgoing connection may take a rank's port; "
           "choose a range outside it or add it to net.ipv4.ip_local_reserved_ports";
}

bool portIsFree(std::uint16_t port) {
    return canBind(AF_INET, port) && canBind(AF_INET6, port);
}

} // namespace stepmap::modexless
