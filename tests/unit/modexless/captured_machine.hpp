#pragma once

// A machine of tests/fixtures/modexless: its profile, completed with the
// ifindex and UP flag from its `ip -o link` list, and the btl.tcp.4.1 bytes
// Open MPI 4.1.4 committed there, by pinned port.

#include "profile/interconnect_profile.hpp"
#include "profile/profile_yaml.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

namespace stepmap::modexless::test {

inline std::string fixture(const std::string &machine, const std::string &file) {
    return std::string(STEPMAP_MODEXLESS_FIXTURES) + "/" + machine + "/" + file;
}

inline std::string fromHex(const std::string &hex) {
    std::string bytes;
    for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
        bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    return bytes;
}

inline std::string toHex(const std::string &bytes) {
    static const char digits[] = "0123456789abcdef";
    std::string hex;
    for (unsigned char c : bytes) {
        hex.push_back(digits[c >> 4]);
        hex.push_back(digits[c & 15]);
    }
    return hex;
}

// "3: va@vb: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu ..." per line.
inline void applyLinks(topology::NodeProfile &node, const std::string &linksFile) {
    std::ifstream in(linksFile);
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string index, name, flags;
        fields >> index >> name >> flags;
        name = name.substr(0, name.find_first_of("@:"));
        for (topology::NetworkInterface &iface : node.interfaces)
            if (iface.name == name) {
                iface.ifindex = static_cast<std::uint32_t>(std::stoul(index));
                iface.adminUp = flags.find(",UP") != std::string::npos ||
                                flags.find("<UP") != std::string::npos;
            }
    }
}

inline topology::NodeProfile machineProfile(const std::string &machine) {
    auto profile = topology::readProfileFile(fixture(machine, "profile.yaml"));
    EXPECT_TRUE(profile.ok()) << (profile.ok() ? "" : profile.error().message);
    if (!profile.ok() || profile->nodes.size() != 1)
        return {};
    topology::NodeProfile node = profile->nodes.front();
    applyLinks(node, fixture(machine, "links.txt"));
    return node;
}

// Port -> committed bytes.
inline std::map<std::uint16_t, std::string> capturedRecords(const std::string &machine) {
    std::map<std::uint16_t, std::string> records;
    std::ifstream in(fixture(machine, "captured.txt"));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        std::istringstream fields(line);
        unsigned port = 0;
        std::string hex;
        fields >> port >> hex;
        records[static_cast<std::uint16_t>(port)] = fromHex(hex);
    }
    EXPECT_FALSE(records.empty()) << "no records in " << fixture(machine, "captured.txt");
    return records;
}

} // namespace stepmap::modexless::test
