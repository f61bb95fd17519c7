#include "profile/profile_diff.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace stepmap::topology {
namespace {

std::string shown(const std::string &value) {
    return value;
}
std::string shown(int value) {
    return std::to_string(value);
}
std::string shown(std::uint32_t value) {
    return std::to_string(value);
}
std::string shown(bool value) {
    return value ? "up" : "down";
}
std::string shown(const std::optional<int> &numaNode) {
    return numaNode ? shown(*numaNode) : "unknown";
}
std::string shown(const std::optional<std::string> &pciAddress) {
    return pciAddress ? *pciAddress : "none";
}
std::string shown(const std::optional<std::uint64_t> &speedMbps) {
    return speedMbps ? std::to_string(*speedMbps) + " Mb/s" : "unknown";
}

class DifferenceList {
public:
    void add(bool stale, std::string text) {
        (stale ? stale_ : notes_).push_back({stale, std::move(text)});
    }

    // "<where>: <what> was <before>, now <after>" when the two differ.
    template <class T>
    void compare(bool stale, const std::string &where, const char *what, const T &before,
                 const T &after) {
        if (!(before == after))
            add(stale, where + ": " + what + " was " + shown(before) + ", now " + shown(after));
    }

    // "<where>: <kind> <name> added/removed" for names in one list only.
    template <class T, class Name>
    void addedAndRemoved(const std::string &where, const char *kind, const std::vector<T> &before,
                         const std::vector<T> &after, Name name) {
        for (const T &item : before) {
            if (std::none_of(after.begin(), after.end(),
                             [&](const T &other) { return name(other) == name(item); }))
                add(true, where + kind + " " + name(item) + " removed");
        }
        for (const T &item : after) {
            if (std::none_of(before.begin(), before.end(),
                             [&](const T &other) { return name(other) == name(item); }))
                add(true, where + kind + " " + name(item) + " added");
        }
    }

    std::vector<ProfileDifference> result() && {
        stale_.insert(stale_.end(), notes_.begin(), notes_.end());
        return std::move(stale_);
    }

private:
    std::vector<ProfileDifference> stale_;
    std::vector<ProfileDifference> notes_;
};

template <class T, class Key>
const T *findBy(const std::vector<T> &items, const Key &key, auto keyOf) {
    const auto it =
        std::find_if(items.begin(), items.end(), [&](const T &item) { return keyOf(item) == key; });
    return it == items.end() ? nullptr : &*it;
}

void compareInterface(DifferenceList &out, const std::string &where, const NetworkInterface &was,
                      const NetworkInterface &now) {
    for (const InterfaceAddress &address : was.addresses) {
        if (std::find(now.addresses.begin(), now.addresses.end(), address) == now.addresses.end())
            out.add(true, where + ": address " + addressText(address) + " removed");
    }
    for (const InterfaceAddress &address : now.addresses) {
        if (std::find(was.addresses.begin(), was.addresses.end(), address) == was.addresses.end())
            out.add(true, where + ": address " + addressText(address) + " added");
    }
    out.compare(true, where, "ifindex", was.ifindex, now.ifindex);
    out.compare(true, where, "MTU", was.mtu, now.mtu);
    out.compare(true, where, "MAC", was.mac, now.mac);
    out.compare(true, where, "PCI address", was.pciAddress, now.pciAddress);
    out.compare(true, where, "NUMA node", was.numaNode, now.numaNode);
    out.compare(false, where, "operstate", was.operstate, now.operstate);
    out.compare(false, where, "administrative state", was.adminUp, now.adminUp);
    out.compare(false, where, "speed", was.speedMbps, now.speedMbps);
}

// The interface of `live` that `gone` (missing from `live` by name) became:
// the one new interface with its MAC, when the MAC is unique on both sides.
const NetworkInterface *renamedTo(const NetworkInterface &gone, const NodeProfile &recorded,
                                  const NodeProfile &live) {
    if (gone.mac == "none")
        return nullptr;
    const auto sameMac = [&](const NetworkInterface &i) { return i.mac == gone.mac; };
    const auto isNew = [&](const NetworkInterface &i) {
        return findBy(recorded.interfaces, i.name, [](const auto &r) { return r.name; }) == nullptr;
    };
    if (std::count_if(recorded.interfaces.begin(), recorded.interfaces.end(), sameMac) != 1 ||
        std::count_if(live.interfaces.begin(), live.interfaces.end(), sameMac) != 1)
        return nullptr;
    const NetworkInterface *candidate =
        findBy(live.interfaces, gone.mac, [](const NetworkInterface &i) { return i.mac; });
    return candidate != nullptr && isNew(*candidate) ? candidate : nullptr;
}

void compareInterfaces(DifferenceList &out, const NodeProfile &recorded, const NodeProfile &live) {
    const auto nameOf = [](const NetworkInterface &i) { return i.name; };
    std::vector<std::string> renamedTargets;
    for (const NetworkInterface &was : recorded.interfaces) {
        if (const NetworkInterface *now = findBy(live.interfaces, was.name, nameOf)) {
            compareInterface(out, "interface " + was.name, was, *now);
        } else if (const NetworkInterface *renamed = renamedTo(was, recorded, live)) {
            out.add(true, "interface " + was.name + " renamed to " + renamed->name);
            compareInterface(out, "interface " + renamed->name, was, *renamed);
            renamedTargets.push_back(renamed->name);
        } else {
            out.add(true, "interface " + was.name + " removed");
        }
    }
    for (const NetworkInterface &now : live.interfaces) {
        if (findBy(recorded.interfaces, now.name, nameOf) == nullptr &&
            std::find(renamedTargets.begin(), renamedTargets.end(), now.name) ==
                renamedTargets.end())
            out.add(true, "interface " + now.name + " added");
    }
}

void comparePort(DifferenceList &out, const std::string &where, const RdmaPort &was,
                 const RdmaPort &now) {
    out.compare(true, where, "link layer", was.linkLayer, now.linkLayer);
    out.compare(true, where, "LID", was.lid, now.lid);
    const auto indexOf = [](const RdmaGid &gid) { return std::to_string(gid.index); };
    out.addedAndRemoved(where + ": ", "GID", was.gids, now.gids, indexOf);
    for (const RdmaGid &gid : was.gids) {
        if (const RdmaGid *same =
                findBy(now.gids, gid.index, [](const RdmaGid &g) { return g.index; }))
            out.compare(true, where, ("GID " + indexOf(gid)).c_str(), gid.gid, same->gid);
    }
    out.compare(false, where, "state", was.state, now.state);
    out.compare(false, where, "physical state", was.physState, now.physState);
    out.compare(false, where, "rate", was.rate, now.rate);
}

void compareRdma(DifferenceList &out, const NodeProfile &recorded, const NodeProfile &live) {
    const auto nameOf = [](const RdmaDevice &d) { return d.name; };
    out.addedAndRemoved("", "RDMA device", recorded.rdmaDevices, live.rdmaDevices, nameOf);
    for (const RdmaDevice &was : recorded.rdmaDevices) {
        const RdmaDevice *now = findBy(live.rdmaDevices, was.name, nameOf);
        if (now == nullptr)
            continue;
        const std::string where = "RDMA device " + was.name;
        out.compare(true, where, "node GUID", was.nodeGuid, now->nodeGuid);
        const auto numberOf = [](const RdmaPort &p) { return std::to_string(p.number); };
        out.addedAndRemoved(where + " ", "port", was.ports, now->ports, numberOf);
        for (const RdmaPort &port : was.ports) {
            if (const RdmaPort *same =
                    findBy(now->ports, port.number, [](const RdmaPort &p) { return p.number; }))
                comparePort(out, where + " port " + numberOf(port), port, *same);
        }
    }
}

} // namespace

std::vector<ProfileDifference> profileDifferences(const NodeProfile &recorded,
                                                  const NodeProfile &live) {
    DifferenceList out;
    out.compare(true, "node", "name", recorded.name, live.name);
    compareInterfaces(out, recorded, live);
    compareRdma(out, recorded, live);
    auto differences = std::move(out).result();
    // Whatever the sentences above miss (the order of the lists, say), the
    // digest does not: an entry is never called current when it differs.
    if (!anyStale(differences) && staticDigest(recorded) != staticDigest(live)) {
        differences.insert(differences.begin(),
                           {true, "static fields differ (digest was " + staticDigest(recorded) +
                                      ", now " + staticDigest(live) + ")"});
    }
    return differences;
}

bool anyStale(const std::vector<ProfileDifference> &differences) {
    return std::any_of(differences.begin(), differences.end(),
                       [](const ProfileDifference &d) { return d.stale; });
}

} // namespace stepmap::topology
