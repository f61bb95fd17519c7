#include "step_directory.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace stepmap::os {

namespace {

std::string errnoText(const std::string &what, const std::string &path) {
    return what + " " + path + ": " + std::strerror(errno);
}

// Empties the directory open at dirFd (which stays open), descending into
// subdirectories on the same device only. depth bounds the recursion.
bool emptyDirectory(int dirFd, dev_t device, int depth) {
    if (depth > 64)
        return false;
    int listFd = dup(dirFd);
    if (listFd < 0)
        return false;
    DIR *dir = fdopendir(listFd);
    if (!dir) {
        close(listFd);
        return false;
    }
    std::vector<std::string> names;
    while (dirent *e = readdir(dir)) {
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            names.emplace_back(e->d_name);
    }
    closedir(dir);
    bool ok = true;
    for (const auto &name : names) {
        if (unlinkat(dirFd, name.c_str(), 0) == 0 || errno == ENOENT)
            continue;
        if (errno != EISDIR && errno != EPERM) {
            ok = false;
            continue;
        }
        // A directory: open it without following a link (a swapped-in link
        // fails here with ELOOP or ENOTDIR and is unlinked on the next try).
        UniqueFd sub(openat(dirFd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        struct stat st {};
        if (!sub) {
            ok = unlinkat(dirFd, name.c_str(), 0) == 0 && ok;
            continue;
        }
        if (fstat(sub.get(), &st) != 0 || st.st_dev != device) {
            ok = false; // a mount point: not ours to empty
            continue;
        }
        ok = emptyDirectory(sub.get(), device, depth + 1) && ok;
        if (unlinkat(dirFd, name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            ok = false;
    }
    return ok;
}

} // namespace

Expected<std::string> makePrivateDirectory(const std::string &parent, const std::string &prefix) {
    if (prefix.find('/') != std::string::npos)
        return UserError{"bad directory prefix '" + prefix + "'"};
    std::string path = parent + "/" + prefix + "XXXXXX";
    if (!mkdtemp(path.data()))
        return UserError{errnoText("cannot create a private directory in", parent)};
    return path;
}

Expected<UniqueFd> openPrivateDirectory(const std::string &path, uid_t owner) {
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        return UserError{errnoText("cannot open the directory", path)};
    struct stat st {};
    if (fstat(fd.get(), &st) != 0)
        return UserError{errnoText("cannot inspect", path)};
    if (st.st_uid != owner || (st.st_mode & 077) != 0) {
        char mode[8];
        std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
        return UserError{path + " is not a private directory of uid " + std::to_string(owner) +
                         " (owner " + std::to_string(st.st_uid) + ", mode " + mode + ")"};
    }
    return fd;
}

bool removeTree(const std::string &path) {
    UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd)
        return errno == ENOENT;
    struct stat st {};
    if (fstat(fd.get(), &st) != 0)
        return false;
    bool ok = emptyDirectory(fd.get(), st.st_dev, 0);
    fd.reset();
    // The directory itself goes by path: rmdir never follows a link that
    // may have been put in its place (it fails with ENOTDIR).
    return rmdir(path.c_str()) == 0 ? ok : (errno == ENOENT && ok);
}

} // namespace stepmap::os
