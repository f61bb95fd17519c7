#pragma once

// --host and --hostfile, parsed. No I/O: the caller reads the hostfile and
// passes its text. Both parsers expand hostlist expressions ("n[1-4]") and
// merge repeated names into one entry at the first mention, so every name
// appears once, in the order first written.
//
// Counting repeated names (seed 002): one mention without a count leaves
// slots unset (the planner reads it as 1 for --host, as mpirun does inside
// an allocation, and as Slurm's count for a hostfile line); with more
// mentions the counts add up, a mention without a count adding 1:
// "a:2,a" = 3, "a,a" = 2. In a hostfile,
// as in PRRTE's, only a host's first line may give slots=: "a slots=2\na"
// = 3, but a later line with slots= is an error (a second definition).
//
// Both parsers expand at most kMaxHostlistNames names in all (repeats
// included) and take slot counts up to kMaxRanks; the errors state the
// limits.
//
// Relative names "+n<i>" (the i-th allocated node, 0-based, as in PRRTE) are
// kept as written and resolved by the planner; "+e" (empty nodes) is not
// supported.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace stepmap {

struct HostEntry {
    std::string name;
    std::optional<int> slots;    // cap on the node's slots; unset: Slurm's
    std::optional<int> maxSlots; // bound on procs when oversubscribing

    bool operator==(const HostEntry &) const = default;
};

struct HostSpec {
    bool exclude = false; // "!^a,b": every node except these
    std::vector<HostEntry> entries;

    bool operator==(const HostSpec &) const = default;
};

// --host "a,b:2,a", "n[1-2]:2" (each expanded name gets the :2), "!^a,b".
// Counts must be positive; an excluded host takes no count.
Expected<HostSpec> parseHostOption(std::string_view value);

// Hostfile text: one host per line, "name [slots=N] [max_slots=M]"; '#'
// starts a comment (also after a host); blank lines are ignored. Errors name
// the file and line: "hostfile my_hosts, line 3: unknown attribute 'slot=2'
// (expected slots=N or max_slots=M)". A host repeated with slots= or with
// different max_slots values is an error; max_slots below slots is an error.
Expected<HostSpec> parseHostfile(std::string_view text, std::string_view fileName);

// Adds `later` (a further mention of the same host) to `earlier`, as the
// counting rule above says. Errors: both give max_slots and they differ; the
// sum exceeds max_slots or kMaxRanks.
Expected<HostEntry> mergeHostEntries(const HostEntry &earlier, const HostEntry &later);

} // namespace stepmap
