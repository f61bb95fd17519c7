// The writer half of profile_yaml.hpp.

#include "profile/profile_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>

namespace stepmap::topology {
namespace {

template <class T>
void writeOptional(YAML::Emitter &out, const std::optional<T> &value, const char *absent) {
    if (value)
        out << *value;
    else
        out << absent;
}

// An empty list as "[]" on its key's line rather than alone below it.
template <class T> void beginList(YAML::Emitter &out, const std::vector<T> &items) {
    if (items.empty())
        out << YAML::Flow;
    out << YAML::BeginSeq;
}

void writeInterface(YAML::Emitter &out, const NetworkInterface &interface) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << interface.name;
    out << YAML::Key << "addresses" << YAML::Value;
    beginList(out, interface.addresses);
    for (const InterfaceAddress &address : interface.addresses)
        out << addressText(address);
    out << YAML::EndSeq;
    out << YAML::Key << "mtu" << YAML::Value << interface.mtu;
    out << YAML::Key << "speed_mbps" << YAML::Value;
    writeOptional(out, interface.speedMbps, "unknown");
    out << YAML::Key << "operstate" << YAML::Value << interface.operstate;
    out << YAML::Key << "mac" << YAML::Value << interface.mac;
    out << YAML::Key << "pci_address" << YAML::Value;
    writeOptional(out, interface.pciAddress, "none");
    out << YAML::Key << "numa_node" << YAML::Value;
    writeOptional(out, interface.numaNode, "unknown");
    out << YAML::EndMap;
}

void writePort(YAML::Emitter &out, const RdmaPort &port) {
    out << YAML::BeginMap;
    out << YAML::Key << "number" << YAML::Value << port.number;
    out << YAML::Key << "state" << YAML::Value << port.state;
    out << YAML::Key << "phys_state" << YAML::Value << port.physState;
    out << YAML::Key << "link_layer" << YAML::Value << port.linkLayer;
    out << YAML::Key << "rate" << YAML::Value << port.rate;
    out << YAML::Key << "lid" << YAML::Value << port.lid;
    out << YAML::Key << "gids" << YAML::Value;
    beginList(out, port.gids);
    for (const RdmaGid &gid : port.gids) {
        out << YAML::BeginMap << YAML::Key << "index" << YAML::Value << gid.index;
        out << YAML::Key << "gid" << YAML::Value << gid.gid << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
}

void writeDevice(YAML::Emitter &out, const RdmaDevice &device) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << device.name;
    out << YAML::Key << "node_guid" << YAML::Value << device.nodeGuid;
    out << YAML::Key << "ports" << YAML::Value;
    beginList(out, device.ports);
    for (const RdmaPort &port : device.ports)
        writePort(out, port);
    out << YAML::EndSeq << YAML::EndMap;
}

void writeNode(YAML::Emitter &out, const NodeProfile &node) {
    out << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << node.name;
    out << YAML::Key << "profiled_at" << YAML::Value << node.profiledAt;
    out << YAML::Key << "method" << YAML::Value << node.method;
    out << YAML::Key << "digest" << YAML::Value << node.digest;
    out << YAML::Key << "interfaces" << YAML::Value;
    beginList(out, node.interfaces);
    for (const NetworkInterface &interface : node.interfaces)
        writeInterface(out, interface);
    out << YAML::EndSeq;
    out << YAML::Key << "rdma_devices" << YAML::Value;
    beginList(out, node.rdmaDevices);
    for (const RdmaDevice &device : node.rdmaDevices)
        writeDevice(out, device);
    out << YAML::EndSeq << YAML::EndMap;
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
    out << YAML::Key << "format_version" << YAML::Value << profile.formatVersion;
    out << YAML::Key << "nodes" << YAML::Value;
    beginList(out, profile.nodes);
    for (const NodeProfile *node : nodes)
        writeNode(out, *node);
    out << YAML::EndSeq << YAML::EndMap;
    return "# stepmap interconnect profile (topology/profile/README.md)\n" +
           std::string(out.c_str()) + "\n";
}

} // namespace stepmap::topology
