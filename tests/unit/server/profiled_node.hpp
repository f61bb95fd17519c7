#pragma once

// Interconnect profile entries for the node server's tests and benchmark
// (tests/bench/served_profile_bench): Ethernet interfaces on PCI and an
// InfiniBand EDR device, as stepmap-profile would write them.

#include "profile/interconnect_profile.hpp"

#include <string>
#include <vector>

namespace stepmap::test {

// "eth<index>": MTU 9000, 25 Gb/s, up, MAC 52:54:00:12:34:5<index>, PCI
// 0000:3b:00.<index>, NUMA node 0, kernel index 2 + index.
inline topology::NetworkInterface pciEthernet(int index,
                                              std::vector<topology::InterfaceAddress> addresses) {
    topology::NetworkInterface eth;
    eth.name = "eth" + std::to_string(index);
    eth.addresses = std::move(addresses);
    eth.mtu = 9000;
    eth.speedMbps = 25000;
    eth.operstate = "up";
    eth.mac = "52:54:00:12:34:5" + std::to_string(index);
    eth.pciAddress = "0000:3b:00." + std::to_string(index);
    eth.numaNode = 0;
    eth.ifindex = static_cast<std::uint32_t>(2 + index);
    return eth;
}

// mlx5_0 with port 1 active at 100 Gb/s (4X EDR), LID 7, one GID.
inline topology::RdmaDevice edrDevice() {
    topology::RdmaPort port{1, "ACTIVE", "LinkUp", "InfiniBand", "100 Gb/sec (4X EDR)", 7, {}};
    port.gids.push_back({0, "fe80:0000:0000:0000:0002:c903:00f1:e9c1"});
    return {"mlx5_0", "0002:c903:00f1:e9c0", {port}};
}

// A node profiled at a fixed time, with a made-up digest (64 x `digit`).
inline topology::NodeProfile profiledNode(const std::string &name, char digit,
                                          std::vector<topology::NetworkInterface> interfaces,
                                          std::vector<topology::RdmaDevice> rdma) {
    topology::NodeProfile node;
    node.name = name;
    node.profiledAt = "2026-11-24T00:30:53Z";
    node.method = "sysfs";
    node.digest = "sha256:" + std::string(64, digit);
    node.interfaces = std::move(interfaces);
    node.rdmaDevices = std::move(rdma);
    return node;
}

} // namespace stepmap::test
