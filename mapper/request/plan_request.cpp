#include "request/plan_request.hpp"

#include <string>

#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "plan/launch_plan.hpp"

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

} // namespace stepmap
