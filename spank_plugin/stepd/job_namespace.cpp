#include "stepd/job_namespace.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace stepmap::plugin {

namespace {

// mountinfo escapes blanks, tabs, newlines and backslashes as \ooo.
std::string unescape(std::string_view field) {
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' &&
            field[i + 1] <= '3') {
            out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                     (field[i + 3] - '0'));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

std::vector<std::string_view> words(std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t at = 0;
    while (at < line.size()) {
        std::size_t end = line.find(' ', at);
        if (end == std::string_view::npos)
            end = line.size();
        if (end > at)
            out.push_back(line.substr(at, end - at));
        at = end + 1;
    }
    return out;
}

} // namespace

std::optional<std::string> jobNamespace(std::string_view mountinfo, std::uint32_t job) {
    const std::string suffix = "/" + std::to_string(job) + "/.ns";
    std::size_t at = 0;
    while (at < mountinfo.size()) {
        std::size_t end = mountinfo.find('\n', at);
        if (end == std::string_view::npos)
            end = mountinfo.size();
        const auto w = words(mountinfo.substr(at, end - at));
        at = end + 1;
        // id parent major:minor root mountpoint options [optional...] - fstype source ...
        std::size_t dash = 6;
        while (dash < w.size() && w[dash] != "-")
            ++dash;
        if (w.size() < 5 || dash + 1 >= w.size() || w[dash + 1] != "nsfs")
            continue;
        std::string point = unescape(w[4]);
        // An nsfs mount's root names the namespace: "mnt:[4026532180]".
        if (point.size() > suffix.size() && point.ends_with(suffix) && w[3].starts_with("mnt:["))
            return std::string(w[3]);
    }
    return std::nullopt;
}

bool tasksInOtherMountNamespace(std::uint32_t job) {
    std::ifstream in("/proc/self/mountinfo");
    if (!in)
        return false;
    std::stringstream text;
    text << in.rdbuf();
    auto theirs = jobNamespace(text.str(), job);
    if (!theirs)
        return false;
    // Our own namespace by name; no path under the (root-only) BasePath is
    // followed, and user_init may run with the user's effective ids.
    char ours[64];
    ssize_t n = readlink("/proc/self/ns/mnt", ours, sizeof ours - 1);
    if (n <= 0)
        return false;
    return std::string_view(ours, static_cast<std::size_t>(n)) != *theirs;
}

} // namespace stepmap::plugin
