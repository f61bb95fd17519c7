// The strict loader half of profile_yaml.hpp. Inside this file a bad value
// throws LoadFailure with the finished message; loadProfileYaml catches it
// and yaml-cpp's own exceptions, so none leaves the API.

#include "profile/profile_yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <utility>

#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap::topology {
namespace {

struct LoadFailure {
    std::string message;
};

std::string locatedMessage(std::string_view fileName, const YAML::Mark &mark,
                           const std::string &path, const std::string &what) {
    const std::string line = mark.is_null() ? "" : ":" + std::to_string(mark.line + 1);
    return escaped(fileName, kShownPathBytes) + line + ": " + (path.empty() ? "" : path + ": ") +
           what;
}

// Where values come from: the file name and the path of keys to the value.
class Place {
public:
    // `itemBudget`: list items left to read. A file of N bytes holds fewer
    // than N items unless YAML aliases repeat parts of it, which could make
    // a small file cost minutes; past the budget the file is refused.
    Place(std::string_view fileName, std::string path, std::size_t *itemBudget)
        : fileName_(fileName), path_(std::move(path)), itemBudget_(itemBudget) {}

    Place key(std::string_view name) const {
        return {fileName_, path_.empty() ? std::string(name) : path_ + "." + std::string(name),
                itemBudget_};
    }
    Place item(std::size_t index) const {
        return {fileName_, path_ + "[" + std::to_string(index) + "]", itemBudget_};
    }

    void spendItem(const YAML::Node &node) const {
        if (*itemBudget_ == 0)
            fail(node, "more list items than the file has bytes (YAML aliases repeating parts)");
        --*itemBudget_;
    }

    [[noreturn]] void fail(const YAML::Node &node, const std::string &what) const {
        fail(node.Mark(), what);
    }
    [[noreturn]] void fail(const YAML::Mark &mark, const std::string &what) const {
        throw LoadFailure{locatedMessage(fileName_, mark, path_, what)};
    }

private:
    std::string_view fileName_;
    std::string path_;
    std::size_t *itemBudget_;
};

// A YAML map whose keys must all be known and appear at most once.
class StrictMap {
public:
    StrictMap(const YAML::Node &node, const Place &place, std::initializer_list<const char *> keys)
        : node_(node), place_(place) {
        if (!node.IsMap())
            place.fail(node, "expected a map of keys");
        std::set<std::string> known(keys.begin(), keys.end());
        std::set<std::string> seen;
        for (const auto &entry : node) {
            const std::string name = entry.first.Scalar();
            if (known.count(name) == 0)
                place.key(name).fail(entry.first, "unknown key");
            if (!seen.insert(name).second)
                place.key(name).fail(entry.first, "repeated key");
        }
    }

    // The value of a key that must be there.
    std::pair<YAML::Node, Place> operator[](const char *name) const {
        const YAML::Node value = node_[name];
        if (!value)
            place_.fail(node_, "missing key '" + std::string(name) + "'");
        return {value, place_.key(name)};
    }

private:
    YAML::Node node_;
    Place place_;
};

std::string scalar(const std::pair<YAML::Node, Place> &field) {
    if (!field.first.IsScalar())
        field.second.fail(field.first, "expected a single value");
    return field.first.Scalar();
}

// A scalar accepted by `check`, else "'value' is not <what>".
template <class Check>
std::string checked(const std::pair<YAML::Node, Place> &field, Check check, const char *what) {
    std::string text = scalar(field);
    if (!check(text))
        field.second.fail(field.first, quoted(text) + " is not " + what);
    return text;
}

std::uint64_t number(const std::pair<YAML::Node, Place> &field, std::uint64_t limit) {
    const std::string text = scalar(field);
    const auto value = detail::parseUnsigned(text, limit);
    if (!value) {
        field.second.fail(field.first, detail::isNumberAbove(text, limit)
                                           ? quoted(text) + " is above " + std::to_string(limit)
                                           : quoted(text) + " is not a number");
    }
    return *value;
}

int smallNumber(const std::pair<YAML::Node, Place> &field, int limit) {
    return static_cast<int>(number(field, static_cast<std::uint64_t>(limit)));
}

// A number, or the word `absent` for "not known / not there".
template <class T>
std::optional<T> numberOr(const std::pair<YAML::Node, Place> &field, std::uint64_t limit,
                          const char *absent) {
    if (field.first.IsScalar() && field.first.Scalar() == absent)
        return std::nullopt;
    return static_cast<T>(number(field, limit));
}

// The kernel numbers interfaces from 1 up, in an int.
std::uint32_t interfaceIndex(const std::pair<YAML::Node, Place> &field) {
    const auto index = number(field, kMaxInterfaceIndex);
    if (index == 0)
        field.second.fail(field.first, "'0' is not an interface index (they start at 1)");
    return static_cast<std::uint32_t>(index);
}

// Only the two words the writer writes: YAML 1.1's yes/no/on/off are refused.
bool truth(const std::pair<YAML::Node, Place> &field) {
    const std::string text = scalar(field);
    if (text != "true" && text != "false")
        field.second.fail(field.first, quoted(text) + " is not true or false");
    return text == "true";
}

template <class Item, class Read>
std::vector<Item> sequence(const std::pair<YAML::Node, Place> &field, Read read) {
    if (!field.first.IsSequence())
        field.second.fail(field.first, "expected a list");
    std::vector<Item> items;
    for (std::size_t i = 0; i < field.first.size(); ++i) {
        field.second.spendItem(field.first[i]);
        items.push_back(read(std::pair{field.first[i], field.second.item(i)}));
    }
    return items;
}

NetworkInterface readInterface(const std::pair<YAML::Node, Place> &field) {
    const StrictMap map(field.first, field.second,
                        {"name", "ifindex", "addresses", "mtu", "speed_mbps", "operstate",
                         "admin_up", "mac", "pci_address", "numa_node"});
    NetworkInterface interface;
    interface.name = checked(map["name"], isProfileName, "an interface name");
    interface.ifindex = interfaceIndex(map["ifindex"]);
    interface.addresses = sequence<InterfaceAddress>(map["addresses"], [](const auto &item) {
        const std::string text = scalar(item);
        const auto address = parseInterfaceAddress(text);
        if (!address)
            item.second.fail(item.first, quoted(text) + " is not an address/prefix length");
        return *address;
    });
    interface.mtu = smallNumber(map["mtu"], 1 << 20);
    interface.speedMbps = numberOr<std::uint64_t>(map["speed_mbps"], 1u << 30, "unknown");
    interface.operstate = checked(map["operstate"], isOperstate, "an operstate");
    interface.adminUp = truth(map["admin_up"]);
    interface.mac = checked(map["mac"], isLinkAddress, "a MAC address");
    const auto pci = map["pci_address"];
    if (scalar(pci) != "none")
        interface.pciAddress = checked(pci, isPciAddress, "a PCI address");
    interface.numaNode = numberOr<int>(map["numa_node"], 1 << 16, "unknown");
    return interface;
}

RdmaPort readPort(const std::pair<YAML::Node, Place> &field) {
    const StrictMap map(field.first, field.second,
                        {"number", "state", "phys_state", "link_layer", "rate", "lid", "gids"});
    RdmaPort port;
    port.number = smallNumber(map["number"], 255);
    port.state = checked(map["state"], isPortState, "a port state");
    port.physState = checked(map["phys_state"], isProfileName, "a physical port state");
    port.linkLayer = checked(map["link_layer"], isLinkLayer, "a link layer");
    port.rate = checked(map["rate"], isPortRate, "a port rate");
    port.lid = smallNumber(map["lid"], 0xffff);
    port.gids = sequence<RdmaGid>(map["gids"], [](const auto &item) {
        const StrictMap gid(item.first, item.second, {"index", "gid"});
        return RdmaGid{smallNumber(gid["index"], 1 << 16), checked(gid["gid"], isGid, "a GID")};
    });
    return port;
}

RdmaDevice readDevice(const std::pair<YAML::Node, Place> &field) {
    const StrictMap map(field.first, field.second, {"name", "node_guid", "ports"});
    RdmaDevice device;
    device.name = checked(map["name"], isProfileName, "a device name");
    device.nodeGuid = checked(map["node_guid"], isGuid, "a GUID");
    device.ports = sequence<RdmaPort>(map["ports"], readPort);
    return device;
}

NodeProfile readNode(const std::pair<YAML::Node, Place> &field) {
    const StrictMap map(field.first, field.second,
                        {"name", "profiled_at", "method", "digest", "interfaces", "rdma_devices"});
    NodeProfile node;
    node.name = checked(map["name"], isProfileName, "a node name");
    node.profiledAt = checked(map["profiled_at"], isUtcTime, "a UTC time (YYYY-MM-DDTHH:MM:SSZ)");
    node.method = checked(map["method"], isProfileName, "a method name");
    node.interfaces = sequence<NetworkInterface>(map["interfaces"], readInterface);
    node.rdmaDevices = sequence<RdmaDevice>(map["rdma_devices"], readDevice);
    const auto digest = map["digest"];
    node.digest = scalar(digest);
    const std::string expected = staticDigest(node);
    if (node.digest != expected) {
        digest.second.fail(digest.first, quoted(node.digest) +
                                             " does not match the node's fields (they give " +
                                             expected + "); profile the node again");
    }
    return node;
}

Profile readProfile(const YAML::Node &root, std::string_view fileName, std::size_t itemBudget) {
    const Place top(fileName, "", &itemBudget);
    const StrictMap map(root, top, {"format_version", "nodes"});
    Profile profile;
    const auto version = map["format_version"];
    if (scalar(version) != std::to_string(kProfileFormatVersion)) {
        version.second.fail(version.first, quoted(scalar(version)) +
                                               " is not a format this stepmap reads (" +
                                               std::to_string(kProfileFormatVersion) + ")");
    }
    profile.nodes = sequence<NodeProfile>(map["nodes"], readNode);
    std::set<std::string> names;
    const auto nodes = map["nodes"];
    for (std::size_t i = 0; i < profile.nodes.size(); ++i) {
        if (!names.insert(profile.nodes[i].name).second) {
            nodes.second.item(i).key("name").fail(
                nodes.first[i]["name"], "node " + quoted(profile.nodes[i].name) + " appears twice");
        }
    }
    return profile;
}

} // namespace

Expected<Profile> loadProfileYaml(std::string_view text, std::string_view fileName) {
    try {
        return readProfile(YAML::Load(std::string(text)), fileName, text.size());
    } catch (const LoadFailure &failure) {
        return UserError{failure.message};
    } catch (const YAML::Exception &error) {
        return UserError{locatedMessage(fileName, error.mark, "", error.msg)};
    } catch (const std::exception &error) {
        return UserError{escaped(fileName, kShownPathBytes) + ": " + error.what()};
    }
}

Expected<Profile> readProfileFile(const std::string &path) {
    std::ifstream file(path, std::ios::binary);
    if (!file)
        return UserError{escaped(path, kShownPathBytes) + ": cannot open the profile"};
    std::string text;
    std::string chunk(std::size_t{1} << 16, '\0');
    while (text.size() <= kMaxProfileBytes &&
           file.read(chunk.data(), static_cast<std::streamsize>(chunk.size())).gcount() > 0)
        text.append(chunk, 0, static_cast<std::size_t>(file.gcount()));
    if (file.bad())
        return UserError{escaped(path, kShownPathBytes) + ": cannot read the profile"};
    if (text.size() > kMaxProfileBytes) {
        return UserError{escaped(path, kShownPathBytes) + ": larger than " +
                         std::to_string(kMaxProfileBytes >> 20) + " MiB"};
    }
    return loadProfileYaml(text, path);
}

} // namespace stepmap::topology
