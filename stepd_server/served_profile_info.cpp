#include "served_profile_info.hpp"

#include "profile_text.hpp"

#include <algorithm>

namespace stepmap::server {

namespace {

// PMIx names link state up, down or unknown; the kernel's operstate words
// map onto them.
pmix_link_state_t interfaceState(const std::string &operstate) {
    if (operstate == "up")
        return PMIX_LINK_UP;
    if (operstate == "down" || operstate == "lowerlayerdown" || operstate == "notpresent")
        return PMIX_LINK_DOWN;
    return PMIX_LINK_STATE_UNKNOWN;
}

// Any active port makes the device up; ports none of them active, down.
pmix_link_state_t deviceState(const topology::RdmaDevice &d) {
    if (d.ports.empty())
        return PMIX_LINK_STATE_UNKNOWN;
    for (const auto &p : d.ports)
        if (p.state == "ACTIVE")
            return PMIX_LINK_UP;
    return PMIX_LINK_DOWN;
}

// The link layer of an interface, from its link-level address: 6 bytes
// Ethernet, 20 bytes IPoIB; nothing for others ("none": tunnels).
const char *interfaceType(const std::string &mac) {
    if (mac.size() == 17)
        return "Ethernet";
    if (mac.size() == 59)
        return "InfiniBand";
    return nullptr;
}

void addInterfaceDevice(InfoList &devices, const topology::NetworkInterface &i) {
    InfoList dev;
    dev.addString(PMIX_FABRIC_DEVICE_NAME, i.name);
    if (const char *type = interfaceType(i.mac))
        dev.addString(PMIX_FABRIC_DEVICE_TYPE, type);
    if (i.mac != "none")
        dev.addString(PMIX_FABRIC_DEVICE_ADDRESS, i.mac);
    dev.addSize(PMIX_FABRIC_DEVICE_MTU, static_cast<std::size_t>(i.mtu));
    if (i.speedMbps)
        dev.addSize(PMIX_FABRIC_DEVICE_SPEED, static_cast<std::size_t>(*i.speedMbps * 1000000));
    const pmix_link_state_t state = interfaceState(i.operstate);
    dev.add(PMIX_FABRIC_DEVICE_STATE, &state, PMIX_LINK_STATE);
    if (i.pciAddress)
        dev.addString(PMIX_FABRIC_DEVICE_PCI_DEVID, pciDeviceId(*i.pciAddress));
    devices.addList(PMIX_FABRIC_DEVICE, dev);
}

void addRdmaDevice(InfoList &devices, const topology::RdmaDevice &d) {
    InfoList dev;
    dev.addString(PMIX_FABRIC_DEVICE_NAME, d.name);
    if (!d.ports.empty())
        dev.addString(PMIX_FABRIC_DEVICE_TYPE, d.ports.front().linkLayer);
    dev.addString(PMIX_FABRIC_DEVICE_ADDRESS, d.nodeGuid);
    for (const auto &p : d.ports)
        if (auto bits = rateBitsPerSecond(p.rate); bits && p.state == "ACTIVE") {
            dev.addSize(PMIX_FABRIC_DEVICE_SPEED, static_cast<std::size_t>(*bits));
            break;
        }
    const pmix_link_state_t state = deviceState(d);
    dev.add(PMIX_FABRIC_DEVICE_STATE, &state, PMIX_LINK_STATE);
    devices.addList(PMIX_FABRIC_DEVICE, dev);
}

void addFabricDevices(InfoList &node, const topology::NodeProfile &entry) {
    if (entry.interfaces.empty() && entry.rdmaDevices.empty())
        return;
    InfoList devices;
    for (const auto &i : entry.interfaces)
        addInterfaceDevice(devices, i);
    for (const auto &d : entry.rdmaDevices)
        addRdmaDevice(devices, d);
    node.addList(PMIX_FABRIC_DEVICES, devices);
}

void addNode(InfoList &job, const std::string &name, std::uint32_t id,
             const topology::NodeProfile &entry, bool fabricDevices) {
    InfoList node;
    node.addString(PMIX_HOSTNAME, name);
    node.addU32(PMIX_NODEID, id);
    if (fabricDevices)
        addFabricDevices(node, entry);
    node.addString(kProfileDigestKey, entry.digest);
    node.addString(kProfileTimeKey, entry.profiledAt);
    node.addString(kNetInterfacesKey, interfacesText(entry));
    node.addString(kRdmaDevicesKey, rdmaDevicesText(entry));
    job.addList(PMIX_NODE_INFO_ARRAY, node);
}

} // namespace

void addServedNodes(InfoList &job, const LaunchPlan &plan, const ServedProfile &profile) {
    const std::size_t n = std::min(plan.nodes.size(), profile.nodes.size());
    for (std::size_t i = 0; i < n; ++i)
        if (profile.nodes[i])
            addNode(job, plan.nodes[i].name, static_cast<std::uint32_t>(i), *profile.nodes[i],
                    profile.fabricDevices);
}

void addRankKeys(InfoList &proc, const std::vector<std::pair<std::string, std::string>> &keys) {
    for (const auto &[key, bytes] : keys) {
        if (key.empty() || key.size() > PMIX_MAX_KEYLEN)
            throw std::runtime_error("a served rank key must have 1 to " +
                                     std::to_string(PMIX_MAX_KEYLEN) + " bytes");
        proc.addBytes(key.c_str(), bytes);
    }
}

} // namespace stepmap::server
