// device=: the node's devices in groups of NDEV, each with the PUs it is
// local to, and which group each process was given.

#include "placement/placement.hpp"

#include <algorithm>

#include "base/quote.hpp"
#include "placement/policy_words.hpp"

namespace stepmap::detail {

void Engine::recordDevice(std::uint32_t group) {
    if (procDevices_.size() < procs_.size())
        procDevices_.resize(procs_.size(), kUnbound);
    const std::string &names = deviceGroups_[group].names;
    const auto [it, inserted] =
        deviceSetIndex_.emplace(names, static_cast<std::uint32_t>(deviceSets_.size()));
    if (inserted)
        deviceSets_.push_back(names);
    procDevices_[procs_.size() - 1] = it->second;
}

namespace {

// The node's devices of the class (gpu, network) or the one named.
std::vector<const HwDevice *> matchingDevices(const NodeModel &model, const std::string &device,
                                              std::optional<DeviceKind> &kind) {
    const std::string wanted = lowerWord(device);
    if (wanted == "gpu")
        kind = DeviceKind::Gpu;
    else if (wanted == "network" || wanted == "openfabrics" || wanted == "fabric" ||
             wanted == "nic")
        kind = DeviceKind::Network;
    std::vector<const HwDevice *> devices;
    for (const HwDevice &candidate : model.devices()) {
        if (kind ? candidate.kind == *kind : candidate.name == device)
            devices.push_back(&candidate);
    }
    return devices;
}

// A GPU a process is told to use must carry its vendor identity.
std::optional<UserError> checkGpuIdentity(const std::vector<const HwDevice *> &devices,
                                          std::string_view node, const MapOptions &options) {
    for (const HwDevice *device : devices) {
        if (device->uuid.empty())
            return UserError{
                "--map-by device=" + escaped(options.device) + ": GPU " + device->name +
                " of node " + std::string(node) +
                " carries no vendor identity (hwloc saw it without its NVML, RSMI or Level "
                "Zero backend), so no process could be told which GPU is its own.\nUse an "
                "hwloc built with the vendor's backend, or place by --map-by numa or "
                "package."};
    }
    return std::nullopt;
}

HwLevel interleaveLevel(const std::string &interleave) {
    for (HwLevel level : {HwLevel::Numa, HwLevel::L3Cache, HwLevel::L2Cache, HwLevel::L1Cache}) {
        if (hwLevelName(level) == interleave)
            return level;
    }
    return HwLevel::Package;
}

// INTERLEAVE: the devices grouped by the object of `level` they are local
// to, then taken one from each group per round.
std::vector<const HwDevice *>
interleaved(const NodeModel &model, const std::vector<const HwDevice *> &devices, HwLevel level) {
    std::vector<std::uint32_t> keys;
    std::vector<std::vector<const HwDevice *>> groups;
    for (const HwDevice *device : devices) {
        const std::uint32_t key =
            device->puCount == 0 ? kNoIndex : model.objectOf(level, device->firstPu);
        const auto found = std::find(keys.begin(), keys.end(), key);
        if (found == keys.end()) {
            keys.push_back(key);
            groups.push_back({device});
        } else {
            groups[static_cast<std::size_t>(found - keys.begin())].push_back(device);
        }
    }
    std::vector<const HwDevice *> out;
    for (std::size_t round = 0; out.size() < model.devices().size(); ++round) {
        bool any = false;
        for (const auto &group : groups) {
            if (round < group.size()) {
                out.push_back(group[round]);
                any = true;
            }
        }
        if (!any)
            break;
    }
    return out;
}

// The PUs [first, end) a group of devices is local to: the smallest object
// holding all their CPUs, the whole node when one has none.
std::pair<std::uint32_t, std::uint32_t>
groupLocality(const NodeModel &model, const HwDevice *const *group, std::size_t count) {
    std::uint32_t first = kNoIndex;
    std::uint32_t end = 0;
    for (std::size_t m = 0; m < count; ++m) {
        if (group[m]->puCount == 0)
            return {0, model.puCount()};
        first = std::min(first, group[m]->firstPu);
        end = std::max(end, group[m]->firstPu + group[m]->puCount);
    }
    if (first == kNoIndex)
        return {0, model.puCount()};
    if (count == 1)
        return {first, end};
    std::uint32_t bestFirst = 0;
    std::uint32_t bestEnd = model.puCount();
    for (std::size_t level = 0; level < kHwLevelCount; ++level) {
        for (const HwObject &object : model.objects(static_cast<HwLevel>(level))) {
            if (object.firstPu <= first && object.firstPu + object.puCount >= end &&
                object.puCount < bestEnd - bestFirst) {
                bestFirst = object.firstPu;
                bestEnd = object.firstPu + object.puCount;
            }
        }
    }
    return {bestFirst, bestEnd};
}

// A binding wider than the devices' locality would bind the process away
// from them.
std::optional<UserError> checkBindWithin(const NodeModel &model,
                                         std::pair<std::uint32_t, std::uint32_t> locality,
                                         std::string_view node, const MapOptions &options) {
    if (options.bind == BindTo::None)
        return std::nullopt;
    const auto [first, end] = locality;
    for (const HwObject &object : model.objects(*levelOf(options.bind))) {
        const std::uint32_t objectEnd = object.firstPu + object.puCount;
        const bool intersects = object.firstPu < end && first < objectEnd;
        const bool wider = object.firstPu <= first && objectEnd >= end &&
                           (object.firstPu != first || objectEnd != end);
        if (intersects && wider)
            return UserError{"--bind-to " + lowerWord(bindToWord(options.bind)) +
                             " binds wider than the CPUs the " + escaped(options.device) +
                             " devices of node " + std::string(node) +
                             " are local to.\nBind to their locality or below (e.g. --bind-to "
                             "core), or give each process several devices (NDEV=n)."};
    }
    return std::nullopt;
}

} // namespace

// PRRTE's device enumerator (rmaps_base_devices.c): the node's devices of
// the class (gpu, network) or the one named, reordered across packages
// (or another level) with INTERLEAVE, handed out NDEV at a time; a group's
// locality is the smallest object holding all its devices' CPUs.
std::optional<UserError> Engine::loadDeviceGroups(std::uint32_t index, const MapOptions &options) {
    if (deviceGroupsNode_ == index)
        return std::nullopt;
    deviceGroups_.clear();
    deviceGroupsNode_ = index;
    const NodeState &node = nodes_[index];
    if (node.model == nullptr)
        return std::nullopt;
    const NodeModel &model = *node.model;
    std::optional<DeviceKind> kind;
    std::vector<const HwDevice *> devices = matchingDevices(model, options.device, kind);
    if (devices.empty())
        return std::nullopt;
    if (kind == DeviceKind::Gpu)
        if (auto error = checkGpuIdentity(devices, node.name, options))
            return error;
    if (!options.interleave.empty())
        devices = interleaved(model, devices, interleaveLevel(options.interleave));
    const auto per = static_cast<std::size_t>(options.ndev);
    for (std::size_t g = 0; g + per <= devices.size(); g += per) {
        DeviceGroup group;
        for (std::size_t m = 0; m < per; ++m) {
            if (!group.names.empty())
                group.names += ',';
            group.names += devices[g + m]->name;
        }
        const auto locality = groupLocality(model, &devices[g], per);
        if (auto error = checkBindWithin(model, locality, node.name, options))
            return error;
        group.firstPu = locality.first;
        group.puCount = locality.second - locality.first;
        deviceGroups_.push_back(std::move(group));
    }
    return std::nullopt;
}

} // namespace stepmap::detail
