#include "srun/multi_prog.hpp"

#include <charconv>
#include <limits>
#include <string>

#include "base/input_limits.hpp"
#include "base/quote.hpp"

namespace stepmap::plugin {

namespace {

// A rank number; one too large for a long reads as the largest long (the
// caller refuses it for its size).
bool number(std::string_view s, long &out) {
    if (s.empty() || s.front() == '-')
        return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (p != s.data() + s.size())
        return false;
    if (ec == std::errc::result_out_of_range) {
        out = std::numeric_limits<long>::max();
        return true;
    }
    return ec == std::errc();
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
            return "--multi-prog file " + escaped(fileName, kShownPathBytes) + ", line " +
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
        if (ok && hi >= kMaxRanks)
            return UserError{where() + "ranks " + quoted(ranks) + " go past rank " +
                             std::to_string(kMaxRanks - 1) + ": stepmap places at most " +
                             std::to_string(kMaxRanks) + " processes"};
        if (!ok || hi < lo || lo != next)
            return UserError{where() + "ranks " + quoted(ranks) +
                             " do not continue the previous lines; with stepmap each line is "
                             "an application context and must give the next consecutive ranks "
                             "as N or N-M (here starting at " +
                             std::to_string(next) + ")"};
        apps.push_back(static_cast<int>(hi - lo + 1));
        next = hi + 1;
    }
    if (apps.empty())
        return UserError{"--multi-prog file " + escaped(fileName, kShownPathBytes) +
                         " names no program"};
    return apps;
}

} // namespace stepmap::plugin
