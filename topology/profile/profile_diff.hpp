#pragma once

// What differs between a node's profile entry and the node as probed now,
// in sentences for people: `stepmap-profile check` prints them, and a node
// server explains with them why it does not serve its own stale entry. No
// I/O: two values in, a list out.
//
// A difference in a static field (the ones the digest covers: see
// interconnect_profile.hpp) makes the entry stale; a difference in an
// operational one (operstate, administrative state, speed, port state,
// physical state, rate) is only a note. Interfaces, RDMA devices and ports
// are matched by name and number; an interface that disappeared while
// another with its MAC address appeared is reported as renamed.

#include <string>
#include <vector>

#include "profile/interconnect_profile.hpp"

namespace stepmap::topology {

struct ProfileDifference {
    bool stale = false; // a static field differs: the entry no longer fits
    std::string text;   // "interface eth0: MTU was 9000, now 1500"

    bool operator==(const ProfileDifference &) const = default;
};

// Stale differences first, then notes, each in the order of the entry.
// Empty when the two agree in every field but the time and method of
// profiling. Whenever the static digests of the two differ, at least one
// difference is stale.
std::vector<ProfileDifference> profileDifferences(const NodeProfile &recorded,
                                                  const NodeProfile &live);

bool anyStale(const std::vector<ProfileDifference> &differences);

} // namespace stepmap::topology
