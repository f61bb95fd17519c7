#include "os/owned_directory.hpp"

#include "os/step_directory.hpp"

#include <utility>

namespace stepmap::os {

OwnedDirectory::OwnedDirectory(std::string path,
                               std::function<void(const std::string &)> onIncomplete)
    : path_(std::move(path)), onIncomplete_(std::move(onIncomplete)) {}

OwnedDirectory::OwnedDirectory(OwnedDirectory &&other) noexcept
    : path_(other.release()), onIncomplete_(std::move(other.onIncomplete_)) {}

OwnedDirectory &OwnedDirectory::operator=(OwnedDirectory &&other) noexcept {
    if (this != &other) {
        remove();
        path_ = other.release();
        onIncomplete_ = std::move(other.onIncomplete_);
    }
    return *this;
}

bool OwnedDirectory::remove() {
    if (path_.empty())
        return true;
    const std::string path = release();
    if (removeTree(path))
        return true;
    if (onIncomplete_)
        onIncomplete_(path);
    return false;
}

std::string OwnedDirectory::release() {
    return std::exchange(path_, std::string());
}

} // namespace stepmap::os
