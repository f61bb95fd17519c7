#include "profile_text.hpp"

#include <cstdlib>

namespace stepmap::server {

namespace {

std::string interfaceLine(const topology::NetworkInterface &i) {
    std::string line = i.name;
    line += " ifindex=" + (i.ifindex ? std::to_string(i.ifindex) : std::string("-"));
    line += " mtu=" + std::to_string(i.mtu) + " mac=" + i.mac;
    line += " numa=" + (i.numaNode ? std::to_string(*i.numaNode) : std::string("-"));
    line += " addresses=";
    for (std::size_t a = 0; a < i.addresses.size(); ++a)
        line += (a ? "," : "") + i.addresses[a].address + "/" +
                std::to_string(i.addresses[a].prefixLength);
    return line;
}

std::string portLine(const topology::RdmaDevice &d, const topology::RdmaPort &p) {
    std::string line = d.name + " guid=" + d.nodeGuid + " port=" + std::to_string(p.number) +
                       " layer=" + p.linkLayer + " state=" + p.state +
                       " lid=" + std::to_string(p.lid) + " gids=";
    for (std::size_t g = 0; g < p.gids.size(); ++g)
        line += (g ? "," : "") + std::to_string(p.gids[g].index) + ":" + p.gids[g].gid;
    return line + " rate=" + p.rate;
}

void appendLine(std::string &text, const std::string &line) {
    if (!text.empty())
        text += '\n';
    text += line;
}

} // namespace

std::string interfacesText(const topology::NodeProfile &node) {
    std::string text;
    for (const auto &i : node.interfaces)
        appendLine(text, interfaceLine(i));
    return text;
}

std::string rdmaDevicesText(const topology::NodeProfile &node) {
    std::string text;
    for (const auto &d : node.rdmaDevices) {
        if (d.ports.empty())
            appendLine(text, d.name + " guid=" + d.nodeGuid);
        for (const auto &p : d.ports)
            appendLine(text, portLine(d, p));
    }
    return text;
}

std::string pciDeviceId(const std::string &pciAddress) {
    std::string id = pciAddress;
    if (auto dot = id.rfind('.'); dot != std::string::npos)
        id = id.substr(0, dot) + ":" + (id.size() - dot == 2 ? "0" : "") + id.substr(dot + 1);
    return id;
}

std::optional<std::uint64_t> rateBitsPerSecond(const std::string &rate) {
    const char *start = rate.c_str();
    char *end = nullptr;
    const double gbits = std::strtod(start, &end);
    if (end == start || !(gbits > 0) || gbits > 1e6 || std::string(end).rfind(" Gb/sec", 0) != 0)
        return std::nullopt;
    return static_cast<std::uint64_t>(gbits * 1e9 + 0.5);
}

} // namespace stepmap::server
