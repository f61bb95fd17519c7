#include "step_modex.hpp"

#include "modexless/client_environment.hpp"
#include "modexless/interface_selection.hpp"
#include "modexless/record_check.hpp"
#include "modexless/tcp_record.hpp"
#include "profile/profile_diff.hpp"
#include "profile/sysfs_probe.hpp"
#include "protocol/wire/secret.hpp"

#include <cstdio>
#include <set>
#include <string_view>
#include <unordered_map>

namespace stepmap::server {

namespace {

using modex::ModexMode;
using modexless::OpenMpiLayout;

constexpr std::size_t kMaxNodesWithFabricDevices = 256;
constexpr std::size_t kMaxModexlessRanks = 16384;

const std::vector<std::string> kAsyncEnvironment = {"OMPI_MCA_pmix_base_async_modex=1",
                                                    "OMPI_MCA_pmix_base_collect_data=0"};

// Whether two nodes' entries share an address (link-local ones aside): the
// step's "nodes" are one machine, as on a test cluster, and the ranks'
// ports must then differ across nodes too.
bool nodesShareAnAddress(const std::vector<const topology::NodeProfile *> &entries) {
    std::set<std::string> seen;
    for (const topology::NodeProfile *node : entries) {
        if (!node)
            continue;
        std::set<std::string> mine;
        for (const auto &interface : node->interfaces)
            for (const auto &address : interface.addresses)
                if (address.address.rfind("fe80:", 0) != 0)
                    mine.insert(address.address);
        for (const auto &address : mine)
            if (!seen.insert(address).second)
                return true;
    }
    return false;
}

// Where the step's ports begin in the range: drawn from the step's secret,
// the same on every node and unknown to anyone else, so that no other user
// can bind a rank's port between its node's check and the rank's own bind
// (the rank would then publish another record than the one predicted, and
// the step ends). Back-to-back steps may draw overlapping ports: a port the
// last step's connections still hold in TIME_WAIT fails the node's check,
// and that node's entry is withheld (the step runs, exchanging that node's
// records), which costs less than a predictable port.
std::uint32_t portDraw(const std::string &secret) {
    const std::string bytes = wire::derivedBytes(secret, "modex ports");
    std::uint32_t draw = 0;
    for (int i = 0; i < 4; ++i)
        draw = draw << 8 | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
    return draw;
}

// The stale differences, the first few of them: enough to act on.
std::string joined(const std::vector<topology::ProfileDifference> &differences) {
    constexpr std::size_t kShown = 4;
    std::string text;
    std::size_t stale = 0;
    for (const auto &d : differences)
        if (d.stale && ++stale <= kShown)
            text += (text.empty() ? "" : "; ") + d.text;
    if (stale > kShown)
        text += "; and " + std::to_string(stale - kShown) + " more";
    return text;
}

} // namespace

StepModex::StepModex(const StepConfig &config) : config_(config) {
    const LaunchPlan &plan = config.plan;
    entries_.assign(plan.nodes.size(), nullptr);
    if (config.profile) {
        std::unordered_map<std::string_view, const topology::NodeProfile *> byName;
        for (const auto &node : config.profile->nodes)
            byName.emplace(node.name, &node);
        for (std::size_t i = 0; i < plan.nodes.size(); ++i)
            if (auto it = byName.find(plan.nodes[i].name); it != byName.end())
                entries_[i] = it->second;
    }
    if (config.modex != ModexMode::Profile)
        return;
    // PMIx 4.2.2 copies every rank's registered data into every client
    // (552 bytes a key): the records of a huge step would cost each client
    // more than the exchange they save.
    if (plan.ranks.size() > kMaxModexlessRanks) {
        rangeProblem_ = "the step's " + std::to_string(plan.ranks.size()) +
                        " ranks are more than a modex-less launch serves (" +
                        std::to_string(kMaxModexlessRanks) +
                        "): every client would hold every rank's TCP records";
        return;
    }
    const bool perMachine = nodesShareAnAddress(entries_);
    std::vector<std::uint32_t> onNode(plan.nodes.size(), 0);
    std::uint32_t needed = 0;
    portIndex_.reserve(plan.ranks.size());
    for (std::uint32_t r = 0; r < plan.ranks.size(); ++r) {
        const std::uint32_t index = perMachine ? r : onNode[plan.ranks[r].node]++;
        portIndex_.push_back(index);
        needed = std::max(needed, index + 1);
    }
    // Slurm's ports reserved for the step (MpiParams=ports), the same on
    // every node: taken by node-local index where nodes have addresses of
    // their own (on one machine they would collide across nodes).
    if (!config.reservedPorts.empty() && !perMachine) {
        useReservedPorts(needed);
        return;
    }
    usePortRange(needed, perMachine);
}

void StepModex::useReservedPorts(std::uint32_t needed) {
    auto ports = modexless::parseReservedPorts(config_.reservedPorts);
    if (!ports)
        rangeProblem_ = "SLURM_STEP_RESV_PORTS: " + ports.error().message;
    else if (ports->size() < needed)
        rangeProblem_ = "Slurm reserved " + std::to_string(ports->size()) +
                        (ports->size() == 1 ? " port" : " ports") +
                        " for the step (SLURM_STEP_RESV_PORTS=" + config_.reservedPorts +
                        "), and its fullest node runs " + std::to_string(needed) + " ranks";
    else
        reserved_ = std::move(ports.value());
}

void StepModex::usePortRange(std::uint32_t needed, bool perMachine) {
    const StepConfig &config = config_;
    auto range = modexless::parsePortRange(config.modexPorts, "modex_ports");
    if (!range) {
        rangeProblem_ = range.error().message;
        return;
    }
    range_ = *range;
    auto site = modexless::parsePortRange(
        config.siteModexPorts.empty() ? config.modexPorts : config.siteModexPorts, "modex_ports");
    if (!site || range_->first < site->first || range_->last > site->last) {
        rangeProblem_ = "srun asked for modex_ports=" + config.modexPorts +
                        ", not within this node's modex_ports=" + config.siteModexPorts +
                        " (plugstack.conf differs between srun's host and the nodes)";
        return;
    }
    const std::uint32_t size = range_->last - range_->first + 1u;
    if (needed > size)
        rangeProblem_ = "modex_ports=" + config.modexPorts + " holds " + std::to_string(size) +
                        (size == 1 ? " port" : " ports") + ", and the step needs " +
                        std::to_string(needed) +
                        (perMachine ? " (one per rank: its nodes share addresses)"
                                    : " (one per rank of its fullest node)");
    offset_ = portDraw(config.secret) % size;
}

const topology::NodeProfile *StepModex::entryOf(std::uint32_t node) const {
    return node < entries_.size() ? entries_[node] : nullptr;
}

std::optional<std::uint16_t> StepModex::port(std::uint32_t rank) const {
    if (!rangeProblem_.empty() || rank >= portIndex_.size())
        return std::nullopt;
    if (!reserved_.empty())
        return reserved_[portIndex_[rank]];
    if (!range_)
        return std::nullopt;
    const std::uint32_t size = range_->last - range_->first + 1u;
    return static_cast<std::uint16_t>(range_->first + (offset_ + portIndex_[rank]) % size);
}

std::optional<std::string> StepModex::portProblem() const {
    if (!rangeProblem_.empty())
        return rangeProblem_;
    const std::string &name = config_.plan.nodes[config_.nodeIndex].name;
    for (std::uint32_t rank : config_.plan.ranksOn(config_.nodeIndex)) {
        const auto p = port(rank);
        if (p && !modexless::portIsFree(*p))
            return "TCP port " + std::to_string(*p) + " of rank " + std::to_string(rank) +
                   " is in use on " + name + " (from modex_ports=" + config_.modexPorts + ")";
    }
    return std::nullopt;
}

OwnEntryCheck StepModex::checkOwnNode(const std::string &sysfsRoot,
                                      const InterfaceNuma &numa) const {
    const std::string &name = config_.plan.nodes[config_.nodeIndex].name;
    if (!config_.profile)
        return {false, "the profile srun shipped cannot be read: " + config_.profileProblem};
    const topology::NodeProfile *entry = entryOf(config_.nodeIndex);
    if (!entry)
        return {false, "the profile has no entry for " + name};
    topology::ProbeOptions probe;
    probe.root = sysfsRoot;
    probe.nodeName = name;
    probe.numaNodes = numa;
    auto live = topology::probeNode(probe);
    if (!live)
        return {false, "cannot probe " + name + " to check its entry: " + live.error().message};
    if (live->digest != entry->digest)
        return {false, name + " changed since it was profiled at " + entry->profiledAt + ": " +
                           joined(topology::profileDifferences(*entry, *live)) +
                           "; update the profile (stepmap-profile update)"};
    if (config_.modex != ModexMode::Profile)
        return {true, ""};
    if (!config_.tcpIfInclude.empty() || !config_.tcpIfExclude.empty())
        return {false,
                "the job sets OMPI_MCA_btl_tcp_if_" +
                    std::string(config_.tcpIfInclude.empty() ? "exclude=" + config_.tcpIfExclude
                                                             : "include=" + config_.tcpIfInclude) +
                    ", and --modex=profile predicts Open MPI's TCP records for its default "
                    "interfaces only"};
    if (modexless::openMpi41TcpRecord(*entry, 1).empty())
        return {false, "Open MPI would publish no TCP address of " + name};
    // Both layouts: 5.0's carries the link speed, which the digest leaves out.
    for (auto layout : {OpenMpiLayout::v41, OpenMpiLayout::v50}) {
        auto record = [layout](const topology::NodeProfile &node) {
            return layout == OpenMpiLayout::v41 ? modexless::openMpi41TcpRecord(node, 1)
                                                : modexless::openMpi50TcpRecord(node, 1);
        };
        if (auto differs = modexless::tcpRecordDifference(layout, record(*live), record(*entry)))
            return {false, "Open MPI would publish other TCP records on " + name +
                               " than its entry gives (" + *differs +
                               "): an interface went up or down or changed speed since it was "
                               "profiled; update the profile (stepmap-profile update)"};
    }
    if (auto problem = portProblem())
        return {false, *problem};
    return {true, ""};
}

ServedProfile StepModex::served(const std::vector<std::uint32_t> &withheld) const {
    const std::set<std::uint32_t> out(withheld.begin(), withheld.end());
    ServedProfile served;
    // PMIx 4.2.2 holds each nested key in a 552-byte info, in the server and
    // in every client: the device arrays cost ~50 KiB per served node and
    // client, the stepmap.* strings ~12 KiB (docs/profile-keys.md). Large
    // steps get the strings only.
    served.fabricDevices = entries_.size() <= kMaxNodesWithFabricDevices;
    served.nodes.resize(entries_.size());
    for (std::uint32_t n = 0; n < entries_.size(); ++n)
        if (entries_[n] && !out.count(n))
            served.nodes[n] = *entries_[n];
    if (config_.modex != ModexMode::Profile)
        return served;
    // What Open MPI publishes is a node's; only the port is the rank's.
    struct Published {
        std::vector<modexless::PublishedAddress> v41, v50;
    };
    std::vector<std::optional<Published>> byNode(entries_.size());
    for (std::uint32_t n = 0; n < entries_.size(); ++n)
        if (n != config_.nodeIndex && served.nodes[n])
            byNode[n] = Published{modexless::openMpi41Addresses(*served.nodes[n]),
                                  modexless::openMpi50Addresses(*served.nodes[n])};
    const auto &ranks = config_.plan.ranks;
    for (std::uint32_t r = 0; r < ranks.size(); ++r) {
        const auto &published = byNode[ranks[r].node];
        const auto p = port(r);
        if (!published || !p)
            continue;
        for (auto layout : {OpenMpiLayout::v41, OpenMpiLayout::v50}) {
            std::string record = modexless::tcpRecord(
                layout, layout == OpenMpiLayout::v41 ? published->v41 : published->v50, *p);
            if (!record.empty())
                served.rankData[r].emplace_back(std::string(modexless::tcpModexKey(layout)),
                                                std::move(record));
        }
    }
    return served;
}

std::vector<ExpectedRecords> StepModex::expectedLocalRecords() const {
    std::vector<ExpectedRecords> out;
    const topology::NodeProfile *entry = entryOf(config_.nodeIndex);
    if (!entry || config_.modex != ModexMode::Profile)
        return out;
    for (std::uint32_t rank : config_.plan.ranksOn(config_.nodeIndex))
        if (const auto p = port(rank))
            out.push_back({rank, modexless::openMpi41TcpRecord(*entry, *p),
                           modexless::openMpi50TcpRecord(*entry, *p)});
    return out;
}

std::vector<std::string> StepModex::clientEnvironment(std::uint32_t rank, bool nodeServed) const {
    switch (config_.modex) {
    case ModexMode::Fence:
        return {};
    case ModexMode::Async:
        return kAsyncEnvironment;
    case ModexMode::Profile:
        break;
    }
    const auto p = port(rank);
    if (nodeServed && p)
        return modexless::modexlessEnvironment(*p);
    return kAsyncEnvironment;
}

} // namespace stepmap::server
