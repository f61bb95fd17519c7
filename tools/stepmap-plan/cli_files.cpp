#include "cli_files.hpp"

#include "os/user_file.hpp"
#include "request/request_options.hpp"

namespace stepmap::cli {

Expected<std::string> readTextFile(const std::string &path, std::string_view option) {
    auto text = readBoundedFile(path);
    if (!text)
        return unreadableFile(option, path, text.error());
    return text;
}

} // namespace stepmap::cli
