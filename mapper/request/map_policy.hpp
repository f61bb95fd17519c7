#pragma once

// --map-by, --rank-by and --bind-to, parsed: mpirun's (Open MPI 5 / PRRTE)
// vocabulary. Parsing checks the words; what a policy means for a given
// allocation (and whether it can be honoured there) is the planner's job.
//
// --map-by POLICY[:MODIFIER...]
//   slot, node, seq, rankfile, hwthread, core, l1cache, l2cache, l3cache,
//   numa, package (socket is a synonym), ppr:N:OBJECT, pe-list=LIST,
//   device=CLASS|NAME, or nothing (":MODIFIER" alone).
//   Modifiers: OVERSUBSCRIBE, NOOVERSUBSCRIBE, SPAN, PE=n, HWTCPUS,
//   CORECPUS, ORDERED, DISPLAY, FILE=path, NDEV=n, SHARED, INTERLEAVE[=level].
//   PRRTE's INHERIT, NOINHERIT (spawned jobs), NOLOCAL (head node),
//   DISPLAYDEVEL, DISPLAYALLOC and DONOTLAUNCH are refused as not supported.
// Words and modifiers are case-insensitive.

#include <optional>
#include <string>
#include <string_view>

#include "base/expected.hpp"

namespace stepmap {

enum class MapBy {
    Slot,
    Node,
    Default, // no policy given: PRRTE's default (see planner.hpp)
    Hwthread,
    Core,
    L1Cache,
    L2Cache,
    L3Cache,
    Numa,
    Package,
    Ppr,      // ppr:N:object, object in pprObject
    PeList,   // pe-list=..., list in peList
    Seq,      // one host per rank, from the sequence (plan_request.hpp)
    Rankfile, // from the rankfile (plan_request.hpp)
    Device,   // device=..., in device
};

struct MapPolicy {
    MapBy by = MapBy::Default;
    std::optional<bool> oversubscribe; // unset: not given (= no oversubscription)
    // ppr:N:OBJECT - N and the object: Node, Hwthread, Core, L1Cache..Package
    // or Device (ppr:N:device=CLASS, class in `device`).
    int pprCount = 0;
    MapBy pprObject = MapBy::Node;
    std::string pprText;         // "N:object" as written, for the job map's "PPR:"
    std::string peList;          // pe-list=0-3,6: logical core (or, HWTCPUS, PU) ids
    std::string device;          // device=gpu / a device name
    bool span = false;           // SPAN
    std::optional<int> pe;       // PE=n: CPUs per process
    std::optional<bool> hwtcpus; // HWTCPUS (true) / CORECPUS (false)
    bool ordered = false;        // ORDERED
    bool display = false;        // DISPLAY: print the job map
    std::string file;            // FILE=path: the rankfile or sequence file
    std::optional<int> ndev;     // NDEV=n (device)
    bool shared = false;         // SHARED (device)
    std::string interleave;      // INTERLEAVE[=level] (device), "" if not given

    bool operator==(const MapPolicy &) const = default;
};

// Errors name the value and list what is accepted.
Expected<MapPolicy> parseMapBy(std::string_view value);

// "BYCORE", "BYSLOT", "PPR", "PE-LIST", ... as PRRTE prints the policy word.
std::string_view mapByWord(MapBy by);

enum class RankBy { Slot, Node, Fill, Span };

// slot, node, fill, span (case-insensitive). Open MPI 4's object levels
// (core, package, ...) are refused: PRRTE ranks by those four only.
Expected<RankBy> parseRankBy(std::string_view value);

// "SLOT", "NODE", "FILL", "SPAN".
std::string_view rankByWord(RankBy by);

enum class BindTo { Default, None, Package, Numa, L3Cache, L2Cache, L1Cache, Core, Hwthread };

struct BindPolicy {
    BindTo to = BindTo::Default;  // Default: ":qualifiers" alone
    bool ifSupported = false;     // IF-SUPPORTED
    std::optional<bool> overload; // OVERLOAD-ALLOWED (true) / NO-OVERLOAD (false)
    bool report = false;          // REPORT
    std::optional<int> limit;     // LIMIT=n: at most n processes per object

    bool operator==(const BindPolicy &) const = default;
};

// --bind-to WORD[:QUALIFIER...]: none, hwthread, core, l1cache, l2cache,
// l3cache, numa, package (socket); qualifiers if-supported,
// overload-allowed, no-overload, report, limit=n.
Expected<BindPolicy> parseBindTo(std::string_view value);

// "NONE", "PACKAGE", ... "HWTHREAD".
std::string_view bindToWord(BindTo to);

} // namespace stepmap
