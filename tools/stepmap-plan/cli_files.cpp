#include "cli_files.hpp"

#include "base/quote.hpp"
#include "user_file.hpp"

namespace stepmap::cli {

Expected<std::string> readTextFile(const std::string &path, std::string_view option) {
    auto text = readBoundedFile(path);
    if (!text)
        return UserError{"cannot read " + std::string(option) + " " +
                         quoted(path, kShownPathBytes) + ": " + text.error().message};
    return text;
}

} // namespace stepmap::cli
