#include "profile/rooted_tree.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <filesystem>

#include "base/quote.hpp"

namespace stepmap::topology {
namespace {

namespace fs = std::filesystem;

// Linux gives up after 40 links in one lookup; so does this.
constexpr int kMaxLinks = 40;

std::deque<std::string> components(std::string_view path) {
    std::deque<std::string> parts;
    std::size_t start = 0;
    while (start <= path.size()) {
        const std::size_t end = std::min(path.find('/', start), path.size());
        if (end > start)
            parts.emplace_back(path.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

std::string joined(const std::vector<std::string> &parts) {
    std::string path;
    for (const std::string &part : parts)
        path += "/" + part;
    return path.empty() ? "/" : path;
}

class FileCloser {
public:
    explicit FileCloser(int fd) : fd_(fd) {}
    ~FileCloser() { ::close(fd_); }
    FileCloser(const FileCloser &) = delete;
    FileCloser &operator=(const FileCloser &) = delete;

private:
    int fd_;
};

} // namespace

RootedTree::RootedTree(std::string root, std::size_t maxFileBytes)
    : root_(root == "/" ? std::string() : std::move(root)), maxFileBytes_(maxFileBytes) {
    while (!root_.empty() && root_.back() == '/')
        root_.pop_back();
}

std::string RootedTree::shown(std::string_view path) const {
    return escaped(root_ + std::string(path), kShownPathBytes);
}

Expected<std::string> RootedTree::resolve(std::string_view path) const {
    std::deque<std::string> pending = components(path);
    std::vector<std::string> done;
    int links = 0;
    while (!pending.empty()) {
        const std::string part = std::move(pending.front());
        pending.pop_front();
        if (part == ".")
            continue;
        if (part == "..") {
            if (done.empty())
                return UserError{shown(path) + ": a symbolic link leads outside " + shown("/")};
            done.pop_back();
            continue;
        }
        done.push_back(part);
        const fs::path real = root_ + joined(done);
        std::error_code error;
        if (!fs::is_symlink(fs::symlink_status(real, error)))
            continue; // a missing file is reported by whoever opens it
        if (++links > kMaxLinks)
            return UserError{shown(path) + ": too many symbolic links"};
        const fs::path target = fs::read_symlink(real, error);
        if (error)
            return UserError{shown(joined(done)) + ": " + error.message()};
        done.pop_back();
        if (target.is_absolute())
            done.clear();
        std::deque<std::string> targetParts = components(target.string());
        pending.insert(pending.begin(), targetParts.begin(), targetParts.end());
    }
    return joined(done);
}

bool RootedTree::exists(std::string_view path) const {
    const auto resolved = resolve(path);
    std::error_code error;
    return resolved.ok() && fs::exists(root_ + *resolved, error);
}

bool RootedTree::isDirectory(std::string_view path) const {
    const auto resolved = resolve(path);
    std::error_code error;
    return resolved.ok() && fs::is_directory(root_ + *resolved, error);
}

Expected<std::optional<std::string>> RootedTree::readIfPresent(std::string_view path) const {
    const auto resolved = resolve(path);
    if (!resolved)
        return resolved.error();
    const std::string real = root_ + *resolved;
    const int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0 && errno == ENOENT)
        return std::optional<std::string>();
    if (fd < 0)
        return UserError{shown(path) + ": " + std::strerror(errno)};
    const FileCloser closer(fd);
    std::string text(maxFileBytes_ + 1, '\0');
    std::size_t size = 0;
    while (size < text.size()) {
        const ssize_t got = ::read(fd, text.data() + size, text.size() - size);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 && errno == EINVAL)
            return std::optional<std::string>();
        if (got < 0)
            return UserError{shown(path) + ": " + std::strerror(errno)};
        if (got == 0)
            break;
        size += static_cast<std::size_t>(got);
    }
    if (size > maxFileBytes_)
        return UserError{shown(path) + ": longer than " + std::to_string(maxFileBytes_) + " bytes"};
    text.resize(size);
    if (!text.empty() && text.back() == '\n')
        text.pop_back();
    return std::optional<std::string>(std::move(text));
}

Expected<std::string> RootedTree::read(std::string_view path) const {
    auto text = readIfPresent(path);
    if (!text)
        return text.error();
    if (!*text)
        return UserError{shown(path) + ": missing or unreadable"};
    return std::move(**text);
}

Expected<std::vector<std::string>> RootedTree::list(std::string_view path) const {
    const auto resolved = resolve(path);
    if (!resolved)
        return resolved.error();
    std::vector<std::string> names;
    std::error_code error;
    fs::directory_iterator entries(root_ + *resolved, error);
    if (error == std::errc::no_such_file_or_directory)
        return names;
    if (error)
        return UserError{shown(path) + ": " + error.message()};
    for (; entries != fs::directory_iterator(); entries.increment(error)) {
        if (error)
            return UserError{shown(path) + ": " + error.message()};
        names.push_back(entries->path().filename().string());
    }
    if (error)
        return UserError{shown(path) + ": " + error.message()};
    std::sort(names.begin(), names.end());
    return names;
}

} // namespace stepmap::topology
