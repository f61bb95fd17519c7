#include "os/cgroup_membership.hpp"

#include "os/unique_fd.hpp"

#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace stepmap::os {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
    std::vector<std::string_view> out;
    for (;;) {
        const auto at = text.find(sep);
        out.push_back(text.substr(0, at));
        if (at == std::string_view::npos)
            return out;
        text.remove_prefix(at + 1);
    }
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
std::string unescape(std::string_view field) {
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() &&
            std::all_of(field.begin() + i + 1, field.begin() + i + 4,
                        [](char c) { return c >= '0' && c <= '7'; })) {
            out.push_back(static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 +
                                            (field[i + 3] - '0')));
            i += 3;
        } else {
            out.push_back(field[i]);
        }
    }
    return out;
}

struct CgroupMount {
    std::string root, point, fsType;
    std::vector<std::string_view> superOptions;
};

Expected<std::vector<CgroupMount>> cgroupMounts(std::string_view mountInfo) {
    std::vector<CgroupMount> out;
    for (std::string_view line : split(mountInfo, '\n')) {
        if (line.empty())
            continue;
        const auto fields = split(line, ' ');
        const auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 10 || dash == fields.end() || fields.end() - dash < 4 ||
            dash - fields.begin() < 6)
            return UserError{"/proc/self/mountinfo has a line not in the kernel's format: '" +
                             std::string(line.substr(0, 120)) + "'"};
        const std::string_view type = dash[1];
        if (type != "cgroup" && type != "cgroup2")
            continue;
        out.push_back(
            {unescape(fields[3]), unescape(fields[4]), std::string(type), split(dash[3], ',')});
    }
    return out;
}

// The mount showing hierarchy `controllers` ("" for v2): v1 mounts list
// their controllers (or name=) among their super options.
const CgroupMount *mountOf(const std::vector<CgroupMount> &mounts, std::string_view controllers,
                           std::string_view path) {
    for (const auto &m : mounts) {
        if (controllers.empty() != (m.fsType == "cgroup2"))
            continue;
        if (!controllers.empty()) {
            const auto wanted = split(controllers, ',');
            if (!std::all_of(wanted.begin(), wanted.end(), [&](std::string_view c) {
                    return std::find(m.superOptions.begin(), m.superOptions.end(), c) !=
                           m.superOptions.end();
                }))
                continue;
        }
        // The mount shows the part of the hierarchy at m.root: the path
        // must lie below it.
        if (m.root == "/" || path == m.root ||
            (path.size() > m.root.size() && path.substr(0, m.root.size()) == m.root &&
             path[m.root.size()] == '/'))
            return &m;
    }
    return nullptr;
}

Expected<std::string> readProcFile(const char *path) {
    std::ifstream in(path);
    if (!in)
        return UserError{std::string("cannot read ") + path + ": " + std::strerror(errno)};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// path's cgroup.procs, opened for writing from the mount's directory
// without leaving the cgroup file system or following a link.
Expected<UniqueFd> openProcsFile(const CgroupPlace &place) {
    UniqueFd mount(open(place.mountPoint.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    struct statfs fs {};
    if (!mount || fstatfs(mount.get(), &fs) != 0)
        return UserError{"cannot open the cgroup mount " + place.mountPoint + ": " +
                         std::strerror(errno)};
    if (fs.f_type != CGROUP_SUPER_MAGIC && fs.f_type != CGROUP2_SUPER_MAGIC)
        return UserError{place.mountPoint + " is not a cgroup file system"};
    const std::string file =
        place.relativePath.empty() ? "cgroup.procs" : place.relativePath + "/cgroup.procs";
    open_how how{};
    how.flags = O_WRONLY | O_CLOEXEC;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
    int fd = static_cast<int>(syscall(SYS_openat2, mount.get(), file.c_str(), &how, sizeof how));
    if (fd < 0 && errno == ENOSYS) // before Linux 5.6; cgroup file systems hold no links
        fd = openat(mount.get(), file.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return UserError{"cannot open " + place.mountPoint + "/" + file + ": " +
                         std::strerror(errno)};
    return UniqueFd(fd);
}

} // namespace

Expected<std::vector<CgroupPlace>> cgroupPlaces(std::string_view procCgroup,
                                                std::string_view mountInfo) {
    auto mounts = cgroupMounts(mountInfo);
    if (!mounts)
        return mounts.error();
    std::vector<CgroupPlace> out;
    for (std::string_view line : split(procCgroup, '\n')) {
        if (line.empty())
            continue;
        // "ID:controllers:path"; the path may itself hold ':'.
        const auto first = line.find(':');
        const auto second = first == std::string_view::npos ? first : line.find(':', first + 1);
        if (second == std::string_view::npos || line[second + 1] != '/')
            return UserError{"/proc/self/cgroup has a line not in the kernel's format: '" +
                             std::string(line.substr(0, 120)) + "'"};
        const std::string_view controllers = line.substr(first + 1, second - first - 1);
        const std::string path(line.substr(second + 1));
        const CgroupMount *m = mountOf(*mounts, controllers, path);
        if (!m)
            continue;
        std::string relative = m->root == "/" ? path.substr(1) : path.substr(m->root.size());
        if (!relative.empty() && relative.front() == '/')
            relative.erase(0, 1);
        CgroupPlace place{m->point, relative};
        if (std::find(out.begin(), out.end(), place) == out.end())
            out.push_back(std::move(place));
    }
    return out;
}

Expected<void> moveIntoOwnCgroups(pid_t pid) {
    auto cgroups = readProcFile("/proc/self/cgroup");
    auto mounts = cgroups ? readProcFile("/proc/self/mountinfo") : cgroups;
    if (!mounts)
        return mounts.error();
    auto places = cgroupPlaces(*cgroups, *mounts);
    if (!places)
        return places.error();
    const std::string text = std::to_string(pid);
    for (const auto &place : *places) {
        auto procs = openProcsFile(place);
        if (!procs)
            return procs.error();
        if (write(procs->get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
            return UserError{"cannot move process " + text + " into " + place.mountPoint + "/" +
                             place.relativePath + ": " + std::strerror(errno)};
    }
    return {};
}

} // namespace stepmap::os
