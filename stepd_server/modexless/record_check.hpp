#pragma once

// Compares the TCP record a rank committed with the one predicted from the
// profile, for the server's log: a mismatch is reported and the real record
// served instead of the predicted one.

#include "tcp_record.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepmap::modexless {

// Nothing when the bytes are equal; otherwise what differs, committed value
// first: "port 41003 vs 40003", "3 addresses vs 2", "address 10.0.0.2 vs
// 10.0.0.1 in entry 2", "kernel index 5 vs 4", "family IPv6 vs IPv4",
// "netmask /16 vs /24", "bandwidth 100 vs 10000 Mb/s", "the same addresses in
// another order", "a record of 50 bytes vs 48, not whole 24-byte entries".
std::optional<std::string> tcpRecordDifference(OpenMpiLayout layout, std::string_view committed,
                                               std::string_view expected);

// "rank 3 published a TCP record that differs from the profile's: port 41003
// vs 40003; serving the real one"
std::string tcpRecordMismatchLine(std::uint32_t rank, std::string_view difference);

} // namespace stepmap::modexless
