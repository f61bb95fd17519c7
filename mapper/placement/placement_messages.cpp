#include "placement/placement_messages.hpp"

#include "base/quote.hpp"
#include "placement/policy_words.hpp"

namespace stepmap::detail {

std::string mapName(const MapOptions &options) {
    if (options.map == MapBy::PeList)
        return "pe-list=" + escaped(options.peListGiven);
    std::string word(mapByWord(options.map));
    if (word.rfind("BY", 0) == 0)
        word = word.substr(2);
    return lowerWord(word);
}

UserError overloadError(std::uint32_t app, std::uint32_t np, const MapOptions &options) {
    return UserError{"Binding application context " + std::to_string(app) + " (" +
                     std::to_string(np) + " processes, --map-by " + mapName(options) +
                     ", --bind-to " + lowerWord(bindToWord(options.bind)) +
                     ") would bind processes to more CPUs than the job holds.\nAdd "
                     ":overload-allowed to --bind-to to bind several processes per CPU, bind to "
                     "none, or request fewer processes."};
}

UserError failedMap(std::uint32_t app, std::uint32_t np, std::uint32_t placed,
                    const MapOptions &options) {
    return UserError{"Could not place application context " + std::to_string(app) + ": " +
                     std::to_string(placed) + " of " + std::to_string(np) +
                     " processes fit with --map-by " + mapName(options) + " and --bind-to " +
                     lowerWord(bindToWord(options.bind)) +
                     ".\nRequest fewer processes, allow oversubscription (--map-by "
                     ":OVERSUBSCRIBE) or overloading (--bind-to ...:overload-allowed)."};
}

UserError noFreeCpu(std::string_view node, BindTo bind) {
    return UserError{"node " + std::string(node) +
                     ": no free CPU is left to bind another process to (--bind-to " +
                     lowerWord(bindToWord(bind)) +
                     ").\nRequest fewer processes, add :overload-allowed to --bind-to to "
                     "bind several processes per CPU, or add :if-supported to run them "
                     "unbound."};
}

} // namespace stepmap::detail
