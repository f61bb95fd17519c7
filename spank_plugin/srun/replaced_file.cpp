#include "srun/replaced_file.hpp"

#include "base/quote.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <utility>

namespace stepmap::plugin {

namespace {

// Leaves room for the suffix within NAME_MAX (255 bytes).
constexpr std::size_t kKeptNameBytes = 200;

std::string randomSuffix() {
    unsigned int bits = 0;
    if (getrandom(&bits, sizeof bits, GRND_NONBLOCK) != sizeof bits)
        bits = static_cast<unsigned int>(getpid()) ^ static_cast<unsigned int>(time(nullptr));
    char text[16];
    std::snprintf(text, sizeof text, "%08x", bits);
    return text;
}

std::string systemError(int error) {
    return std::strerror(error);
}

} // namespace

Expected<ReplacedFile> ReplacedFile::create(const std::string &path) {
    const auto slash = path.rfind('/');
    const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    const std::string directory = slash == std::string::npos ? "."
                                  : slash == 0               ? "/"
                                                             : path.substr(0, slash);
    struct stat st {};
    if (name.empty() || name == "." || name == ".." ||
        (stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)))
        return UserError{quoted(path, kShownPathBytes) +
                         " is a directory; name a file in it, e.g. " +
                         (path.ends_with('/') ? path : path + "/") + "map.svg"};
    const std::string where = slash == std::string::npos ? std::string("srun's working directory")
                                                         : quoted(directory, kShownPathBytes);
    for (int attempt = 0; attempt < 16; ++attempt) {
        std::string temporary =
            directory + "/." + name.substr(0, kKeptNameBytes) + ".stepmap-" + randomSuffix();
        os::UniqueFd fd(
            open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
        if (fd)
            return ReplacedFile(path, std::move(temporary), std::move(fd));
        const int error = errno;
        if (error == EEXIST)
            continue;
        if (error == ENOENT || error == ENOTDIR)
            return UserError{"cannot create a file in " + where + ": " + systemError(error) +
                             "; name a file in an existing directory"};
        return UserError{"cannot create a file in " + where + ": " + systemError(error) +
                         "; name a file in a directory you can write to"};
    }
    return UserError{"cannot create a file in " + where +
                     ": every temporary name tried exists; remove the .stepmap-* files there"};
}

ReplacedFile::ReplacedFile(ReplacedFile &&other) noexcept
    : path_(std::move(other.path_)), temporary_(std::exchange(other.temporary_, {})),
      fd_(std::move(other.fd_)) {}

ReplacedFile &ReplacedFile::operator=(ReplacedFile &&other) noexcept {
    if (this != &other) {
        discard();
        path_ = std::move(other.path_);
        temporary_ = std::exchange(other.temporary_, {});
        fd_ = std::move(other.fd_);
    }
    return *this;
}

ReplacedFile::~ReplacedFile() {
    discard();
}

void ReplacedFile::discard() {
    fd_.reset();
    if (!temporary_.empty())
        unlink(temporary_.c_str());
    temporary_.clear();
}

Expected<void> ReplacedFile::replace(std::string_view contents) {
    if (temporary_.empty() || !fd_)
        return UserError{"cannot write " + quoted(path_, kShownPathBytes) + " twice"};
    const std::string shown = quoted(temporary_, kShownPathBytes);
    for (std::size_t done = 0; done < contents.size();) {
        const ssize_t n = write(fd_.get(), contents.data() + done, contents.size() - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            const std::string why = n < 0 ? systemError(errno) : "nothing written";
            discard();
            return UserError{"cannot write " + shown + ": " + why};
        }
        done += static_cast<std::size_t>(n);
    }
    // A network file system may report a failed write only here.
    if (close(fd_.release()) != 0) {
        const std::string why = systemError(errno);
        discard();
        return UserError{"cannot write " + shown + ": " + why};
    }
    if (rename(temporary_.c_str(), path_.c_str()) != 0) {
        const std::string why = systemError(errno);
        discard();
        return UserError{"cannot rename " + shown + " to " + quoted(path_, kShownPathBytes) + ": " +
                         why};
    }
    temporary_.clear();
    return {};
}

} // namespace stepmap::plugin
