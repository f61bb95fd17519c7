#pragma once

// What a node server serves of the interconnect profile (issue 12), filled
// by the server's owner before PmixHost::start(): the profile entries of the
// step's nodes, registered as node-level PMIx data (docs/profile-keys.md),
// and per-rank keys registered with the job data so that a client gets them
// from its own server, with no direct-modex request leaving the node.

#include "profile/interconnect_profile.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stepmap::server {

// Per rank: key and bytes.
using RankKeys = std::map<std::uint32_t, std::vector<std::pair<std::string, std::string>>>;

struct ServedProfile {
    // By plan node index; nullopt: no entry, or the entry is withheld
    // (stale). Entries past the plan's nodes are ignored.
    std::vector<std::optional<topology::NodeProfile>> nodes;
    // Extra keys per rank of the step, local or remote (the modex-less
    // launch's pre-computed "btl.tcp.4.1" / "btl.tcp.5.0" records): key and
    // bytes, each registered as a PMIX_BYTE_OBJECT in the rank's
    // PMIX_PROC_DATA. Ranks outside the step are ignored.
    RankKeys rankData;
    // Whether nodes get PMIX_FABRIC_DEVICES besides the stepmap.* keys. PMIx
    // holds each key of a nested array in a 552-byte pmix_info_t while it
    // registers and while each client unpacks its job data: the devices
    // cost every server and client several times what the stepmap.* keys
    // alone do (tests/bench/served_profile_bench).
    bool fabricDevices = true;
};

// The stepmap keys of a served node (docs/profile-keys.md), all PMIX_STRING.
inline constexpr const char *kProfileDigestKey = "stepmap.profile.digest";
inline constexpr const char *kProfileTimeKey = "stepmap.profile.time";
inline constexpr const char *kNetInterfacesKey = "stepmap.net.interfaces";
inline constexpr const char *kRdmaDevicesKey = "stepmap.rdma.devices";

} // namespace stepmap::server
