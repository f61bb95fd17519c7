#pragma once

// Whether stepmap serves an srun, and what srun's own options it then
// refuses: pure decisions on what srun was given (its command line, its
// variables, the site's policy). Files and srun's MpiDefault are read
// through the caller's functions, only where the decision needs them.

#include "base/expected.hpp"
#include "options.hpp"
#include "site/site_policy.hpp"
#include "srun/srun_command_line.hpp"

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {

// What the decision reads of srun.
struct ServeInput {
    std::vector<std::string> args; // srun's argv without argv[0]
    SrunCommandLine cmd;
    StepmapOptions options; // the command line's and the forwarded ones
    // The first PSI_* variable set (psi_environment.hpp), if any.
    std::optional<std::string> psiVariable;
    // srun's variables, by name, as set (SLURM_MPI_TYPE, SLURM_NTASKS_PER_NODE,
    // SLURM_HET_SIZE, SLURM_PACK_SIZE are read).
    std::map<std::string, std::string> environment;
};

struct ServeDecision {
    bool served = false;
    // Engaged by the site's `serve: pmix` alone: --mpi=pmix* is dropped
    // rather than refused, and errors say why stepmap is involved.
    bool bySitePolicy = false;
    // What engaged stepmap, as the refusals name it ("stepmap's placement
    // options", ...); empty when not served.
    std::string engaged;
    // Why a PMIx step the site serves was left to Slurm (said with srun -v);
    // empty otherwise.
    std::string unservedNote;

    bool operator==(const ServeDecision &) const = default;
};

// srun's MpiDefault (pmix_request.hpp's slurmMpiDefault), or nullptr.
using MpiDefaultLookup = std::function<const char *()>;
// Reads a user's file (--multi-prog's), the error the reason alone.
using UserFileReader = std::function<Expected<std::string>(const std::string &path)>;

// Served when stepmap's options or a PSI_* variable are given; else, under
// the site's `serve: pmix` (stepmap.yaml(5)), a step that asks for PMIx
// unless it lays its tasks out itself (-m, -r, -F, --ntasks-per-node), asks
// for Slurm's binding, shares the job's CPUs, is heterogeneous, or has a
// --multi-prog file the plan cannot follow: those stay Slurm's, as the user
// wrote them (unservedNote says which).
ServeDecision decideServing(const ServeInput &input, const SitePolicy &policy,
                            const MpiDefaultLookup &mpiDefault, const UserFileReader &readFile);

// srun's options that conflict with a step stepmap serves: --mpi other than
// none (a PMIx type is the site's to serve under `serve: pmix`), and the
// layout options (-m, ...). The error names the option, what engaged stepmap
// and the remedy.
Expected<void> refuseLayoutOptions(const SrunCommandLine &cmd, const SitePolicy &policy,
                                   const std::string &engaged);

// A message of a step the site's policy alone engaged says why stepmap is
// involved.
std::string refusalMessage(const std::string &message, const ServeDecision &decision,
                           const SitePolicy &policy);

} // namespace stepmap::plugin
