#pragma once

// The text forms of a node's profile entry that the node server serves as
// stepmap.* keys (docs/profile-keys.md): one line per interface or RDMA
// port, blank-separated fields, so that a client can split them without a
// parser library. Also the PMIx forms of single values.

#include "profile/interconnect_profile.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace stepmap::server {

// "eth0 ifindex=2 mtu=1500 mac=52:54:00:12:34:56 numa=0
// addresses=10.0.0.5/24,fe80::1/64" per interface, '\n' between lines;
// "-" for an unknown ifindex or NUMA node, nothing after "addresses=" when
// it has none.
std::string interfacesText(const topology::NodeProfile &node);

// "mlx5_0 guid=0002:c903:00f1:e9c0 port=1 layer=InfiniBand state=ACTIVE
// lid=7 gids=0:fe80:...,1:... rate=100 Gb/sec (4X EDR)" per port (the rate
// last: it holds blanks), '\n' between lines; a device without ports is
// one line "mlx5_0 guid=...".
std::string rdmaDevicesText(const topology::NodeProfile &node);

// PMIx's PCI identifier, "domain:bus:device:function" ("0000:3b:00:00"),
// of a profile's PCI address ("0000:3b:00.0").
std::string pciDeviceId(const std::string &pciAddress);

// The bits per second of a port rate as the kernel words it ("100 Gb/sec
// (4X EDR)", "2.5 Gb/sec"), or nothing when it does not read so.
std::optional<std::uint64_t> rateBitsPerSecond(const std::string &rate);

} // namespace stepmap::server
