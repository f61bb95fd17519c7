#include "node_topology.hpp"

#include <hwloc.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

namespace stepmap::topology {

namespace {

// The XML text hwloc allocates on export, freed through the topology that
// made it.
struct XmlBufferFree {
    hwloc_topology_t topology = nullptr;
    void operator()(char *buffer) const {
        if (buffer != nullptr)
            hwloc_free_xmlbuffer(topology, buffer);
    }
};
using XmlBufferPtr = std::unique_ptr<char, XmlBufferFree>;

constexpr std::array<hwloc_obj_type_t, kHwLevelCount> kTypes = {
    HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
    HWLOC_OBJ_L1CACHE, HWLOC_OBJ_CORE,     HWLOC_OBJ_PU};

hwloc_obj_type_t typeOf(HwLevel level) {
    return kTypes[static_cast<std::size_t>(level)];
}

std::uint32_t objectCount(hwloc_topology_t topology, hwloc_obj_type_t type) {
    const int n = hwloc_get_nbobjs_by_type(topology, type);
    return n > 0 ? static_cast<std::uint32_t>(n) : 0;
}

std::string errnoText() {
    return std::strerror(errno);
}

Expected<TopologyPtr> initTopology(hwloc_type_filter_e ioFilter) {
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0)
        return UserError{"hwloc could not start a topology: " + errnoText()};
    TopologyPtr topology(raw);
    hwloc_topology_set_io_types_filter(topology.get(), ioFilter);
    return topology;
}

Expected<TopologyPtr> load(TopologyPtr topology, const std::string &source) {
    if (hwloc_topology_load(topology.get()) != 0)
        return UserError{"hwloc could not load the topology from " + source + ": " + errnoText()};
    return topology;
}

// PRRTE's CPU NUMA domains: by OS index, up to the first whose CPUs overlap
// an earlier one's (the later ones are GPU or HBM memory).
std::vector<hwloc_obj_t> cpuNumas(hwloc_topology_t topology) {
    std::vector<hwloc_obj_t> numas;
    const int width = hwloc_get_nbobjs_by_type(topology, HWLOC_OBJ_NUMANODE);
    if (width <= 0)
        return numas;
    unsigned maxIndex = 0;
    for (int w = 0; w < width; ++w) {
        const hwloc_obj_t obj =
            hwloc_get_obj_by_type(topology, HWLOC_OBJ_NUMANODE, static_cast<unsigned>(w));
        if (obj != nullptr && obj->os_index != HWLOC_UNKNOWN_INDEX)
            maxIndex = std::max(maxIndex, obj->os_index);
    }
    for (unsigned w = 0; w <= maxIndex && numas.size() < static_cast<std::size_t>(width); ++w) {
        const hwloc_obj_t obj = hwloc_get_numanode_obj_by_os_index(topology, w);
        if (obj == nullptr)
            continue;
        for (const hwloc_obj_t earlier : numas) {
            if (hwloc_bitmap_intersects(obj->cpuset, earlier->cpuset))
                return numas;
        }
        numas.push_back(obj);
    }
    return numas;
}

std::string pciId(hwloc_obj_t pci) {
    if (pci == nullptr || pci->type != HWLOC_OBJ_PCI_DEVICE)
        return {};
    std::array<char, 32> text{};
    std::snprintf(text.data(), text.size(), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
                  pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
    return text.data();
}

std::string vendorUuid(hwloc_obj_t osdev) {
    for (const char *key : {"NVIDIAUUID", "AMDUUID", "LevelZeroUUID"}) {
        if (const char *value = hwloc_obj_get_info_by_name(osdev, key))
            return value;
    }
    return {};
}

// The PUs with these OS indices (empty: every allowed PU); an error names a
// PU the node lacks.
Expected<BitmapPtr> wantedPus(hwloc_topology_t topology, const std::vector<std::uint32_t> &osPus) {
    BitmapPtr wanted = makeBitmap();
    if (osPus.empty()) {
        hwloc_bitmap_copy(wanted.get(), hwloc_topology_get_allowed_cpuset(topology));
        return wanted;
    }
    for (std::uint32_t os : osPus) {
        if (hwloc_get_pu_obj_by_os_index(topology, os) == nullptr)
            return UserError{"the node has no PU P#" + std::to_string(os) + " (its PUs: " +
                             std::to_string(objectCount(topology, HWLOC_OBJ_PU)) + ")"};
        hwloc_bitmap_set(wanted.get(), os);
    }
    return wanted;
}

// Each package's first core and core count over the whole machine, by the
// package's logical index.
std::vector<NodeModelInput::PackageCores> packageCores(hwloc_topology_t topology) {
    std::vector<NodeModelInput::PackageCores> packages;
    for (hwloc_obj_t package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, nullptr);
         package != nullptr;
         package = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PACKAGE, package)) {
        const hwloc_obj_t first =
            hwloc_get_obj_inside_cpuset_by_type(topology, package->cpuset, HWLOC_OBJ_CORE, 0);
        const int cores =
            hwloc_get_nbobjs_inside_cpuset_by_type(topology, package->cpuset, HWLOC_OBJ_CORE);
        if (packages.size() <= package->logical_index)
            packages.resize(package->logical_index + 1);
        if (first != nullptr && cores > 0)
            packages[package->logical_index] = {first->logical_index,
                                                static_cast<std::uint32_t>(cores)};
    }
    return packages;
}

// The object of `level` holding `pu`: for NUMA the CPU NUMA domain that
// holds it, else its hwloc ancestor of that type; null when there is none.
hwloc_obj_t ancestorAt(hwloc_topology_t topology, hwloc_obj_t pu, HwLevel level,
                       const std::vector<hwloc_obj_t> &numas) {
    if (level != HwLevel::Numa)
        return hwloc_get_ancestor_obj_by_type(topology, typeOf(level), pu);
    for (const hwloc_obj_t numa : numas) {
        if (hwloc_bitmap_isset(numa->cpuset, pu->os_index))
            return numa;
    }
    return nullptr;
}

PuRecord puRecord(hwloc_topology_t topology, hwloc_obj_t pu,
                  const std::vector<hwloc_obj_t> &numas) {
    PuRecord record;
    record.logical = pu->logical_index;
    record.os = pu->os_index;
    for (std::size_t level = 0; level < kAncestorLevels; ++level) {
        const hwloc_obj_t ancestor = ancestorAt(topology, pu, static_cast<HwLevel>(level), numas);
        if (ancestor != nullptr)
            record.ancestors[level] = PuRecord::Ancestor{
                ancestor->logical_index,
                ancestor->os_index == HWLOC_UNKNOWN_INDEX ? kNoIndex : ancestor->os_index};
    }
    if (!record.ancestors[static_cast<std::size_t>(HwLevel::Core)]) {
        // hwloc found no cores (some platforms): each PU is its own core.
        record.ancestors[static_cast<std::size_t>(HwLevel::Core)] =
            PuRecord::Ancestor{pu->logical_index, pu->os_index};
    }
    return record;
}

// The records of the wanted PUs, in logical order.
std::vector<PuRecord> puRecords(hwloc_topology_t topology, hwloc_const_bitmap_t wanted) {
    const std::vector<hwloc_obj_t> numas = cpuNumas(topology);
    std::vector<PuRecord> records;
    for (hwloc_obj_t pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, nullptr);
         pu != nullptr; pu = hwloc_get_next_obj_by_type(topology, HWLOC_OBJ_PU, pu)) {
        if (hwloc_bitmap_isset(wanted, pu->os_index))
            records.push_back(puRecord(topology, pu, numas));
    }
    return records;
}

// What the mapper calls an OS device; nothing for those it ignores.
std::optional<DeviceKind> deviceKind(hwloc_obj_t osdev) {
    switch (osdev->attr->osdev.type) {
    case HWLOC_OBJ_OSDEV_GPU:
    case HWLOC_OBJ_OSDEV_COPROC:
        return DeviceKind::Gpu;
    case HWLOC_OBJ_OSDEV_NETWORK:
    case HWLOC_OBJ_OSDEV_OPENFABRICS:
        return DeviceKind::Network;
    default:
        return std::nullopt;
    }
}

// A device for the PCI function holding `osdev`, local to the PUs of its
// nearest non-I/O ancestor; named by absorb().
NodeModelInput::Device newDevice(hwloc_topology_t topology, hwloc_obj_t osdev, DeviceKind kind) {
    NodeModelInput::Device device;
    device.kind = kind;
    device.pciId = pciId(osdev->parent);
    const hwloc_obj_t local = hwloc_get_non_io_ancestor_obj(topology, osdev);
    if (local == nullptr || local->cpuset == nullptr)
        return device;
    for (hwloc_obj_t pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, local->cpuset,
                                                                   HWLOC_OBJ_PU, nullptr);
         pu != nullptr;
         pu = hwloc_get_next_obj_inside_cpuset_by_type(topology, local->cpuset, HWLOC_OBJ_PU, pu))
        device.localPusLogical.push_back(pu->logical_index);
    return device;
}

// One more OS device of the same PCI function: it may give the device its
// name, its vendor UUID and the GPU kind.
void absorb(NodeModelInput::Device &device, hwloc_obj_t osdev, DeviceKind kind) {
    // Name the device by its compute interface (cuda0, rsmi0, ...) when
    // it has one, else by the first name seen.
    const bool compute = osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
    if (device.name.empty() ||
        (compute && device.kind == DeviceKind::Gpu && device.name.rfind("cuda", 0) != 0 &&
         osdev->name != nullptr && std::strncmp(osdev->name, "cuda", 4) == 0))
        device.name = osdev->name != nullptr ? osdev->name : "";
    if (device.uuid.empty())
        device.uuid = vendorUuid(osdev);
    if (kind == DeviceKind::Gpu)
        device.kind = DeviceKind::Gpu;
}

// GPUs and network devices, one per PCI function (a GPU shows up as several
// OS devices).
std::vector<NodeModelInput::Device> devices(hwloc_topology_t topology) {
    std::vector<NodeModelInput::Device> found;
    std::map<hwloc_obj_t, std::size_t> byFunction;
    for (hwloc_obj_t osdev = hwloc_get_next_osdev(topology, nullptr); osdev != nullptr;
         osdev = hwloc_get_next_osdev(topology, osdev)) {
        const std::optional<DeviceKind> kind = deviceKind(osdev);
        if (!kind)
            continue;
        auto [it, inserted] = byFunction.try_emplace(osdev->parent, found.size());
        if (inserted)
            found.push_back(newDevice(topology, osdev, *kind));
        absorb(found[it->second], osdev, *kind);
    }
    return found;
}

} // namespace

Expected<NodeTopology> NodeTopology::fromXmlFile(const std::string &path) {
    auto topology = initTopology(HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!topology)
        return topology.error();
    if (hwloc_topology_set_xml(topology->get(), path.c_str()) != 0)
        return UserError{"hwloc cannot read the topology file " + path + ": " + errnoText()};
    auto loaded = load(std::move(topology.value()), "file " + path);
    if (!loaded)
        return loaded.error();
    return NodeTopology(std::move(loaded.value()));
}

Expected<NodeTopology> NodeTopology::fromXmlText(std::string_view xml) {
    auto topology = initTopology(HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!topology)
        return topology.error();
    const std::string text(xml);
    if (hwloc_topology_set_xmlbuffer(topology->get(), text.c_str(),
                                     static_cast<int>(text.size() + 1)) != 0)
        return UserError{"hwloc cannot read the topology XML text: " + errnoText()};
    auto loaded = load(std::move(topology.value()), "XML text");
    if (!loaded)
        return loaded.error();
    return NodeTopology(std::move(loaded.value()));
}

Expected<NodeTopology> NodeTopology::fromSynthetic(const std::string &description) {
    auto topology = initTopology(HWLOC_TYPE_FILTER_KEEP_ALL);
    if (!topology)
        return topology.error();
    if (hwloc_topology_set_synthetic(topology->get(), description.c_str()) != 0)
        return UserError{"hwloc refuses the synthetic topology '" + description +
                         "': " + errnoText()};
    auto loaded = load(std::move(topology.value()), "synthetic description '" + description + "'");
    if (!loaded)
        return loaded.error();
    return NodeTopology(std::move(loaded.value()));
}

Expected<NodeTopology> NodeTopology::fromThisMachine() {
    auto topology = initTopology(HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (!topology)
        return topology.error();
    auto loaded = load(std::move(topology.value()), "this machine");
    if (!loaded)
        return loaded.error();
    return NodeTopology(std::move(loaded.value()));
}

Expected<NodeTopology> NodeTopology::restrictedTo(const std::vector<std::uint32_t> &osPus) const {
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_dup(&raw, topology_.get()) != 0)
        return UserError{"hwloc could not copy the topology: " + errnoText()};
    TopologyPtr copy(raw);
    BitmapPtr set = makeBitmap();
    for (std::uint32_t os : osPus) {
        if (hwloc_get_pu_obj_by_os_index(copy.get(), os) == nullptr)
            return UserError{"cannot restrict the topology to PU P#" + std::to_string(os) +
                             ": the node has no such PU"};
        hwloc_bitmap_set(set.get(), os);
    }
    if (hwloc_bitmap_iszero(set.get()))
        return UserError{"cannot restrict the topology to no PU at all"};
    if (hwloc_topology_restrict(copy.get(), set.get(),
                                HWLOC_RESTRICT_FLAG_ADAPT_IO | HWLOC_RESTRICT_FLAG_ADAPT_MISC) != 0)
        return UserError{"hwloc could not restrict the topology to PUs " + formatIdList(osPus) +
                         ": " + errnoText()};
    return NodeTopology(std::move(copy));
}

Expected<std::string> NodeTopology::exportXml(XmlVersion version) const {
    char *raw = nullptr;
    int length = 0;
    const unsigned long flags = version == XmlVersion::V1 ? HWLOC_TOPOLOGY_EXPORT_XML_FLAG_V1 : 0;
    if (hwloc_topology_export_xmlbuffer(topology_.get(), &raw, &length, flags) != 0)
        return UserError{"hwloc could not export the topology as XML: " + errnoText()};
    const XmlBufferPtr buffer(raw, XmlBufferFree{topology_.get()});
    return std::string(buffer.get(), length > 0 ? static_cast<std::size_t>(length - 1) : 0);
}

std::optional<std::uint32_t> NodeTopology::osIndex(HwLevel level, std::uint32_t logical) const {
    const hwloc_obj_t obj = hwloc_get_obj_by_type(topology_.get(), typeOf(level), logical);
    if (obj == nullptr || obj->os_index == HWLOC_UNKNOWN_INDEX)
        return std::nullopt;
    return obj->os_index;
}

std::optional<std::uint32_t> NodeTopology::logicalIndex(HwLevel level, std::uint32_t os) const {
    for (hwloc_obj_t obj = hwloc_get_next_obj_by_type(topology_.get(), typeOf(level), nullptr);
         obj != nullptr; obj = hwloc_get_next_obj_by_type(topology_.get(), typeOf(level), obj)) {
        if (obj->os_index == os)
            return obj->logical_index;
    }
    return std::nullopt;
}

std::uint32_t NodeTopology::count(HwLevel level) const {
    return objectCount(topology_.get(), typeOf(level));
}

Expected<std::vector<std::uint32_t>>
NodeTopology::pusOfCores(const std::vector<std::uint32_t> &cores) const {
    std::set<std::uint32_t> pus;
    for (std::uint32_t logical : cores) {
        const hwloc_obj_t core = hwloc_get_obj_by_type(topology_.get(), HWLOC_OBJ_CORE, logical);
        if (core == nullptr)
            return UserError{"the node has no core L#" + std::to_string(logical) + " (it has " +
                             std::to_string(count(HwLevel::Core)) + " cores)"};
        for (int pu = hwloc_bitmap_first(core->cpuset); pu >= 0;
             pu = hwloc_bitmap_next(core->cpuset, pu))
            pus.insert(static_cast<std::uint32_t>(pu));
    }
    return std::vector<std::uint32_t>(pus.begin(), pus.end());
}

Expected<std::shared_ptr<const NodeModel>>
NodeTopology::nodeModel(const std::vector<std::uint32_t> &osPus) const {
    hwloc_topology_t topology = topology_.get();
    auto wanted = wantedPus(topology, osPus);
    if (!wanted)
        return wanted.error();
    NodeModelInput input;
    input.pus = puRecords(topology, wanted->get());
    if (input.pus.empty())
        return UserError{"none of the requested PUs is usable on the node (requested: " +
                         (osPus.empty() ? std::string("all allowed") : formatIdList(osPus)) + ")"};
    input.machinePus = count(HwLevel::Pu);
    input.machineCores = count(HwLevel::Core);
    input.machinePackages = count(HwLevel::Package);
    input.packageCores = packageCores(topology);
    input.devices = devices(topology);

    auto model = NodeModel::make(std::move(input));
    if (!model)
        return model.error();
    return std::make_shared<const NodeModel>(std::move(model.value()));
}

} // namespace stepmap::topology
