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
    const std::string wanted = lowerWord(options.device);
    std::optional<DeviceKind> kind;
    if (wanted == "gpu")
        kind = DeviceKind::Gpu;
    else if (wanted == "network" || wanted == "openfabrics" || wanted == "fabric" ||
             wanted == "nic")
        kind = DeviceKind::Network;
    std::vector<const HwDevice *> devices;
    for (const HwDevice &device : model.devices()) {
        if (kind ? device.kind == *kind : device.name == options.device)
            devices.push_back(&device);
    }
    if (devices.empty())
        return std::nullopt;
    if (kind == DeviceKind::Gpu) {
        for (const HwDevice *device : devices) {
            if (device->uuid.empty())
                return UserError{
                    "--map-by device=" + escaped(options.device) + ": GPU " + device->name +
                    " of node " + std::string(node.name) +
                    " carries no vendor identity (hwloc saw it without its NVML, RSMI or Level "
                    "Zero backend), so no process could be told which GPU is its own.\nUse an "
                    "hwloc built with the vendor's backend, or place by --map-by numa or "
                    "package."};
        }
    }
    const auto puOf = [](const HwDevice *device) { return device->firstPu; };
    if (!options.interleave.empty()) {
        HwLevel level = HwLevel::Package;
        if (options.interleave == "numa")
            level = HwLevel::Numa;
        else if (options.interleave == "l3cache")
            level = HwLevel::L3Cache;
        else if (options.interleave == "l2cache")
            level = HwLevel::L2Cache;
        else if (options.interleave == "l1cache")
            level = HwLevel::L1Cache;
        std::vector<std::uint32_t> keys;
        std::vector<std::vector<const HwDevice *>> groups;
        for (const HwDevice *device : devices) {
            const std::uint32_t key =
                device->puCount == 0 ? kNoIndex : model.objectOf(level, puOf(device));
            const auto found = std::find(keys.begin(), keys.end(), key);
            if (found == keys.end()) {
                keys.push_back(key);
                groups.push_back({device});
            } else {
                groups[static_cast<std::size_t>(found - keys.begin())].push_back(device);
            }
        }
        devices.clear();
        for (std::size_t round = 0; devices.size() < model.devices().size(); ++round) {
            bool any = false;
            for (const auto &group : groups) {
                if (round < group.size()) {
                    devices.push_back(group[round]);
                    any = true;
                }
            }
            if (!any)
                break;
        }
    }
    const auto per = static_cast<std::size_t>(options.ndev);
    for (std::size_t g = 0; g + per <= devices.size(); g += per) {
        DeviceGroup group;
        std::uint32_t first = kNoIndex;
        std::uint32_t end = 0;
        bool local = true;
        for (std::size_t m = 0; m < per; ++m) {
            const HwDevice *device = devices[g + m];
            if (!group.names.empty())
                group.names += ',';
            group.names += device->name;
            if (device->puCount == 0) {
                local = false;
                continue;
            }
            first = std::min(first, device->firstPu);
            end = std::max(end, device->firstPu + device->puCount);
        }
        if (!local || first == kNoIndex) {
            first = 0;
            end = model.puCount();
        } else if (per > 1) {
            // The smallest object holding them all (else the whole node).
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
            first = bestFirst;
            end = bestEnd;
        }
        group.firstPu = first;
        group.puCount = end - first;
        // A binding wider than the devices' locality would bind the process
        // away from them.
        if (options.bind != BindTo::None) {
            for (const HwObject &object : model.objects(*levelOf(options.bind))) {
                const std::uint32_t objectEnd = object.firstPu + object.puCount;
                const bool intersects = object.firstPu < end && first < objectEnd;
                const bool wider = object.firstPu <= first && objectEnd >= end &&
                                   (object.firstPu != first || objectEnd != end);
                if (intersects && wider)
                    return UserError{
                        "--bind-to " + lowerWord(bindToWord(options.bind)) +
                        " binds wider than the CPUs the " + escaped(options.device) +
                        " devices of node " + std::string(node.name) +
                        " are local to.\nBind to their locality or below (e.g. --bind-to core), "
                        "or give each process several devices (NDEV=n)."};
            }
        }
        deviceGroups_.push_back(std::move(group));
    }
    return std::nullopt;
}

} // namespace stepmap::detail
