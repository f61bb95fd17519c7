#pragma once

// A file srun writes for the user (--display-map=svg:FILE), with the user's
// rights, that a reader sees whole or not at all: the contents go to a new
// file next to it, which is then renamed over it. The new file is created
// first, on its own, so that a directory the user cannot write to is found
// before anything is allocated or started.

#include <string>
#include <string_view>

#include "base/expected.hpp"
#include "os/unique_fd.hpp"

namespace stepmap::plugin {

class ReplacedFile {
public:
    // Creates the temporary file ".NAME.stepmap-XXXXXXXX" in `path`'s
    // directory (O_EXCL|O_NOFOLLOW, mode 0644 less the umask). The error is
    // the reason alone, with the fix, written to follow "--option 'value': ".
    static Expected<ReplacedFile> create(const std::string &path);

    ReplacedFile(ReplacedFile &&other) noexcept;
    ReplacedFile &operator=(ReplacedFile &&other) noexcept;
    ReplacedFile(const ReplacedFile &) = delete;
    ReplacedFile &operator=(const ReplacedFile &) = delete;
    // Removes the temporary file unless replace() succeeded.
    ~ReplacedFile();

    // Writes `contents` to the temporary file and renames it to the path
    // (a symbolic link there is replaced, not followed). Once only.
    Expected<void> replace(std::string_view contents);

    const std::string &path() const { return path_; }

private:
    ReplacedFile(std::string path, std::string temporary, os::UniqueFd fd)
        : path_(std::move(path)), temporary_(std::move(temporary)), fd_(std::move(fd)) {}
    void discard();

    std::string path_;
    std::string temporary_; // empty once renamed or removed
    os::UniqueFd fd_;
};

} // namespace stepmap::plugin
