#pragma once

// Slurm hostlist expressions: "n[1-4,7]", "c[001-128]", "a[1-2]b[3-4]",
// "x,y[1-2]".

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "base/input_limits.hpp"

namespace stepmap {

// A host name stepmap accepts: non-empty, only letters, digits, '.', '_'
// and '-'.
bool isValidHostName(std::string_view name);

// Expands a comma-separated list of items. An item is literal text and
// bracketed range lists, "pre[1-3,7]post"; several brackets in one item
// expand as a product, the leftmost varying slowest ("a[1-2]b[3-4]" = a1b3,
// a1b4, a2b3, a2b4). A range is "N" or "LO-HI" with LO <= HI and at most 9
// digits; numbers are zero-padded to the width of LO ("c[001-128]" = c001 ..
// c128, "n[8-10]" = n8, n9, n10). Names keep the order written, duplicates
// included. Errors name the expression and what is wrong in it.
//
// The limits are checked before names are made, so an expression like
// "n[0-999999999]" costs nothing: more names than maxNames, a name longer
// than maxNameLength or names longer than maxTotalBytes together are errors
// stating the limit. A caller expanding many expressions (the lines of a
// host file) passes the names it has so far, which count against maxNames.
struct HostlistLimits {
    std::size_t maxNames = kMaxHostlistNames;
    std::size_t maxNameLength = kMaxHostNameLength;
    std::size_t maxTotalBytes = kMaxHostlistBytes;
    std::size_t namesSoFar = 0;
};
Expected<std::vector<std::string>> expandHostlist(std::string_view expr,
                                                  const HostlistLimits &limits = {});

// The inverse of expandHostlist, order-preserving: adjacent names that share
// a prefix and end in numbers go into one bracket, consecutive numbers into
// ranges: {"n1","n2","n3","n7"} -> "n[1-3,7]". For valid host names
// expandHostlist(compressHostlist(names)) == names. No names -> "".
std::string compressHostlist(const std::vector<std::string> &names);

} // namespace stepmap
