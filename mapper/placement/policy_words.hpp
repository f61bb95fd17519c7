#pragma once

// Internal to the mapper: PRRTE's three policy words as values (what the job
// map prints), the depth and hardware level of a mapping or binding policy,
// and the lower-case words messages use.

#include <optional>
#include <string>
#include <string_view>

#include "hosts/node_model.hpp"
#include "request/map_policy.hpp"

namespace stepmap::detail {

// The policy and the directives that travel with it. Kept whole because
// what mpirun prints (and whether it prints one line per application)
// compares them whole.
struct MappingWord {
    MapBy policy = MapBy::Default;
    bool noOversubscribe = false;
    bool subscribeGiven = false;
    bool span = false;
    bool ordered = false;
    bool given = false;

    bool operator==(const MappingWord &) const = default;
};

struct RankingWord {
    std::optional<RankBy> policy; // unset with byUser: ranked by the file
    bool byUser = false;
    bool given = false;

    bool operator==(const RankingWord &) const = default;
};

struct BindingWord {
    BindTo policy = BindTo::Default;
    bool ifSupported = false;
    bool overloadAllowed = false;
    bool overloadGiven = false;
    bool given = false; // set by the user (or forced by PE=n), not derived

    bool operator==(const BindingWord &) const = default;
};

// "BYCORE:NOOVERSUBSCRIBE:SPAN", "FILL" / "BYUSER", "CORE:IF-SUPPORTED".
std::string formatMapping(const MappingWord &word);
std::string formatRanking(const RankingWord &word);
std::string formatBinding(const BindingWord &word);

// PRRTE's numbering of levels for "bind above map" (1 none .. 8 hwthread).
int depthOf(BindTo to);
int depthOf(MapBy by);
// The hardware level of an object policy; nothing for the others.
std::optional<HwLevel> levelOf(MapBy by);
std::optional<HwLevel> levelOf(BindTo to);
// The object policies of a level (levelOf's inverses).
MapBy mapByOf(HwLevel level);
BindTo bindToOf(HwLevel level);

// ASCII lower case, for policy words in messages ("--bind-to numa").
std::string lowerWord(std::string_view word);

} // namespace stepmap::detail
