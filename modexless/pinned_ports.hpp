#pragma once

// The TCP listen port each rank is told to use (client_environment.hpp), so
// that its btl tcp record can be predicted, and the check that a port is
// free before the tasks start.

#include "base/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::modexless {

struct PortRange {
    std::uint16_t first = 0;
    std::uint16_t last = 0; // inclusive

    bool operator==(const PortRange &) const = default;
};

// "BASE-END" (decimal, 1 <= BASE <= END <= 65535), nothing else; `what` names
// the setting in the error, e.g. "modexless_ports".
Expected<PortRange> parsePortRange(std::string_view text, std::string_view what);

// SLURM_STEP_RESV_PORTS, Slurm's ports reserved for the step on this node
// ("12000-12015", or a list such as "12000,12004-12007"), in order; the
// node-local task index picks its port. Strict: an error names the text.
Expected<std::vector<std::uint16_t>> parseReservedPorts(std::string_view text);

// The kernel's ephemeral ports, /proc/sys/net/ipv4/ip_local_port_range
// ("32768\t60999\n").
Expected<PortRange> parseLocalPortRange(std::string_view text);

// A warning when pinned ports lie among the kernel's ephemeral ports (less
// those in net.ipv4.ip_local_reserved_ports, `reservedText` as in
// /proc/sys/net/ipv4/ip_local_reserved_ports, may be empty): any outgoing
// connection, a rank's own PMIx connection included, may take such a port
// before btl tcp binds it, and the rank then cannot listen (seen here).
// Nothing when they do not overlap.
std::optional<std::string> ephemeralOverlap(const PortRange &pinned, const PortRange &ephemeral,
                                            std::string_view reservedText);

// True when a TCP socket can bind the port on every IPv4 address (and on
// every IPv6 address, where the kernel has IPv6) right now, as btl tcp will
// (SO_REUSEADDR off); the sockets are closed at once. Open MPI 4.1 and 5.0
// give up on btl tcp when either listen socket cannot bind.
bool portIsFree(std::uint16_t port);

} // namespace stepmap::modexless
