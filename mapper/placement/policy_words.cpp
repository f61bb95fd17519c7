#include "placement/policy_words.hpp"

#include <array>
#include <utility>

namespace stepmap::detail {

namespace {

// One row per object level, widest first: the level, its map-by and
// bind-to words and PRRTE's depth.
struct LevelRow {
    HwLevel level;
    MapBy map;
    BindTo bind;
    int depth;
};

constexpr std::array<LevelRow, kHwLevelCount> kLevels{{
    {HwLevel::Package, MapBy::Package, BindTo::Package, 2},
    {HwLevel::Numa, MapBy::Numa, BindTo::Numa, 3},
    {HwLevel::L3Cache, MapBy::L3Cache, BindTo::L3Cache, 4},
    {HwLevel::L2Cache, MapBy::L2Cache, BindTo::L2Cache, 5},
    {HwLevel::L1Cache, MapBy::L1Cache, BindTo::L1Cache, 6},
    {HwLevel::Core, MapBy::Core, BindTo::Core, 7},
    {HwLevel::Pu, MapBy::Hwthread, BindTo::Hwthread, 8},
}};

const LevelRow *rowOf(MapBy by) {
    for (const LevelRow &row : kLevels) {
        if (row.map == by)
            return &row;
    }
    return nullptr;
}

const LevelRow *rowOf(BindTo to) {
    for (const LevelRow &row : kLevels) {
        if (row.bind == to)
            return &row;
    }
    return nullptr;
}

const LevelRow &rowOf(HwLevel level) {
    return kLevels[static_cast<std::size_t>(level)];
}

} // namespace

std::string formatMapping(const MappingWord &word) {
    std::string out(mapByWord(word.policy));
    if (word.noOversubscribe)
        out += ":NOOVERSUBSCRIBE";
    else if (word.subscribeGiven)
        out += ":OVERSUBSCRIBE";
    if (word.span)
        out += ":SPAN";
    if (word.ordered)
        out += ":ORDERED";
    return out;
}

std::string formatRanking(const RankingWord &word) {
    if (word.byUser)
        return "BYUSER";
    if (!word.policy)
        return "UNKNOWN";
    return std::string(rankByWord(*word.policy));
}

std::string formatBinding(const BindingWord &word) {
    std::string out = word.policy == BindTo::Default ? std::string("UNKNOWN")
                                                     : std::string(bindToWord(word.policy));
    if (word.ifSupported && word.overloadAllowed)
        out += ":IF-SUPPORTED:OVERLOAD-ALLOWED";
    else if (word.overloadAllowed)
        out += ":OVERLOAD-ALLOWED";
    else if (word.ifSupported)
        out += ":IF-SUPPORTED";
    return out;
}

int depthOf(BindTo to) {
    const LevelRow *row = rowOf(to);
    return row ? row->depth : 1;
}

int depthOf(MapBy by) {
    const LevelRow *row = rowOf(by);
    return row ? row->depth : 1;
}

std::optional<HwLevel> levelOf(MapBy by) {
    const LevelRow *row = rowOf(by);
    return row ? std::optional(row->level) : std::nullopt;
}

std::optional<HwLevel> levelOf(BindTo to) {
    const LevelRow *row = rowOf(to);
    return row ? std::optional(row->level) : std::nullopt;
}

MapBy mapByOf(HwLevel level) {
    return rowOf(level).map;
}

BindTo bindToOf(HwLevel level) {
    return rowOf(level).bind;
}

std::string lowerWord(std::string_view word) {
    std::string out(word);
    for (char &c : out)
        c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return out;
}

} // namespace stepmap::detail
