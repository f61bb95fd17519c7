#pragma once

// The srun options stepmap adds, and where their values come from:
// command line > job environment (sbatch/salloc forward their options as
// SLURM_SPANK__SLURM_SPANK_OPTION_stepmap_<name>).

#include "base/expected.hpp"
#include "option_table.hpp"
#include "request/plan_request.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

// The options, in the order srun --help shows them.
const std::vector<OptionSpec> &optionSpecs();
// name -> takes the next word as its value when not written --name=value
// (false for a flag and for an option whose value may be left out).
std::map<std::string, bool> optionArity();

struct StepmapOptions {
    std::optional<std::string> host;
    std::optional<std::string> hostfile; // a path, read as the user in srun
    std::optional<std::string> mapBy;
    std::optional<std::string> rankBy;
    std::optional<std::string> bindTo;
    bool overbook = false;
    bool loopNodesFirst = false;
    std::optional<std::string> nodesSort;
    std::optional<std::string> tpp;
    std::optional<std::string> displayMap; // as written; display_map.hpp reads it
    std::optional<std::string> modex;
    std::optional<std::string> withFt; // "ulfm" or "none"

    bool any() const {
        return host || hostfile || mapBy || rankBy || bindTo || overbook || loopNodesFirst ||
               nodesSort || tpp || displayMap || modex || withFt;
    }
};

// Values by option name, command line first, then the forwarded ones.
StepmapOptions mergeOptions(const std::map<std::string, std::string> &commandLine,
                            const std::map<std::string, std::string> &forwarded);
// The forwarded options found in the environment.
std::map<std::string, std::string> forwardedOptions();

// Checks one option value on its own (used by the option callbacks, so that
// sbatch/salloc reject a bad value at submission).
Expected<void> checkOptionValue(const std::string &name, const std::string &value);

} // namespace stepmap::plugin
