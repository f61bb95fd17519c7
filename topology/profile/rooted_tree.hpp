#pragma once

// A directory tree seen as if it were "/": paths are written from the
// tree's root ("/sys/class/net"), symbolic links are resolved by hand inside
// it (an absolute target starts again at the root; ".." above the root is an
// error), and files are read whole with a size cap. sysfs_probe reads the
// live system with root "/" and fixture trees with their folder as root.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace stepmap::topology {

class RootedTree {
public:
    RootedTree(std::string root, std::size_t maxFileBytes);

    // `path` with every symbolic link resolved, as a path from the root.
    Expected<std::string> resolve(std::string_view path) const;

    bool exists(std::string_view path) const;
    bool isDirectory(std::string_view path) const;

    // The file's text without its trailing newline; an error names the file.
    Expected<std::string> read(std::string_view path) const;

    // As read(), but nothing for a file that is not there or that the
    // kernel will not read out (EINVAL: a link's speed while it is down).
    Expected<std::optional<std::string>> readIfPresent(std::string_view path) const;

    // The names in a directory, sorted; nothing when it is not there.
    Expected<std::vector<std::string>> list(std::string_view path) const;

    // How messages show `path`: under the root, as the file system has it.
    std::string shown(std::string_view path) const;

    const std::string &root() const { return root_; }

private:
    std::string root_;
    std::size_t maxFileBytes_;
};

} // namespace stepmap::topology
