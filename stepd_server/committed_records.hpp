#pragma once

// The modex-less launch's safety net: once a node's ranks reach their
// first barrier (after each committed its TCP record), the record each
// committed is compared with the one the other nodes were handed. A peer
// that connects to a wrong record waits forever; a mismatch must end the
// step with its reason instead.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::server {

// What a local rank was predicted to commit, per Open MPI layout (empty:
// nothing predicted for that layout).
struct ExpectedRecords {
    std::uint32_t rank = 0;
    std::string v41, v50;
};

struct RecordMismatch {
    std::uint32_t rank = 0;
    std::string line; // for the log and srun: which rank, what differs
};

// Reads what rank committed under key (PmixHost::committedValue).
using ReadCommitted = std::function<void(std::uint32_t rank, const std::string &key,
                                         std::function<void(std::optional<std::string>)>)>;

// Checks each rank in turn: its btl.tcp.4.1 record, else its btl.tcp.5.0
// one; a rank with neither (no btl tcp) passes. done gets the first
// mismatch, or nothing.
void checkCommittedRecords(std::vector<ExpectedRecords> ranks, ReadCommitted read,
                           std::function<void(std::optional<RecordMismatch>)> done);

} // namespace stepmap::server
