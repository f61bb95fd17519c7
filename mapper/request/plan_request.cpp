#include "request/plan_request.hpp"

#include <string>

#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap {

Expected<int> parseProcessCount(std::string_view value) {
    const auto count = detail::parseCount(value, kMaxRanks);
    if (count)
        return *count;
    if (detail::isNumberAbove(value, kMaxRanks))
        return UserError{"process count " + quoted(value) + ": stepmap places at most " +
                         std::to_string(kMaxRanks) + " processes"};
    return UserError{"process count " + quoted(value) + ": expected a positive number, e.g. -n 8"};
}

bool usesParaStationPlacement(const PlanRequest &request) {
    const ParaStationRequest &ps = request.parastation;
    return ps.loopNodesFirst || ps.nodesSort || ps.threadsPerProcess || ps.pool ||
           (request.overbook && ps.sources.overbook != ParaStationSources{}.overbook);
}

bool parastationPins(const PlanRequest &request) {
    return usesParaStationPlacement(request) && request.parastation.pin &&
           !(request.bind && request.bind->to == BindTo::None);
}

bool needsHardware(const PlanRequest &request) {
    if (parastationPins(request))
        return true;
    auto objectMap = [](const MapPolicy &m) {
        return m.by != MapBy::Slot && m.by != MapBy::Node && m.by != MapBy::Default &&
               m.by != MapBy::Seq;
    };
    auto binds = [](const std::optional<BindPolicy> &b) { return b && b->to != BindTo::None; };
    if (objectMap(request.map) || binds(request.bind) || request.map.pe)
        return true;
    for (const AppRequest &app : request.apps)
        if ((app.map && (objectMap(*app.map) || app.map->pe)) || binds(app.bind))
            return true;
    return false;
}

} // namespace stepmap
