// writeProfileFile of profile_yaml.hpp: the whole file or nothing. The text
// goes to a new file beside the target, is flushed to disk, and replaces
// the target by rename(2), so a reader (srun starting a step, a
// concurrent `check`) sees the old profile or the new one, never a part.

#include "profile/profile_yaml.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/quote.hpp"

namespace stepmap::topology {
namespace {

std::string directoryOf(const std::string &path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos)
        return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// The mode a new profile gets: readable by all (node servers run as the
// job's user), less what the umask takes; an existing file keeps its own.
mode_t modeFor(const std::string &path) {
    struct stat existing {};
    if (stat(path.c_str(), &existing) == 0)
        return existing.st_mode & 07777;
    const mode_t mask = umask(0);
    umask(mask);
    return 0644 & ~mask;
}

std::optional<UserError> writeAll(int fd, const std::string &text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t wrote = write(fd, text.data() + done, text.size() - done);
        if (wrote < 0 && errno == EINTR)
            continue;
        if (wrote < 0)
            return UserError{std::strerror(errno)};
        done += static_cast<std::size_t>(wrote);
    }
    if (fsync(fd) != 0)
        return UserError{std::strerror(errno)};
    return std::nullopt;
}

} // namespace

std::optional<UserError> writeProfileFile(const std::string &path, const Profile &profile) {
    const std::string shownPath = escaped(path, kShownPathBytes);
    std::string temporary = directoryOf(path) + "/.stepmap-profile.XXXXXX";
    const int fd = mkstemp(temporary.data());
    if (fd < 0) {
        return UserError{shownPath +
                         ": cannot make a new file in its directory: " + std::strerror(errno)};
    }
    auto failed = writeAll(fd, writeProfileYaml(profile));
    if (!failed && fchmod(fd, modeFor(path)) != 0)
        failed = UserError{std::strerror(errno)};
    if (close(fd) != 0 && !failed)
        failed = UserError{std::strerror(errno)};
    if (!failed && rename(temporary.c_str(), path.c_str()) != 0)
        failed = UserError{std::strerror(errno)};
    if (failed) {
        unlink(temporary.c_str());
        return UserError{shownPath + ": cannot write the profile: " + failed->message};
    }
    return std::nullopt;
}

} // namespace stepmap::topology
