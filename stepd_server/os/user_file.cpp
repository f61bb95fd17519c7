#include "user_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace stepmap {

namespace {

constexpr std::size_t kChunk = std::size_t{64} << 10;

// Closes the descriptor on every path out.
class FileDescriptor {
public:
    explicit FileDescriptor(int fd) : fd_(fd) {}
    FileDescriptor(const FileDescriptor &) = delete;
    FileDescriptor &operator=(const FileDescriptor &) = delete;
    ~FileDescriptor() {
        if (fd_ >= 0)
            close(fd_);
    }
    int get() const { return fd_; }

private:
    int fd_;
};

UserError systemError(int error) {
    return UserError{std::strerror(error)};
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
        fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return systemError(errno);
    const FileDescriptor file(fd);
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
