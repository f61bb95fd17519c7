#include "interface_numa.hpp"

#include "network_numa.hpp"

namespace stepmap::topology {
namespace {

bool isLiveRoot(const std::string &root) {
    return !root.empty() && root.find_first_not_of('/') == std::string::npos;
}

} // namespace

std::map<std::string, std::optional<int>> interfaceNumaNodes(const NodeTopology &topology) {
    return networkNumaNodes(topology.get());
}

Expected<NodeProfile> probeNodeWithHwloc(ProbeOptions options, const NodeTopology &topology) {
    if (isLiveRoot(options.root)) {
        options.numaNodes = interfaceNumaNodes(topology);
        options.method = "sysfs+hwloc";
    }
    return probeNode(options);
}

Expected<NodeProfile> probeNodeWithHwloc(const ProbeOptions &options) {
    if (!isLiveRoot(options.root))
        return probeNode(options);
    const auto topology = NodeTopology::fromThisMachine();
    if (!topology)
        return topology.error();
    return probeNodeWithHwloc(options, *topology);
}

} // namespace stepmap::topology
