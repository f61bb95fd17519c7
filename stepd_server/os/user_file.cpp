#include "user_file.hpp"

#include "unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace stepmap {

namespace {

constexpr std::size_t kChunk = std::size_t{64} << 10;

UserError systemError(int error) {
    return UserError{std::strerror(error)};
}

// "a FIFO", "a directory", ...: what a path that is not a regular file is.
std::string kindOf(mode_t mode) {
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a plain file";
}

} // namespace

std::string formatByteSize(std::size_t bytes) {
    constexpr std::size_t kKiB = 1024;
    constexpr std::size_t kMiB = kKiB * 1024;
    if (bytes >= kMiB && bytes % kMiB == 0)
        return std::to_string(bytes / kMiB) + " MiB";
    if (bytes >= kKiB && bytes % kKiB == 0)
        return std::to_string(bytes / kKiB) + " KiB";
    return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

Expected<std::string> readBoundedFile(const std::string &path, std::size_t maxBytes) {
    int fd = -1;
    do {
        // O_NONBLOCK: opening a FIFO without a writer (or a tty, a modem)
        // would wait for one; it returns at once and is refused below.
        fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return systemError(errno);
    const os::UniqueFd file(fd);
    struct stat status {};
    if (fstat(file.get(), &status) != 0)
        return systemError(errno);
    // Regular files only: what else reads as a file may never end or never
    // begin (a FIFO nobody writes to). O_NONBLOCK changes nothing for them.
    if (!S_ISREG(status.st_mode))
        return UserError{"it is " + kindOf(status.st_mode) +
                         ", not a regular file; stepmap reads only regular files (to use a "
                         "command's output, write it to a file and name that file)"};
    return readBoundedDescriptor(file.get(), maxBytes);
}

Expected<std::string> readBoundedDescriptor(int fd, std::size_t maxBytes) {
    std::string text;
    // One byte past the limit tells a file of exactly maxBytes from a
    // larger one.
    const std::size_t wanted = maxBytes + 1;
    while (text.size() < wanted) {
        const std::size_t used = text.size();
        const std::size_t chunk = std::min(kChunk, wanted - used);
        text.resize(used + chunk);
        const ssize_t got = read(fd, text.data() + used, chunk);
        if (got < 0) {
            const int error = errno;
            text.resize(used);
            if (error == EINTR)
                continue;
            return systemError(error);
        }
        text.resize(used + static_cast<std::size_t>(got));
        if (got == 0)
            return text;
    }
    return UserError{"it is larger than " + formatByteSize(maxBytes) +
                     ", the most stepmap reads of a file"};
}

} // namespace stepmap
