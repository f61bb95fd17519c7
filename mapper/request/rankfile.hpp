#pragma once

// The two files mpirun places ranks by, parsed from their text (the caller
// reads the file; no I/O here): the rankfile (--map-by rankfile:FILE=...)
// and the sequence file (--map-by seq: one host per rank).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace stepmap {

// "rank N=HOST [slot=LIST]": HOST a node name (a "user@" prefix is
// dropped) or "+n<i>" (the i-th node of the mapping list); LIST the CPUs,
// in PRRTE's slot syntax: logical core ids "0-3,8" (PU ids with HWTCPUS),
// "P1" / "S1" (a whole package), "P0:1-2" / "0:1-2" (cores 1-2 of package
// 0, counted inside the package), items joined by ';'.
struct RankfileEntry {
    std::uint32_t rank = 0;
    std::string host;
    std::string slots; // "" when the line names no slot

    bool operator==(const RankfileEntry &) const = default;
};

struct Rankfile {
    std::string fileName;
    std::vector<RankfileEntry> entries; // ascending rank, each rank once

    bool operator==(const Rankfile &) const = default;
};

// Comments: '#' and "//" to the end of the line, "/* ... */". Errors name
// the file and line: "rankfile rf, line 3: rank 2 is assigned twice".
Expected<Rankfile> parseRankfile(std::string_view text, std::string_view fileName);

// One line per rank: "HOST [CPUS]", CPUS in the rankfile's slot syntax
// (LSF's affinity file adds NUMA and memory-policy columns, ignored).
struct SequenceEntry {
    std::string host;
    std::string cpus; // "" when the line names none

    bool operator==(const SequenceEntry &) const = default;
};

// '#' starts a comment line; blank lines are ignored.
Expected<std::vector<SequenceEntry>> parseSequenceFile(std::string_view text,
                                                       std::string_view fileName);

} // namespace stepmap
