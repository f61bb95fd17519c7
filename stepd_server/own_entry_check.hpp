#pragma once

// Whether this node's entry of the interconnect profile srun shipped may be
// served: the node is probed as it is now and compared with its entry. The
// answer goes to the profile rendezvous (wire/profile_payloads.hpp); a node
// whose entry does not match has it withheld everywhere.

#include "step_config.hpp"

#include <string>

namespace stepmap::server {

struct OwnEntryCheck {
    bool usable = false;
    std::string reason; // why not, one line, for srun -v and the log
};

// sysfsRoot: "/" for the live node (tests: a fixture tree).
OwnEntryCheck checkOwnEntry(const StepConfig &config, const std::string &sysfsRoot = "/");

} // namespace stepmap::server
