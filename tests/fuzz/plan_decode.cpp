// decodePlan (mapper/launch_plan.hpp): the plan srun hands to every node in
// the environment. A plan it accepts must survive encodePlan and decodePlan
// unchanged.

#include "fuzz_check.hpp"
#include "plan/launch_plan.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto plan = decodePlan(fuzz::asText(data, size));
    if (!plan) {
        fuzz::check(plan.error().message.starts_with("invalid stepmap plan"),
                    "decodePlan error without its prefix");
        return 0;
    }
    const LaunchPlan &p = plan.value();
    fuzz::check(!p.nodes.empty() && !p.ranks.empty(), "decoded plan without nodes or ranks");
    fuzz::check(p.ranks.size() <= static_cast<std::size_t>(kMaxRanks), "more than kMaxRanks");
    for (std::uint32_t rank = 0; rank < p.ranks.size(); ++rank) {
        fuzz::check(p.ranks[rank].node < p.nodes.size(), "rank on a node out of range");
        p.bindingOf(rank);
        p.devicesOf(rank);
    }
    p.appCount();

    const auto again = decodePlan(encodePlan(p));
    fuzz::check(again.ok(), "encodePlan of a decoded plan does not decode");
    fuzz::check(again.value() == p, "plan changed in encodePlan/decodePlan");
    return 0;
}
