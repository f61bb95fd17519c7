#include "hosts/host_list.hpp"

#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "hosts/host_names.hpp"

namespace stepmap {

namespace {

// Splits at the commas outside brackets: "n[1,3]:2,b" = "n[1,3]:2", "b".
std::vector<std::string_view> splitItems(std::string_view list) {
    std::vector<std::string_view> items;
    std::size_t start = 0;
    int depth = 0;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i] == '[')
            ++depth;
        else if (list[i] == ']' && depth > 0)
            --depth;
        else if (list[i] == ',' && depth == 0) {
            items.push_back(list.substr(start, i - start));
            start = i + 1;
        }
    }
    items.push_back(list.substr(start));
    return items;
}

} // namespace

Expected<HostSpec> parseHostOption(std::string_view value) {
    const std::string context = "--host " + quoted(value) + ": ";
    if (value.empty())
        return UserError{"--host: empty host list (expected e.g. --host a,b:2 or --host '!^a')"};
    const bool exclude = value.substr(0, 2) == "!^";
    const std::string_view list = exclude ? value.substr(2) : value;
    if (list.empty())
        return UserError{context + "no hosts listed after '!^'"};

    detail::HostSpecBuilder builder;
    std::size_t namesSoFar = 0;
    for (std::string_view item : splitItems(list)) {
        if (item.empty())
            return UserError{context + "empty entry (check for a stray ',')"};
        std::optional<int> slots;
        const std::size_t colon = item.rfind(':');
        if (colon != std::string_view::npos) {
            const std::string_view count = item.substr(colon + 1);
            if (exclude)
                return UserError{context + quoted(item) + ": an excluded host takes no slot count"};
            slots = detail::parseCount(count, kMaxRanks);
            if (!slots && detail::isNumberAbove(count, kMaxRanks))
                return UserError{context + quoted(item) + ": the slot count is above " +
                                 std::to_string(kMaxRanks) + ", the most processes stepmap places"};
            if (!slots)
                return UserError{context + quoted(item) + " has an invalid slot count " +
                                 quoted(count) +
                                 " (expected NAME or NAME:N with N a positive number)"};
            item = item.substr(0, colon);
        }
        auto names = detail::expandHostNames(item, namesSoFar);
        if (!names)
            return UserError{context + names.error().message};
        namesSoFar += names->size();
        for (std::string &name : names.value()) {
            if (auto error = builder.add(HostEntry{std::move(name), slots, std::nullopt}))
                return UserError{context + error->message};
        }
    }
    return builder.take(exclude);
}

} // namespace stepmap
