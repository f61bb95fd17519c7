#include "request/rankfile.hpp"
#include "base/text_words.hpp"

#include <algorithm>
#include <map>

#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap {

namespace {

constexpr std::uint64_t kMaxRank = 1 << 24;

std::string where(std::string_view kind, std::string_view fileName, std::size_t line) {
    return std::string(kind) + " " + escaped(fileName, kShownPathBytes) + ", line " +
           std::to_string(line) + ": ";
}

// The text of each line with comments removed, "/* */" spanning lines.
std::vector<std::string> stripComments(std::string_view text) {
    std::vector<std::string> lines;
    std::string current;
    bool inBlock = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\n') {
            lines.push_back(current);
            current.clear();
            continue;
        }
        if (inBlock) {
            if (c == '*' && i + 1 < text.size() && text[i + 1] == '/') {
                inBlock = false;
                ++i;
            }
            continue;
        }
        if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
            inBlock = true;
            ++i;
            continue;
        }
        if (c == '#' || (c == '/' && i + 1 < text.size() && text[i + 1] == '/')) {
            while (i + 1 < text.size() && text[i + 1] != '\n')
                ++i;
            continue;
        }
        current += c;
    }
    lines.push_back(current);
    return lines;
}

} // namespace

Expected<Rankfile> parseRankfile(std::string_view text, std::string_view fileName) {
    const std::vector<std::string> lines = stripComments(text);
    std::map<std::uint32_t, RankfileEntry> byRank;
    for (std::size_t n = 0; n < lines.size(); ++n) {
        // "rank 0=host slot=1" with blanks allowed around '='.
        std::string line;
        for (char c : lines[n])
            line += c == '=' ? std::string(" = ") : std::string(1, c);
        const std::vector<std::string_view> tokens = detail::words(line);
        if (tokens.empty())
            continue;
        const std::string at = where("rankfile", fileName, n + 1);
        const auto syntax = [&] {
            return UserError{at + "expected 'rank N=HOST [slot=LIST]', got " +
                             quoted(detail::trimmed(lines[n]))};
        };
        if (tokens[0] != "rank" || tokens.size() < 4 || tokens[2] != "=")
            return syntax();
        const auto rank = detail::parseUnsigned(tokens[1], kMaxRank - 1);
        if (!rank)
            return UserError{at + "rank " + quoted(tokens[1]) + " is not a number below " +
                             std::to_string(kMaxRank)};
        RankfileEntry entry;
        entry.rank = static_cast<std::uint32_t>(*rank);
        std::string_view host = tokens[3];
        if (const std::size_t user = host.find('@'); user != std::string_view::npos)
            host = host.substr(user + 1);
        if (host.empty() || host == "=")
            return syntax();
        entry.host = std::string(host);
        if (tokens.size() > 4) {
            if ((tokens[4] != "slot" && tokens[4] != "slots") || tokens.size() != 7 ||
                tokens[5] != "=")
                return syntax();
            entry.slots = std::string(tokens[6]);
        }
        if (tokens.size() == 5 || tokens.size() == 6)
            return syntax();
        if (byRank.count(entry.rank) != 0)
            return UserError{at + "rank " + std::to_string(entry.rank) +
                             " is assigned twice (first as " + escaped(byRank[entry.rank].host) +
                             (byRank[entry.rank].slots.empty()
                                  ? std::string()
                                  : " slot=" + escaped(byRank[entry.rank].slots)) +
                             "); give each rank one line"};
        byRank.emplace(entry.rank, std::move(entry));
    }
    if (byRank.empty())
        return UserError{"rankfile " + escaped(fileName, kShownPathBytes) +
                         " assigns no rank (expected lines 'rank N=HOST [slot=LIST]')"};
    Rankfile result;
    result.fileName = std::string(fileName);
    for (auto &[rank, entry] : byRank)
        result.entries.push_back(std::move(entry));
    return result;
}

Expected<std::vector<SequenceEntry>> parseSequenceFile(std::string_view text,
                                                       std::string_view fileName) {
    std::vector<SequenceEntry> entries;
    std::size_t line = 0;
    std::size_t pos = 0;
    while (pos <= text.size()) {
        const std::size_t newline = text.find('\n', pos);
        const std::string_view raw = text.substr(
            pos, newline == std::string_view::npos ? std::string_view::npos : newline - pos);
        ++line;
        const std::string_view content = detail::trimmed(raw);
        if (!content.empty() && content.front() != '#') {
            const std::vector<std::string_view> tokens = detail::words(content);
            SequenceEntry entry;
            entry.host = std::string(tokens[0]);
            if (tokens.size() > 1)
                entry.cpus = std::string(tokens[1]);
            if (entry.host.find('=') != std::string::npos)
                return UserError{where("sequence file", fileName, line) + quoted(content) +
                                 " is not 'HOST [CPUS]' (one host per rank; a hostfile's "
                                 "slots= does not apply to --map-by seq)"};
            entries.push_back(std::move(entry));
        }
        if (newline == std::string_view::npos)
            break;
        pos = newline + 1;
    }
    if (entries.empty())
        return UserError{"sequence file " + escaped(fileName, kShownPathBytes) +
                         " names no host (one host per rank, in rank order)"};
    return entries;
}

} // namespace stepmap
