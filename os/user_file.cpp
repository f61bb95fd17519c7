#include "os/user_file.hpp"

#include "os/unique_fd.hpp"

#include <fcntl.h>
#include <poll.h>
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

// A FIFO or pipe, opened non-blocking: read as its writer writes, to its
// end (every writer gone) or the deadline. A FIFO nobody opens for writing
// reads as nothing forever; it ends at the deadline.
Expected<std::string> readPipeWithin(int fd, std::size_t maxBytes,
                                     std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::string text;
    char chunk[4096];
    bool wrote = false;
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        pollfd p{fd, POLLIN, 0};
        const int ready = left.count() > 0 ? poll(&p, 1, static_cast<int>(left.count())) : 0;
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready < 0)
            return systemError(errno);
        if (ready == 0) {
            const double seconds = static_cast<double>(limit.count()) / 1000;
            std::string within = std::to_string(seconds);
            within.erase(within.find_last_not_of('0') + 1);
            if (!within.empty() && within.back() == '.')
                within.pop_back();
            return UserError{std::string("it is a FIFO and ") +
                             (wrote ? "its writer did not finish" : "nothing wrote to it") +
                             " within " + within +
                             " s; name a regular file, or a command's output as <(command)"};
        }
        const ssize_t got = read(fd, chunk, sizeof chunk);
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            continue;
        if (got < 0)
            return systemError(errno);
        // End of file: every writer has closed its end. A FIFO that no
        // writer ever opened polls as not ready instead (Linux), so an early
        // 0 here is a real end.
        if (got == 0)
            return text;
        wrote = true;
        text.append(chunk, static_cast<std::size_t>(got));
        if (text.size() > maxBytes)
            return UserError{"it is larger than " + formatByteSize(maxBytes) +
                             ", the most stepmap reads of a file"};
    }
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

Expected<std::string> readBoundedFile(const std::string &path, std::size_t maxBytes,
                                      std::chrono::milliseconds pipeDeadline) {
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
    if (S_ISFIFO(status.st_mode))
        return readPipeWithin(file.get(), maxBytes, pipeDeadline);
    // Regular files otherwise: a device may never end. O_NONBLOCK changes
    // nothing for a regular file.
    if (!S_ISREG(status.st_mode))
        return UserError{"it is " + kindOf(status.st_mode) +
                         ", not a regular file; name a regular file, or a command's output as "
                         "<(command)"};
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
