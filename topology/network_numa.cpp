#include "network_numa.hpp"

#include <algorithm>
#include <vector>

namespace stepmap::topology {
namespace {

// The NUMA nodes whose locality holds the CPUs `device` is attached to,
// nearest first: the one of those CPUs before the one of the whole machine.
std::vector<hwloc_obj_t> localNumaNodes(hwloc_topology_t topology, hwloc_obj_t device) {
    const int all = hwloc_bitmap_weight(hwloc_get_root_obj(topology)->nodeset);
    std::vector<hwloc_obj_t> nodes(static_cast<std::size_t>(std::max(all, 0)));
    unsigned count = static_cast<unsigned>(nodes.size());
    hwloc_location where{};
    where.type = HWLOC_LOCATION_TYPE_OBJECT;
    where.location.object = device;
    if (nodes.empty() ||
        hwloc_get_local_numanode_objs(topology, &where, &count, nodes.data(),
                                      HWLOC_LOCAL_NUMANODE_FLAG_LARGER_LOCALITY) != 0)
        return {};
    nodes.resize(std::min<std::size_t>(count, nodes.size()));
    std::stable_sort(nodes.begin(), nodes.end(), [](hwloc_obj_t a, hwloc_obj_t b) {
        return hwloc_bitmap_weight(a->cpuset) < hwloc_bitmap_weight(b->cpuset);
    });
    return nodes;
}

std::optional<int> nearestNumaNode(hwloc_topology_t topology, hwloc_obj_t device) {
    std::vector<hwloc_obj_t> nodes = localNumaNodes(topology, device);
    if (nodes.empty())
        return std::nullopt;
    // Only the nodes as near as the nearest; of those, normal memory (no
    // subtype) when there is any.
    const int nearest = hwloc_bitmap_weight(nodes.front()->cpuset);
    std::erase_if(nodes, [&](hwloc_obj_t n) { return hwloc_bitmap_weight(n->cpuset) != nearest; });
    if (std::any_of(nodes.begin(), nodes.end(),
                    [](hwloc_obj_t n) { return n->subtype == nullptr; }))
        std::erase_if(nodes, [](hwloc_obj_t n) { return n->subtype != nullptr; });
    if (nodes.size() != 1)
        return std::nullopt;
    return static_cast<int>(nodes.front()->os_index);
}

} // namespace

std::map<std::string, std::optional<int>> networkNumaNodes(hwloc_topology_t raw) {
    std::map<std::string, std::optional<int>> numaNodes;
    for (hwloc_obj_t device = hwloc_get_next_osdev(raw, nullptr); device != nullptr;
         device = hwloc_get_next_osdev(raw, device)) {
        if (device->attr->osdev.type == HWLOC_OBJ_OSDEV_NETWORK && device->name != nullptr)
            numaNodes[device->name] = nearestNumaNode(raw, device);
    }
    return numaNodes;
}

} // namespace stepmap::topology
