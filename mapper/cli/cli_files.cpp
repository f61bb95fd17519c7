#include "cli_files.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace stepmap::cli {

Expected<std::string> readTextFile(const std::string &path, std::string_view option) {
    errno = 0;
    std::ifstream in(path);
    if (!in) {
        const int error = errno;
        return UserError{"cannot read " + std::string(option) + " '" + path +
                         "': " + (error != 0 ? std::strerror(error) : "cannot open the file") +
                         "; check the path"};
    }
    std::stringstream text;
    text << in.rdbuf();
    if (in.bad())
        return UserError{"cannot read " + std::string(option) + " '" + path + "'"};
    return text.str();
}

} // namespace stepmap::cli
