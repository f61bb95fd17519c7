#include "multi_prog.hpp"

#include <charconv>
#include <string>

namespace stepmap::plugin {

namespace {

bool number(std::string_view s, long &out) {
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && ec == std::errc() && p == s.data() + s.size() && out >= 0;
}

} // namespace

Expected<std::vector<int>> multiProgApps(std::string_view text, std::string_view fileName) {
    std::vector<int> apps;
    long next = 0; // the first rank the next line must start with
    std::size_t lineNo = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        std::string_view line =
            text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++lineNo;
        auto where = [&] {
            return "--multi-prog file " + std::string(fileName) + ", line " +
                   std::to_string(lineNo) + ": ";
        };
        auto first = line.find_first_not_of(" \t\r");
        if (first == std::string_view::npos || line[first] == '#')
            continue;
        line = line.substr(first);
        auto end = line.find_first_of(" \t");
        std::string_view ranks = line.substr(0, end);
        if (end == std::string_view::npos ||
            line.find_first_not_of(" \t\r", end) == std::string_view::npos)
            return UserError{where() + "expected 'RANKS PROGRAM [ARGS]'"};
        long lo = 0, hi = 0;
        auto dash = ranks.find('-');
        bool ok = dash == std::string_view::npos
                      ? number(ranks, lo) && (hi = lo, true)
                      : number(ranks.substr(0, dash), lo) && number(ranks.substr(dash + 1), hi);
        if (!ok || hi < lo || lo != next)
            return UserError{where() + "ranks '" + std::string(ranks) +
                             "' do not continue the previous lines; with stepmap each line is "
                             "an application context and must give the next consecutive ranks "
                             "as N or N-M (here starting at " +
                             std::to_string(next) + ")"};
        apps.push_back(static_cast<int>(hi - lo + 1));
        next = hi + 1;
    }
    if (apps.empty())
        return UserError{"--multi-prog file " + std::string(fileName) + " names no program"};
    return apps;
}

} // namespace stepmap::plugin
