#include "os/step_directory.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>

namespace stepmap::os {

namespace {

std::string errnoText(const std::string &what, const std::string &path) {
    return what + " " + path + ": " + std::strerror(errno);
}

bool emptyDirectory(int dirFd, dev_t device, int depth);

// Removes the entry name of the directory open at dirFd: a file or link is
// unlinked, a directory on the same device emptied first. True once it is
// gone.
bool removeEntry(int dirFd, const char *name, dev_t device, int depth) {
    if (unlinkat(dirFd, name, 0) == 0 || errno == ENOENT)
        return true;
    if (errno != EISDIR && errno != EPERM)
        return false;
    // A directory: open it without following a link (a swapped-in link
    // fails here with ELOOP or ENOTDIR and is unlinked instead).
    UniqueFd sub(openat(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!sub)
        return unlinkat(dirFd, name, 0) == 0;
    struct stat st {};
    if (fstat(sub.get(), &st) != 0 || st.st_dev != device)
        return false; // a mount point: not ours to empty
    const bool emptied = emptyDirectory(sub.get(), device, depth + 1);
    return (unlinkat(dirFd, name, AT_REMOVEDIR) == 0 || errno == ENOENT) && emptied;
}

// The kernel's directory entry as getdents64 returns it.
struct LinuxDirent64 {
    std::uint64_t ino;
    std::int64_t off;
    unsigned short reclen;
    unsigned char type;
    char name[1];
};

// Empties the directory open at dirFd (which stays open), descending into
// subdirectories on the same device only; depth bounds the recursion. Reads
// with getdents64 into a buffer on the stack and allocates nothing, so the
// forked child of a multithreaded process (slurmstepd) may call it. Entries
// removed while reading on can make the kernel skip others: sweeps repeat
// until one finds the directory empty, or removes nothing (a failure).
bool emptyDirectory(int dirFd, dev_t device, int depth) {
    if (depth > 64)
        return false;
    alignas(8) char buf[1024];
    for (;;) {
        if (lseek(dirFd, 0, SEEK_SET) != 0)
            return false;
        bool seen = false, removed = false;
        long n;
        while ((n = syscall(SYS_getdents64, dirFd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                const auto *e = reinterpret_cast<const LinuxDirent64 *>(buf + off);
                off += e->reclen;
                if (std::strcmp(e->name, ".") == 0 || std::strcmp(e->name, "..") == 0)
                    continue;
                seen = true;
                removed = removeEntry(dirFd, e->name, device, depth) || removed;
            }
        }
        if (n < 0 || !removed)
            return !seen && n == 0;
    }
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
