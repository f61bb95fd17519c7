#include "hosts/host_list.hpp"

#include <unordered_map>

#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "base/text_words.hpp"
#include "hosts/host_names.hpp"

namespace stepmap {

namespace {

// Parses the words of one host line into a template entry (name unset).
Expected<HostEntry> parseAttributes(const std::vector<std::string_view> &words) {
    HostEntry entry;
    for (std::size_t i = 1; i < words.size(); ++i) {
        const std::string_view word = words[i];
        const std::size_t equals = word.find('=');
        const std::string_view key = word.substr(0, equals);
        std::optional<int> *target = nullptr;
        if (equals != std::string_view::npos && key == "slots")
            target = &entry.slots;
        else if (equals != std::string_view::npos && key == "max_slots")
            target = &entry.maxSlots;
        else
            return UserError{"unknown attribute " + quoted(word) +
                             " (expected slots=N or max_slots=M)"};
        if (target->has_value())
            return UserError{quoted(key) + " is given twice"};
        const std::string_view count = word.substr(equals + 1);
        *target = detail::parseCount(count, kMaxRanks);
        if (!target->has_value() && detail::isNumberAbove(count, kMaxRanks))
            return UserError{quoted(word) + ": " + std::string(key) + " is above " +
                             std::to_string(kMaxRanks) + ", the most processes stepmap places"};
        if (!target->has_value())
            return UserError{quoted(word) + ": " + std::string(key) + " must be a positive number"};
    }
    if (entry.slots && entry.maxSlots && *entry.maxSlots < *entry.slots)
        return UserError{"max_slots=" + std::to_string(*entry.maxSlots) +
                         " is less than slots=" + std::to_string(*entry.slots)};
    return entry;
}

} // namespace

Expected<HostSpec> parseHostfile(std::string_view text, std::string_view fileName) {
    const std::string file = "hostfile " + escaped(fileName, kShownPathBytes);
    detail::HostSpecBuilder builder;
    // The line each host was first listed on.
    std::unordered_map<std::string, std::size_t> firstLine;
    std::size_t mentions = 0; // names expanded so far, repeats included
    bool anyHost = false;
    std::size_t lineNumber = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t newline = text.find('\n', pos);
        std::string_view line = text.substr(
            pos, newline == std::string_view::npos ? std::string_view::npos : newline - pos);
        pos = newline == std::string_view::npos ? text.size() + 1 : newline + 1;
        ++lineNumber;

        line = line.substr(0, line.find('#'));
        const std::vector<std::string_view> words = detail::words(line);
        if (words.empty())
            continue;
        const std::string where = file + ", line " + std::to_string(lineNumber) + ": ";
        if (words[0].find('@') != std::string_view::npos)
            return UserError{where + quoted(words[0]) +
                             ": user@host entries are not supported (name the host only)"};
        auto names = detail::expandHostNames(words[0], mentions);
        if (!names)
            return UserError{where + names.error().message};
        mentions += names->size();
        auto attributes = parseAttributes(words);
        if (!attributes)
            return UserError{where + attributes.error().message};
        for (std::string &name : names.value()) {
            // As PRRTE: a repeated line adds a slot, so a slot count given
            // on it would be a second definition.
            const auto [first, isNew] = firstLine.try_emplace(name, lineNumber);
            if (!isNew && attributes->slots)
                return UserError{where + "host " + escaped(name) +
                                 " is listed again with slots= (first on line " +
                                 std::to_string(first->second) +
                                 "): a host's slot count is defined once; give slots= on one "
                                 "line, or repeat the host without slots= to add one slot per "
                                 "line"};
            HostEntry entry = attributes.value();
            entry.name = std::move(name);
            if (auto error = builder.add(std::move(entry)))
                return UserError{where + error->message};
        }
        anyHost = true;
    }
    if (!anyHost)
        return UserError{file + ": no hosts listed (only blank lines and comments)"};
    return builder.take(false);
}

} // namespace stepmap
