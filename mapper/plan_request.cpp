#include "plan_request.hpp"

#include <string>

#include "launch_plan.hpp"
#include "parse_number.hpp"
#include "quote.hpp"

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
