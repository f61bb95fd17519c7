#pragma once

// Internal to the mapper: the rules the planner's stages (planner_stages.hpp)
// resolve and check policies by - PRRTE's defaults and refusals, the same
// for the job and for each application context. `where` prefixes messages
// ("" for the job, "application context N: " for one application).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/allocation.hpp"
#include "placement/node_filter.hpp"
#include "placement/placement.hpp"
#include "request/map_policy.hpp"

namespace stepmap::detail {

// The policy as --map-by spells it: "slot" for no policy, "core", "ppr".
std::string mapWord(MapBy by);
// "pe-list=0-3" for a pe-list, else mapWord.
std::string describeMap(const MapOptions &options);

// A --bind-to that binds (not none, not just qualifiers).
bool bindsSomething(const std::optional<BindPolicy> &bind);
// The binding word of a --bind-to as given.
BindingWord bindingWordOf(const BindPolicy &policy);

// PRRTE's default binding for a mapping (set_default_binding): the CPU for
// PE=n and pe-list, the mapped object, else core up to 2 processes and NUMA
// above.
BindTo defaultBinding(const MapOptions &options, std::uint32_t nprocs);
// The default ranking: node for map-by node, slot for slot (and ppr,
// pe-list, seq), span with SPAN, fill for the object levels.
RankBy defaultRanking(MapBy map, bool span);
// stepmap: slot/slot and node/node number the processes as placed.
bool ranksInPlacementOrder(MapBy map, RankBy rank);

// Sets the options one mapping policy brings (object level, ppr, pe-list,
// devices, PE=n, HWTCPUS), mapping by `by`.
void applyMapPolicy(MapOptions &options, const MapPolicy &map, MapBy by);

// PE=n and ORDERED bind each process to CPUs: the binding must be core or
// hwthread (forced when not given; `word` and options.bind updated). Also
// the levels PE=n cannot map by.
std::optional<UserError> checkCpuBinding(MapOptions &options, BindingWord &word,
                                         std::string_view where);
// Binding above the mapped object.
std::optional<UserError> checkBindAbove(const MapOptions &options, std::string_view where);

// Whether every selected node with a model has one hwthread per core: there
// mpirun takes cores for hwthreads, so binding to a core when mapping by
// hwthread binds to that hwthread instead of being refused.
bool coresAreHwthreads(const Allocation &allocation, const std::vector<NodeSlots> &list);

// --bind-to core under --map-by hwthread on such nodes: hwthread (the same
// CPUs), as mpirun binds.
void bindHwthreadForCore(MapOptions &options, bool coresAreHwthreads);
// rank-by fill/span without an object map.
std::optional<UserError> checkRankNeedsObject(const MapOptions &options, std::string_view where);
// A pe-list's ids must exist on every modeled node of the list.
std::optional<UserError> checkPeList(const MapOptions &options, const std::vector<NodeSlots> &list,
                                     const Allocation &allocation, std::string_view where);

} // namespace stepmap::detail
