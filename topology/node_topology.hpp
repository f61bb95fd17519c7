#pragma once

// A node's hardware as hwloc describes it, loaded from an XML file or text,
// a synthetic description or the machine itself; restricted to a set of
// PUs (I/O objects kept); exported as XML v2 or v1; and turned into the
// mapper's NodeModel (mapper/hosts/node_model.hpp) with the logical indices hwloc
// gives the objects over the whole machine.
//
// The one hwloc topology inside is owned by a TopologyPtr
// (hwloc_handles.hpp), wrapped as soon as hwloc_topology_init succeeds.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/node_model.hpp"
#include "hwloc_handles.hpp"

namespace stepmap::topology {

enum class XmlVersion { V2, V1 };

class NodeTopology {
public:
    // Errors name the file (or source) and what hwloc refused.
    static Expected<NodeTopology> fromXmlFile(const std::string &path);
    static Expected<NodeTopology> fromXmlText(std::string_view xml);
    // hwloc's synthetic syntax, e.g. "pack:2 core:4 pu:2".
    static Expected<NodeTopology> fromSynthetic(const std::string &description);
    // The machine this runs on, with its important I/O devices.
    static Expected<NodeTopology> fromThisMachine();

    // Borrowed; valid while this object lives.
    hwloc_topology_t get() const { return topology_.get(); }

    // A copy holding only the PUs with these OS indices (and the objects
    // above them); I/O objects of removed parts move up to the nearest kept
    // ancestor. hwloc renumbers the copy's logical indices.
    Expected<NodeTopology> restrictedTo(const std::vector<std::uint32_t> &osPus) const;

    Expected<std::string> exportXml(XmlVersion version = XmlVersion::V2) const;

    // Logical <-> OS index of the object of `level` (over the whole
    // topology); nothing when there is no such object or no OS index.
    std::optional<std::uint32_t> osIndex(HwLevel level, std::uint32_t logical) const;
    std::optional<std::uint32_t> logicalIndex(HwLevel level, std::uint32_t os) const;
    std::uint32_t count(HwLevel level) const;

    // OS indices of the PUs of the cores with these logical indices (Slurm's
    // core lists), ascending; an error names a core the machine lacks.
    Expected<std::vector<std::uint32_t>> pusOfCores(const std::vector<std::uint32_t> &cores) const;

    // The mapper's model of the PUs with these OS indices (empty: every
    // allowed PU). Logical indices are this topology's, so build models from
    // the whole machine's topology, not a restricted copy. NUMA domains as
    // PRRTE counts them: by OS index, up to the first whose CPUs overlap an
    // earlier one's. Devices: GPUs and network devices, one per PCI function,
    // with the CPUs of their nearest non-I/O ancestor.
    Expected<std::shared_ptr<const NodeModel>>
    nodeModel(const std::vector<std::uint32_t> &osPus = {}) const;

private:
    explicit NodeTopology(TopologyPtr topology) : topology_(std::move(topology)) {}

    TopologyPtr topology_;
};

} // namespace stepmap::topology
