// The writer half of profile_yaml.hpp.

#include "profile/profile_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace stepmap::topology {
namespace {

template <class T>
void writeOptional(YAML::Emitter &out, const char *key, const std::optional<T> &value,
                   const char *absent) {
    out << YAML::Key << key << YAML::Value;
    if (value)
        out << *value;
    else
        out << absent;
}

template <class T> void field(YAML::Emitter &out, const char *key, const T &value) {
    out << YAML::Key << key << YAML::Value << value;
}

// A list under `key`, each item written by writeItem; an empty list as
// "[]" on its key's line rather than alone below it.
template <class T, class WriteItem>
void writeList(YAML::Emitter &out, const char *key, const std::vector<T> &items,
               WriteItem writeItem) {
    out << YAML::Key << key << YAML::Value;
    if (items.empty())
        out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const T &item : items)
        writeItem(out, item);
    out << YAML::EndSeq;
}

void writeAddress(YAML::Emitter &out, const InterfaceAddress &address) {
    out << addressText(address);
}

void writeGid(YAML::Emitter &out, const RdmaGid &gid) {
    out << YAML::BeginMap;
    field(out, "index", gid.index);
    field(out, "gid", gid.gid);
    out << YAML::EndMap;
}

void writeInterface(YAML::Emitter &out, const NetworkInterface &interface) {
    out << YAML::BeginMap;
    field(out, "name", interface.name);
    field(out, "ifindex", interface.ifindex);
    writeList(out, "addresses", interface.addresses, writeAddress);
    field(out, "mtu", interface.mtu);
    writeOptional(out, "speed_mbps", interface.speedMbps, "unknown");
    field(out, "operstate", interface.operstate);
    field(out, "admin_up", interface.adminUp ? "true" : "false");
    field(out, "mac", interface.mac);
    writeOptional(out, "pci_address", interface.pciAddress, "none");
    writeOptional(out, "numa_node", interface.numaNode, "unknown");
    out << YAML::EndMap;
}

void writePort(YAML::Emitter &out, const RdmaPort &port) {
    out << YAML::BeginMap;
    field(out, "number", port.number);
    field(out, "state", port.state);
    field(out, "phys_state", port.physState);
    field(out, "link_layer", port.linkLayer);
    field(out, "rate", port.rate);
    field(out, "lid", port.lid);
    writeList(out, "gids", port.gids, writeGid);
    out << YAML::EndMap;
}

void writeDevice(YAML::Emitter &out, const RdmaDevice &device) {
    out << YAML::BeginMap;
    field(out, "name", device.name);
    field(out, "node_guid", device.nodeGuid);
    writeList(out, "ports", device.ports, writePort);
    out << YAML::EndMap;
}

void writeNode(YAML::Emitter &out, const NodeProfile &node) {
    out << YAML::BeginMap;
    field(out, "name", node.name);
    field(out, "profiled_at", node.profiledAt);
    field(out, "method", node.method);
    field(out, "digest", node.digest);
    writeList(out, "interfaces", node.interfaces, writeInterface);
    writeList(out, "rdma_devices", node.rdmaDevices, writeDevice);
    out << YAML::EndMap;
}

} // namespace

std::string writeProfileYaml(const Profile &profile) {
    std::vector<const NodeProfile *> nodes;
    for (const NodeProfile &node : profile.nodes)
        nodes.push_back(&node);
    std::stable_sort(nodes.begin(), nodes.end(),
                     [](const NodeProfile *a, const NodeProfile *b) { return a->name < b->name; });
    YAML::Emitter out;
    out << YAML::BeginMap;
    field(out, "format_version", profile.formatVersion);
    writeList(out, "nodes", nodes,
              [](YAML::Emitter &o, const NodeProfile *node) { writeNode(o, *node); });
    out << YAML::EndMap;
    return "# stepmap interconnect profile (topology/profile/README.md)\n" +
           std::string(out.c_str()) + "\n";
}

} // namespace stepmap::topology
