#include "hosts/node_model.hpp"

#include <algorithm>
#include <numeric>
#include <unordered_map>
#include <unordered_set>

#include "base/id_list.hpp"
#include "base/input_limits.hpp"
#include "base/quote.hpp"

namespace stepmap {

namespace {

constexpr std::array<std::string_view, kHwLevelCount> kLevelNames = {
    "package", "numa", "l3cache", "l2cache", "l1cache", "core", "hwthread"};

std::string levelWord(std::size_t level) {
    return std::string(kLevelNames[level]);
}

// Groups consecutive PUs with the same ancestor at `level` into objects.
std::optional<UserError> groupLevel(const std::vector<PuRecord> &pus, std::size_t level,
                                    std::vector<HwObject> &objects,
                                    std::vector<std::uint32_t> &objectOfPu) {
    objectOfPu.assign(pus.size(), kNoIndex);
    std::unordered_set<std::uint32_t> seen;
    std::optional<std::uint32_t> current;
    for (std::uint32_t pu = 0; pu < pus.size(); ++pu) {
        const auto &ancestor = pus[pu].ancestors[level];
        if (!ancestor) {
            current.reset();
            continue;
        }
        if (current && objects.back().logicalIndex == ancestor->logical) {
            if (objects.back().osIndex != ancestor->os)
                return UserError{"node model: PU L#" + std::to_string(pus[pu].logical) + " names " +
                                 levelWord(level) + " L#" + std::to_string(ancestor->logical) +
                                 " with a different OS index than its neighbours"};
            ++objects.back().puCount;
        } else {
            if (!seen.insert(ancestor->logical).second)
                return UserError{"node model: the PUs of " + levelWord(level) + " L#" +
                                 std::to_string(ancestor->logical) +
                                 " are not contiguous in logical order (PU L#" +
                                 std::to_string(pus[pu].logical) + ")"};
            objects.push_back(HwObject{ancestor->logical, ancestor->os, pu, 1});
            current = ancestor->logical;
        }
        objectOfPu[pu] = static_cast<std::uint32_t>(objects.size() - 1);
    }
    return std::nullopt;
}

// Puts a level's objects in PRRTE's enumeration order and renumbers the
// PU -> object index accordingly.
void orderLevel(HwLevel level, std::vector<HwObject> &objects,
                std::vector<std::uint32_t> &objectOfPu) {
    std::vector<std::uint32_t> order(objects.size());
    std::iota(order.begin(), order.end(), 0u);
    if (level == HwLevel::Numa) {
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            return objects[a].osIndex < objects[b].osIndex;
        });
    } else {
        std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
            return objects[a].logicalIndex < objects[b].logicalIndex;
        });
    }
    std::vector<std::uint32_t> newIndex(objects.size());
    std::vector<HwObject> sorted;
    sorted.reserve(objects.size());
    for (std::uint32_t i = 0; i < order.size(); ++i) {
        newIndex[order[i]] = i;
        sorted.push_back(objects[order[i]]);
    }
    for (std::uint32_t &index : objectOfPu) {
        if (index != kNoIndex)
            index = newIndex[index];
    }
    objects = std::move(sorted);
}

// Sorts the PUs by logical index; an error for a PU listed twice, two PUs
// with one OS index, or a PU outside every core.
std::optional<UserError> sortAndCheckPus(std::vector<PuRecord> &pus) {
    if (pus.empty())
        return UserError{"node model: the job holds no PU on the node"};
    std::sort(pus.begin(), pus.end(),
              [](const PuRecord &a, const PuRecord &b) { return a.logical < b.logical; });
    std::unordered_set<std::uint32_t> osSeen;
    for (std::size_t i = 0; i < pus.size(); ++i) {
        if (i > 0 && pus[i].logical == pus[i - 1].logical)
            return UserError{"node model: PU L#" + std::to_string(pus[i].logical) +
                             " is listed twice"};
        if (!osSeen.insert(pus[i].os).second)
            return UserError{"node model: two PUs have OS index " + std::to_string(pus[i].os)};
        if (!pus[i].ancestors[static_cast<std::size_t>(HwLevel::Core)])
            return UserError{"node model: PU L#" + std::to_string(pus[i].logical) +
                             " is in no core"};
    }
    return std::nullopt;
}

// A device with the span of the model's PUs near it (none held: no PUs).
HwDevice placedDevice(NodeModelInput::Device device, const NodeModel &model) {
    HwDevice out{std::move(device.name),  device.kind, std::move(device.uuid),
                 std::move(device.pciId), 0,           0};
    std::uint32_t first = kNoIndex;
    std::uint32_t last = 0;
    for (std::uint32_t logical : device.localPusLogical) {
        if (const auto pu = model.puFromLogical(logical)) {
            first = std::min(first, *pu);
            last = std::max(last, *pu);
        }
    }
    if (first != kNoIndex) {
        out.firstPu = first;
        out.puCount = last - first + 1;
    }
    return out;
}

} // namespace

std::string_view hwLevelName(HwLevel level) {
    return kLevelNames[static_cast<std::size_t>(level)];
}

Expected<NodeModel> NodeModel::make(NodeModelInput input) {
    std::vector<PuRecord> &pus = input.pus;
    if (auto error = sortAndCheckPus(pus))
        return *error;

    NodeModel model;
    model.puLogical_.reserve(pus.size());
    model.puOs_.reserve(pus.size());
    for (const PuRecord &pu : pus) {
        model.puLogical_.push_back(pu.logical);
        model.puOs_.push_back(pu.os);
    }
    for (std::size_t level = 0; level < kAncestorLevels; ++level) {
        if (auto error = groupLevel(pus, level, model.objects_[level], model.objectOfPu_[level]))
            return *error;
        orderLevel(static_cast<HwLevel>(level), model.objects_[level], model.objectOfPu_[level]);
    }
    const auto puLevel = static_cast<std::size_t>(HwLevel::Pu);
    model.objects_[puLevel].reserve(pus.size());
    model.objectOfPu_[puLevel].resize(pus.size());
    for (std::uint32_t pu = 0; pu < pus.size(); ++pu) {
        model.objects_[puLevel].push_back(HwObject{pus[pu].logical, pus[pu].os, pu, 1});
        model.objectOfPu_[puLevel][pu] = pu;
    }
    for (std::size_t level = 0; level < kHwLevelCount; ++level) {
        const auto &objects = model.objects_[level];
        bool ordered = true;
        for (std::size_t i = 1; i < objects.size(); ++i)
            ordered =
                ordered && objects[i].firstPu >= objects[i - 1].firstPu + objects[i - 1].puCount;
        model.inPuOrder_[level] = ordered;
    }
    const auto &cores = model.objects(HwLevel::Core);
    model.hasHwthreads_ = std::any_of(cores.begin(), cores.end(),
                                      [](const HwObject &core) { return core.puCount > 1; });
    model.machinePus_ = std::max<std::uint32_t>(input.machinePus, model.puCount());
    model.machineCores_ =
        std::max<std::uint32_t>(input.machineCores, static_cast<std::uint32_t>(cores.size()));
    model.machinePackages_ = std::max<std::uint32_t>(
        input.machinePackages, static_cast<std::uint32_t>(model.objects(HwLevel::Package).size()));

    model.packageCores_ = std::move(input.packageCores);
    for (NodeModelInput::Device &device : input.devices)
        model.devices_.push_back(placedDevice(std::move(device), model));
    return model;
}

NodeModelInput::PackageCores NodeModel::packageCores(std::uint32_t logical) const {
    if (logical < packageCores_.size() && packageCores_[logical].cores > 0)
        return packageCores_[logical];
    const auto package = objectFromLogical(HwLevel::Package, logical);
    if (!package)
        return {};
    const HwObject &object = objects(HwLevel::Package)[*package];
    const HwObject &first = objects(HwLevel::Core)[objectOf(HwLevel::Core, object.firstPu)];
    const HwObject &last =
        objects(HwLevel::Core)[objectOf(HwLevel::Core, object.firstPu + object.puCount - 1)];
    return {first.logicalIndex, last.logicalIndex - first.logicalIndex + 1};
}

std::optional<std::uint32_t> NodeModel::puFromLogical(std::uint32_t logical) const {
    const auto it = std::lower_bound(puLogical_.begin(), puLogical_.end(), logical);
    if (it == puLogical_.end() || *it != logical)
        return std::nullopt;
    return static_cast<std::uint32_t>(it - puLogical_.begin());
}

std::optional<std::uint32_t> NodeModel::puFromOs(std::uint32_t os) const {
    for (std::uint32_t pu = 0; pu < puOs_.size(); ++pu) {
        if (puOs_[pu] == os)
            return pu;
    }
    return std::nullopt;
}

std::optional<std::uint32_t> NodeModel::objectFromLogical(HwLevel level,
                                                          std::uint32_t logical) const {
    const auto &list = objects(level);
    if (level != HwLevel::Numa) {
        const auto it = std::lower_bound(list.begin(), list.end(), logical,
                                         [](const HwObject &object, std::uint32_t value) {
                                             return object.logicalIndex < value;
                                         });
        if (it == list.end() || it->logicalIndex != logical)
            return std::nullopt;
        return static_cast<std::uint32_t>(it - list.begin());
    }
    for (std::uint32_t i = 0; i < list.size(); ++i) {
        if (list[i].logicalIndex == logical)
            return i;
    }
    return std::nullopt;
}

std::vector<std::uint32_t> NodeModel::logicalOf(const std::vector<std::uint32_t> &pus) const {
    std::vector<std::uint32_t> out;
    out.reserve(pus.size());
    for (std::uint32_t pu : pus)
        out.push_back(puLogical_[pu]);
    return out;
}

std::vector<std::uint32_t> NodeModel::osOf(const std::vector<std::uint32_t> &pus) const {
    std::vector<std::uint32_t> out;
    out.reserve(pus.size());
    for (std::uint32_t pu : pus)
        out.push_back(puOs_[pu]);
    std::sort(out.begin(), out.end());
    return out;
}

Expected<std::shared_ptr<const NodeModel>>
buildSlurmNodeModel(const SlurmNodeShape &shape, const std::vector<std::uint32_t> &cpus,
                    SlurmCpuIds ids) {
    constexpr std::int64_t kLimit = kMaxCpusPerNode;
    const std::int64_t sockets = shape.sockets;
    const std::int64_t cores = shape.coresPerSocket;
    const std::int64_t threads = shape.threadsPerCore;
    const std::int64_t numas = shape.numaPerSocket;
    if (sockets < 1 || cores < 1 || threads < 1 || numas < 1 || sockets * cores * threads > kLimit)
        return UserError{"Slurm node shape " + std::to_string(sockets) + " sockets x " +
                         std::to_string(cores) + " cores x " + std::to_string(threads) +
                         " threads (" + std::to_string(numas) +
                         " NUMA per socket): every count must be at least 1 and the node at "
                         "most " +
                         std::to_string(kLimit) + " CPUs"};
    if (cores % numas != 0)
        return UserError{"Slurm node shape: " + std::to_string(numas) +
                         " NUMA domains per socket do not divide " + std::to_string(cores) +
                         " cores per socket evenly"};
    const auto total = static_cast<std::uint32_t>(sockets * cores * threads);
    const auto coreCount = static_cast<std::uint32_t>(sockets * cores);

    std::vector<std::uint32_t> held = cpus;
    if (held.empty()) {
        held.resize(total);
        std::iota(held.begin(), held.end(), 0u);
    }
    NodeModelInput input;
    input.machinePus = total;
    input.machineCores = coreCount;
    input.machinePackages = static_cast<std::uint32_t>(sockets);
    for (std::int64_t s = 0; s < sockets; ++s)
        input.packageCores.push_back(NodeModelInput::PackageCores{
            static_cast<std::uint32_t>(s * cores), static_cast<std::uint32_t>(cores)});
    std::unordered_set<std::uint32_t> seen;
    for (std::uint32_t id : held) {
        if (id >= total)
            return UserError{"CPU id " + std::to_string(id) + " is outside the node (" +
                             std::to_string(total) + " CPUs: " + std::to_string(sockets) +
                             " sockets x " + std::to_string(cores) + " cores x " +
                             std::to_string(threads) + " threads)"};
        if (!seen.insert(id).second)
            return UserError{"CPU id " + std::to_string(id) + " is listed twice"};
        std::uint32_t core = 0;
        std::uint32_t thread = 0;
        if (ids == SlurmCpuIds::Abstract) {
            core = id / static_cast<std::uint32_t>(threads);
            thread = id % static_cast<std::uint32_t>(threads);
        } else {
            core = id % coreCount;
            thread = id / coreCount;
        }
        const std::uint32_t socket = core / static_cast<std::uint32_t>(cores);
        const std::uint32_t coreInSocket = core % static_cast<std::uint32_t>(cores);
        const std::uint32_t numa = socket * static_cast<std::uint32_t>(numas) +
                                   coreInSocket / static_cast<std::uint32_t>(cores / numas);
        PuRecord pu;
        pu.logical = core * static_cast<std::uint32_t>(threads) + thread;
        pu.os = thread * coreCount + core;
        const auto at = [](HwLevel level) { return static_cast<std::size_t>(level); };
        pu.ancestors[at(HwLevel::Package)] = PuRecord::Ancestor{socket, socket};
        pu.ancestors[at(HwLevel::Numa)] = PuRecord::Ancestor{numa, numa};
        pu.ancestors[at(HwLevel::L3Cache)] = PuRecord::Ancestor{socket, kNoIndex};
        pu.ancestors[at(HwLevel::L2Cache)] = PuRecord::Ancestor{core, kNoIndex};
        pu.ancestors[at(HwLevel::L1Cache)] = PuRecord::Ancestor{core, kNoIndex};
        pu.ancestors[at(HwLevel::Core)] = PuRecord::Ancestor{core, core};
        input.pus.push_back(pu);
    }
    auto model = NodeModel::make(std::move(input));
    if (!model)
        return model.error();
    return std::make_shared<const NodeModel>(std::move(model.value()));
}

Expected<std::vector<std::uint32_t>> parseCpuIdList(std::string_view text,
                                                    const IdListLimits &limits) {
    if (text.empty())
        return std::vector<std::uint32_t>{};
    const IdRanges parsed = parseIdRanges(text, limits);
    if (parsed.fault) {
        const IdListFault &fault = *parsed.fault;
        switch (fault.kind) {
        case IdListFault::Kind::NotARange:
            return UserError{"CPU list " + quoted(text) + ": " + quoted(fault.item) +
                             " is not N or N-M (e.g. 0-3,8)"};
        case IdListFault::Kind::IdTooHigh:
            return UserError{"CPU list " + quoted(text) + ": CPU id " + std::to_string(fault.id) +
                             " is above " + std::to_string(limits.maxId) +
                             ", the highest accepted"};
        case IdListFault::Kind::TooMany:
            return UserError{"CPU list " + quoted(text) + " names more than " +
                             std::to_string(limits.maxCount) + " CPUs"};
        }
    }
    std::vector<std::uint32_t> ids = expandIdRanges(parsed);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

std::string formatIdList(const std::vector<std::uint32_t> &ids) {
    std::string out;
    std::size_t i = 0;
    while (i < ids.size()) {
        std::size_t end = i;
        while (end + 1 < ids.size() && ids[end + 1] == ids[end] + 1)
            ++end;
        if (!out.empty())
            out += ',';
        out += std::to_string(ids[i]);
        if (end > i) {
            out += '-';
            out += std::to_string(ids[end]);
        }
        i = end + 1;
    }
    return out;
}

} // namespace stepmap
