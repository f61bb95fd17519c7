#include "protocol/modex/modex_mode.hpp"

namespace stepmap::modex {

Expected<ModexMode> parseModexMode(const std::string &text, const std::string &option) {
    if (text == "fence")
        return ModexMode::Fence;
    if (text == "async")
        return ModexMode::Async;
    if (text == "profile")
        return ModexMode::Profile;
    return UserError{option + "=" + text +
                     " is not a modex mode; use fence (the MPI library's own data exchange at "
                     "MPI_Init), async (each peer's data fetched at first contact) or profile "
                     "(no exchange: the data comes from the site's interconnect profile)"};
}

const char *modexModeName(ModexMode mode) {
    switch (mode) {
    case ModexMode::Async:
        return "async";
    case ModexMode::Profile:
        return "profile";
    case ModexMode::Fence:
        break;
    }
    return "fence";
}

} // namespace stepmap::modex
