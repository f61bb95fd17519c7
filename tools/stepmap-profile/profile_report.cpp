#include "profile_report.hpp"

#include <algorithm>
#include <vector>

namespace stepmap::tools {
namespace {

using topology::NetworkInterface;
using topology::NodeProfile;
using topology::RdmaDevice;

// Rows of cells printed in columns two blanks apart, indented by two.
class TextTable {
public:
    void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }

    std::string text() const {
        std::vector<std::size_t> widths;
        for (const auto &row : rows_) {
            widths.resize(std::max(widths.size(), row.size()));
            for (std::size_t i = 0; i < row.size(); ++i)
                widths[i] = std::max(widths[i], row[i].size());
        }
        std::string out;
        for (const auto &row : rows_) {
            std::string line = " ";
            for (std::size_t i = 0; i < row.size(); ++i)
                line += " " + row[i] +
                        std::string(i + 1 < row.size() ? widths[i] - row[i].size() + 1 : 0, ' ');
            out += line + "\n";
        }
        return out;
    }

private:
    std::vector<std::vector<std::string>> rows_;
};

std::string addressesCell(const NetworkInterface &interface) {
    std::string cell;
    for (const auto &address : interface.addresses)
        cell += (cell.empty() ? "" : " ") + topology::addressText(address);
    return cell.empty() ? "-" : cell;
}

std::string interfaceTable(const NodeProfile &node) {
    TextTable table;
    table.add({"interface", "state", "mtu", "speed", "mac", "pci", "numa", "addresses"});
    for (const NetworkInterface &interface : node.interfaces) {
        table.add({interface.name, interface.operstate, std::to_string(interface.mtu),
                   interface.speedMbps ? std::to_string(*interface.speedMbps) + " Mb/s" : "-",
                   interface.mac, interface.pciAddress.value_or("-"),
                   interface.numaNode ? std::to_string(*interface.numaNode) : "-",
                   addressesCell(interface)});
    }
    return table.text();
}

std::string rdmaTable(const NodeProfile &node) {
    TextTable table;
    table.add({"rdma", "guid", "port", "state", "link", "rate", "lid", "gids"});
    for (const RdmaDevice &device : node.rdmaDevices) {
        for (const auto &port : device.ports) {
            table.add({device.name, device.nodeGuid, std::to_string(port.number),
                       port.state + "/" + port.physState, port.linkLayer, port.rate,
                       std::to_string(port.lid), std::to_string(port.gids.size())});
        }
    }
    return table.text();
}

} // namespace

std::string profileReport(const topology::Profile &profile) {
    std::string out;
    for (const NodeProfile &node : profile.nodes) {
        out += (out.empty() ? "" : "\n") + std::string("node ") + node.name + " (" + node.method +
               ", " + node.profiledAt + ", " + node.digest.substr(0, 19) + ")\n";
        if (node.interfaces.empty())
            out += "  no network interfaces\n";
        else
            out += interfaceTable(node);
        if (!node.rdmaDevices.empty())
            out += rdmaTable(node);
    }
    return out.empty() ? "no nodes\n" : out;
}

} // namespace stepmap::tools
