#pragma once

// How the ranks of a step exchange their connection data (the "modex") at
// MPI_Init: srun's --modex, passed to every node server.

#include "base/expected.hpp"

#include <string>

namespace stepmap::modex {

enum class ModexMode {
    Fence,   // the MPI library's own way: a data-collecting fence (Open MPI's default)
    Async,   // no collecting fence; a peer's data is fetched at first contact
    Profile, // none: every rank's TCP record is computed from the site's profile
};

// "fence", "async" or "profile"; an error naming `option` and the choices.
Expected<ModexMode> parseModexMode(const std::string &text, const std::string &option);
const char *modexModeName(ModexMode mode);

} // namespace stepmap::modex
