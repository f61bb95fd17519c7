// expandHostlist and compressHostlist (mapper/hostlist.hpp). The whole input
// is expanded as one expression; its lines are also taken as a list of names
// to compress. Both must round-trip for valid host names.

#include "hosts/hostlist.hpp"
#include "fuzz_check.hpp"

#include <algorithm>

using namespace stepmap;

namespace {

void roundTrip(const std::vector<std::string> &names) {
    const std::string expr = compressHostlist(names);
    if (names.empty()) {
        fuzz::check(expr.empty(), "no names compress to a non-empty expression");
        return;
    }
    const auto back = expandHostlist(expr);
    fuzz::check(back.ok(), "compressHostlist wrote an expression expandHostlist refuses");
    fuzz::check(back.value() == names, "compress/expand changed the names");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text = fuzz::asText(data, size);

    const auto names = expandHostlist(text);
    if (names) {
        fuzz::check(!names->empty(), "an expansion without names");
        fuzz::check(std::all_of(names->begin(), names->end(), isValidHostName),
                    "expandHostlist produced an invalid host name");
        roundTrip(names.value());
    }

    std::vector<std::string> lines = fuzz::splitAt(text, '\n');
    std::erase_if(lines, [](const std::string &name) { return !isValidHostName(name); });
    roundTrip(lines);
    return 0;
}
