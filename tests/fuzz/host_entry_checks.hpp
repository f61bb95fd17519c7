#pragma once

// What --host and hostfile parsing promise of the entries they return
// (mapper/host_list.hpp), checked by both fuzz targets.

#include "fuzz_check.hpp"
#include "hosts/host_list.hpp"
#include "hosts/hostlist.hpp"

#include <set>
#include <string>
#include <vector>

namespace stepmap::fuzz {

inline void checkHostEntries(const std::vector<HostEntry> &entries) {
    check(!entries.empty(), "parsed to no entries");
    std::set<std::string> seen;
    for (const HostEntry &e : entries) {
        check(isValidHostName(e.name) || e.name.starts_with("+n"), "an invalid host name");
        check(seen.insert(e.name).second, "a name appears twice");
        check(!e.slots || *e.slots > 0, "non-positive slots");
        check(!e.maxSlots || *e.maxSlots > 0, "non-positive max_slots");
        check(!e.slots || !e.maxSlots || *e.slots <= *e.maxSlots, "slots above max_slots");
    }
}

} // namespace stepmap::fuzz
