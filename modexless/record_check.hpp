#pragma once

// Compares the TCP record a rank committed with the one predicted from the
// profile, for the server's log: a mismatch ends the step with its reason
// (a peer connecting to a wrong record would wait forever).

#include "modexless/tcp_record.hpp"

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
// vs 40003; its peers were handed the profile's and would wait on it, so the
// step ends (the profile is out of date, or ...; run it with --modex=async)". PMIx 4.2.2
// copies the job data, the predicted records with it, into every client as
// it connects: a real record cannot replace one a peer already holds.
std::string tcpRecordMismatchLine(std::uint32_t rank, std::string_view difference);

} // namespace stepmap::modexless
