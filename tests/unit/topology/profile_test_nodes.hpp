#pragma once

// A sample node for the interconnect profile tests, and changes to it: each
// of the static ones alters a field the digest covers, each of the
// operational ones a field it leaves out.

#include <functional>
#include <vector>

#include "profile/interconnect_profile.hpp"

namespace stepmap::topology::testing {

inline NodeProfile sampleNode() {
    NodeProfile node{"n1", "2026-01-01T00:00:00Z", "sysfs", {}, {}, ""};
    node.interfaces.push_back({"eth0",
                               2,
                               {{"10.0.0.5", 24}},
                               1500,
                               10000,
                               "up",
                               true,
                               "52:54:00:12:34:56",
                               "0000:00:03.0",
                               0});
    node.rdmaDevices.push_back({"mlx5_0",
                                "0002:c903:00f1:e9c0",
                                {{1,
                                  "ACTIVE",
                                  "LinkUp",
                                  "InfiniBand",
                                  "100 Gb/sec (4X EDR)",
                                  7,
                                  {{0, "fe80:0000:0000:0000:0002:c903:00f1:e9c1"}}}}});
    return node;
}

using Change = std::function<void(NodeProfile &)>;

inline std::vector<Change> staticChanges() {
    return {
        [](NodeProfile &n) { n.name = "n2"; },
        [](NodeProfile &n) { n.interfaces[0].name = "eth1"; },
        [](NodeProfile &n) { n.interfaces[0].ifindex = 3; },
        [](NodeProfile &n) { n.interfaces[0].mtu = 9000; },
        [](NodeProfile &n) { n.interfaces[0].mac = "52:54:00:12:34:57"; },
        [](NodeProfile &n) { n.interfaces[0].pciAddress.reset(); },
        [](NodeProfile &n) { n.interfaces[0].numaNode = 1; },
        [](NodeProfile &n) { n.interfaces[0].addresses[0].prefixLength = 16; },
        [](NodeProfile &n) {
            n.interfaces[0].addresses.push_back({"fe80::1", 64});
        },
        [](NodeProfile &n) { n.interfaces.push_back(n.interfaces[0]); },
        [](NodeProfile &n) { n.rdmaDevices[0].nodeGuid = "0002:c903:00f1:e9c1"; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].lid = 8; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].linkLayer = "Ethernet"; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].gids[0].index = 1; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].gids.clear(); },
        [](NodeProfile &n) { n.rdmaDevices.clear(); },
    };
}

inline std::vector<Change> operationalChanges() {
    return {
        [](NodeProfile &n) { n.profiledAt = "2027-01-01T00:00:00Z"; },
        [](NodeProfile &n) { n.interfaces[0].operstate = "down"; },
        [](NodeProfile &n) { n.interfaces[0].speedMbps.reset(); },
        [](NodeProfile &n) { n.interfaces[0].adminUp = false; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].state = "DOWN"; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].physState = "Polling"; },
        [](NodeProfile &n) { n.rdmaDevices[0].ports[0].rate = "10 Gb/sec (4X)"; },
    };
}

} // namespace stepmap::topology::testing
