#include "plan_request.hpp"

#include <string>

#include "launch_plan.hpp"
#include "parse_number.hpp"

namespace stepmap {

Expected<int> parseProcessCount(std::string_view value) {
    const auto count = detail::parsePositiveInt(value);
    if (!count)
        return UserError{"process count '" + std::string(value) +
                         "': expected a positive number, e.g. -n 8"};
    if (*count > kMaxRanks)
        return UserError{"process count '" + std::string(value) + "': stepmap places at most " +
                         std::to_string(kMaxRanks) + " processes"};
    return *count;
}

} // namespace stepmap
