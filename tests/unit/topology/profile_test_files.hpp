#pragma once

// Fixture paths and file reading for the interconnect profile tests.

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace stepmap::topology::testing {

// tests/fixtures/sysfs, from the environment meson sets.
inline std::string sysfsFixtures() {
    const char *dir = std::getenv("STEPMAP_SYSFS_FIXTURES");
    if (dir == nullptr)
        ADD_FAILURE() << "STEPMAP_SYSFS_FIXTURES is not set";
    return dir == nullptr ? std::string() : dir;
}

inline std::string fileText(const std::string &path) {
    std::ifstream file(path, std::ios::binary);
    EXPECT_TRUE(file) << path;
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

// The fixture trees, each with its golden YAML "<name>.yaml" beside it,
// probed as node "<name>-node" at this time.
inline constexpr const char *kFixtureTrees[] = {"ethernet", "rdma", "veth"};
inline constexpr const char *kFixtureTime = "2026-01-01T00:00:00Z";

} // namespace stepmap::topology::testing
