#pragma once

// The owner of a directory tree: when the owner goes, the directory goes
// with everything in it (removeTree: by descriptors, never following a
// link), whatever the way out of the owning scope.

#include <functional>
#include <string>

namespace stepmap::os {

class OwnedDirectory {
public:
    OwnedDirectory() = default;
    // onIncomplete is told the path when not all of it could be removed.
    explicit OwnedDirectory(std::string path,
                            std::function<void(const std::string &)> onIncomplete = {});
    ~OwnedDirectory() { remove(); }
    OwnedDirectory(OwnedDirectory &&other) noexcept;
    OwnedDirectory &operator=(OwnedDirectory &&other) noexcept;
    OwnedDirectory(const OwnedDirectory &) = delete;
    OwnedDirectory &operator=(const OwnedDirectory &) = delete;

    const std::string &path() const { return path_; }
    // Removes it now; true if all of it went (or there was nothing to own).
    bool remove();
    // Keeps the directory: nobody removes it any more. Returns its path.
    std::string release();

private:
    std::string path_;
    std::function<void(const std::string &)> onIncomplete_;
};

} // namespace stepmap::os
