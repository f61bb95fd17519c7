#pragma once

// The profile rendezvous (issue 12): before a node server registers its
// step with PMIx, every server says whether its own entry of the site's
// interconnect profile matches its node, and the hub answers all of them at
// once with the nodes whose entries nobody may serve. So no node hands out
// another node's stale entry.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::wire {

// server -> hub, once, right after joining.
struct ProfileStateMsg {
    bool usable = false; // the entry matches this node (and its ports are free)
    std::string reason;  // why not, for srun -v; at most kMaxProfileReason bytes
};

// hub -> every server, once all have said theirs.
struct ProfileVerdictMsg {
    std::vector<std::uint32_t> withheld; // node indices, ascending, no repeats
};

inline constexpr std::size_t kMaxProfileReason = 4096;

std::string encode(const ProfileStateMsg &);
std::string encode(const ProfileVerdictMsg &);
std::optional<ProfileStateMsg> decodeProfileState(const std::string &);
// Every index below nodeCount, ascending, no repeats; nullopt otherwise.
std::optional<ProfileVerdictMsg> decodeProfileVerdict(const std::string &, std::uint32_t nodeCount);

} // namespace stepmap::wire
