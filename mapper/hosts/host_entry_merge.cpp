#include "hosts/host_list.hpp"

#include <cstdint>

#include "base/input_limits.hpp"
#include "base/quote.hpp"

namespace stepmap {

Expected<HostEntry> mergeHostEntries(const HostEntry &earlier, const HostEntry &later) {
    HostEntry merged = earlier;
    const std::int64_t total =
        std::int64_t{earlier.slots.value_or(1)} + std::int64_t{later.slots.value_or(1)};
    if (total > kMaxRanks)
        return UserError{"host " + escaped(earlier.name) + ": the slot counts add up to " +
                         std::to_string(total) + ", above " + std::to_string(kMaxRanks) +
                         ", the most processes stepmap places"};
    merged.slots = static_cast<int>(total);
    if (later.maxSlots) {
        if (earlier.maxSlots && *earlier.maxSlots != *later.maxSlots)
            return UserError{"host " + escaped(earlier.name) +
                             ": max_slots=" + std::to_string(*later.maxSlots) +
                             " conflicts with max_slots=" + std::to_string(*earlier.maxSlots) +
                             " given earlier"};
        merged.maxSlots = later.maxSlots;
    }
    if (merged.maxSlots && *merged.slots > *merged.maxSlots)
        return UserError{"host " + escaped(earlier.name) + ": the slot counts add up to " +
                         std::to_string(*merged.slots) +
                         ", above max_slots=" + std::to_string(*merged.maxSlots)};
    return merged;
}

} // namespace stepmap
