#pragma once

// What one node server does for its step's --modex and interconnect profile
// (issue 12): its say in the profile rendezvous (does its own entry match
// the node, and for --modex=profile can its ranks have their ports), then,
// with every node's say, what it serves (the entries not withheld, and the
// predicted TCP records of the other nodes' ranks) and what each of its
// ranks' environments gets.

#include "committed_records.hpp"
#include "served_profile.hpp"
#include "step_config.hpp"

#include "modexless/pinned_ports.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::server {

struct OwnEntryCheck {
    bool usable = false;
    std::string reason; // why not, one line, for srun -v and the log
};

class StepModex {
public:
    explicit StepModex(const StepConfig &config);

    // Whether this node's entry (and, for --modex=profile, its ranks'
    // pinned ports) may be used. sysfsRoot: "/" for the live node; numa:
    // its interfaces' NUMA nodes as the prober takes them from hwloc
    // (StepTopology::interfaceNuma).
    using InterfaceNuma = std::map<std::string, std::optional<int>>;
    OwnEntryCheck checkOwnNode(const std::string &sysfsRoot, const InterfaceNuma &numa) const;
    // What the node servers register, once the rendezvous withheld some
    // nodes (ascending node indices).
    ServedProfile served(const std::vector<std::uint32_t> &withheld) const;
    // KEY=VALUE entries rank's environment gets (a rank of this node).
    std::vector<std::string> clientEnvironment(std::uint32_t rank, bool nodeServed) const;
    // What each of this node's ranks should commit (--modex=profile).
    std::vector<ExpectedRecords> expectedLocalRecords() const;
    // The site's range the ports are pinned in, when used (not Slurm's).
    std::optional<modexless::PortRange> portRange() const {
        return reserved_.empty() && rangeProblem_.empty() ? range_ : std::nullopt;
    }
    // The pinned TCP port of rank (--modex=profile), if it has one.
    std::optional<std::uint16_t> port(std::uint32_t rank) const;

private:
    const topology::NodeProfile *entryOf(std::uint32_t node) const;
    std::optional<std::string> portProblem() const;
    void useReservedPorts(std::uint32_t needed);
    void usePortRange(std::uint32_t needed, bool perMachine);

    const StepConfig &config_;
    std::vector<const topology::NodeProfile *> entries_; // by plan node; null: none
    std::optional<modexless::PortRange> range_;
    std::vector<std::uint16_t> reserved_; // Slurm's, when used
    std::string rangeProblem_;
    // Port index per rank: its global rank when nodes share an address (one
    // machine), else its index on its node; turned by the step's offset.
    std::vector<std::uint32_t> portIndex_;
    std::uint32_t offset_ = 0;
};

} // namespace stepmap::server
