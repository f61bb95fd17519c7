#include "step_topology.hpp"

#include "network_numa.hpp"

#include "base/id_list.hpp"

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

namespace stepmap::topology {

Expected<std::vector<unsigned>> parseIndexList(std::string_view text) {
    // Any id; at most 2^20 + 1 of them (what one range could name before).
    const IdListLimits limits{.maxId = UINT32_MAX, .maxCount = (std::size_t{1} << 20) + 1};
    const IdRanges parsed = parseIdRanges(text, limits);
    if (parsed.fault)
        return UserError{"bad index list '" + std::string(text) + "'"};
    return expandIdRanges(parsed);
}

std::string bitmapListString(hwloc_const_bitmap_t set) {
    char *s = nullptr;
    if (hwloc_bitmap_list_asprintf(&s, set) < 0 || !s)
        throw std::bad_alloc();
    std::string out(s);
    std::free(s);
    return out;
}

namespace {

enum class Source { Live, XmlFile, MachineXml };

// hwloc loads every plugin it finds (PCI, OpenCL, GL, libxml2, and the
// libraries behind them) when a process makes its first topology: 5 ms of
// a step's start here. This machine's own XML needs none of them (root's
// discovery used them when it made the cache); while the topology lives,
// hwloc keeps the plugins it loaded, so the variable matters only here.
class WithoutHwlocPlugins {
public:
    WithoutHwlocPlugins() {
        if (const char *v = std::getenv(kVariable))
            old_ = v;
        setenv(kVariable, "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml", 1);
    }
    ~WithoutHwlocPlugins() {
        if (old_)
            setenv(kVariable, old_->c_str(), 1);
        else
            unsetenv(kVariable);
    }
    WithoutHwlocPlugins(const WithoutHwlocPlugins &) = delete;
    WithoutHwlocPlugins &operator=(const WithoutHwlocPlugins &) = delete;

private:
    static constexpr const char *kVariable = "HWLOC_PLUGINS_BLACKLIST";
    std::optional<std::string> old_;
};

Expected<StepTopology> loadFrom(std::string_view coreList, Source source, const std::string &xml) {
    auto cores = parseIndexList(coreList);
    if (!cores)
        return UserError{"step cores: " + cores.error().message};

    std::optional<WithoutHwlocPlugins> noPlugins;
    if (source == Source::MachineXml)
        noPlugins.emplace();
    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0)
        return UserError{"hwloc_topology_init failed"};
    TopologyPtr topo(raw);
    // See the whole machine, so that core indices are the machine's, even
    // from inside a cgroup; then restrict explicitly below. XML that is this
    // machine's (its cache) binds as the live machine would.
    unsigned long flags = HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED;
    if (source == Source::MachineXml)
        flags |= HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM;
    hwloc_topology_set_flags(topo.get(), flags);
    hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (source == Source::XmlFile && hwloc_topology_set_xml(topo.get(), xml.c_str()) != 0)
        return UserError{"cannot read topology XML " + xml};
    if (source == Source::MachineXml &&
        hwloc_topology_set_xmlbuffer(topo.get(), xml.data(), static_cast<int>(xml.size())) != 0)
        return UserError{"cannot read the node's topology cache"};
    if (hwloc_topology_load(topo.get()) != 0)
        return UserError{"cannot load the node's topology"};
    noPlugins.reset();

    int ncores = hwloc_get_nbobjs_by_type(topo.get(), HWLOC_OBJ_CORE);
    BitmapPtr set = makeBitmap();
    for (unsigned c : cores.value()) {
        hwloc_obj_t core = hwloc_get_obj_by_type(topo.get(), HWLOC_OBJ_CORE, c);
        if (!core)
            return UserError{"step core " + std::to_string(c) + " does not exist (the node has " +
                             std::to_string(ncores) + " cores)"};
        hwloc_bitmap_or(set.get(), set.get(), core->cpuset);
    }
    auto interfaceNuma = networkNumaNodes(topo.get());
    if (hwloc_topology_restrict(topo.get(), set.get(),
                                HWLOC_RESTRICT_FLAG_ADAPT_IO | HWLOC_RESTRICT_FLAG_ADAPT_MISC) != 0)
        return UserError{"cannot restrict the topology to PUs " + bitmapListString(set.get())};
    return StepTopology{std::move(topo), std::move(set), std::move(interfaceNuma)};
}

} // namespace

Expected<StepTopology> loadStepTopology(std::string_view coreList, const std::string &xmlPath) {
    return loadFrom(coreList, xmlPath.empty() ? Source::Live : Source::XmlFile, xmlPath);
}

Expected<StepTopology> loadStepTopologyFromMachineXml(std::string_view coreList,
                                                      const std::string &xml) {
    if (xml.size() > static_cast<std::size_t>(INT32_MAX))
        return UserError{"the node's topology cache is too large"};
    return loadFrom(coreList, Source::MachineXml, xml);
}

} // namespace stepmap::topology
