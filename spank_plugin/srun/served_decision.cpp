#include "srun/served_decision.hpp"

#include "pmix_request.hpp"
#include "srun/multi_prog.hpp"

#include <algorithm>

namespace stepmap::plugin {

namespace {

const char *variable(const std::map<std::string, std::string> &environment,
                     const std::string &name) {
    auto it = environment.find(name);
    return it == environment.end() ? nullptr : it->second.c_str();
}

// What serve: pmix says of a step without stepmap's options.
struct SitePolicyVerdict {
    bool served = false;
    std::string note; // why Slurm keeps a step the policy would serve
};

SitePolicyVerdict servedBySitePolicy(const ServeInput &input, const SitePolicy &policy,
                                     const MpiDefaultLookup &mpiDefault,
                                     const UserFileReader &readFile) {
    if (policy.serve != ServedSteps::Pmix)
        return {};
    const SrunCommandLine &cmd = input.cmd;
    const char *type = cmd.mpi ? cmd.mpi->c_str() : variable(input.environment, "SLURM_MPI_TYPE");
    if (!type)
        type = mpiDefault();
    if (!isPmixType(type))
        return {};
    const std::string left =
        "not serving this step although " + policy.path + " says serve: pmix: ";
    const std::string slurms = "; Slurm's --mpi=" + std::string(type) + " serves it";
    auto leave = [&](const std::string &why) {
        return SitePolicyVerdict{false, left + why + slurms};
    };
    if (!cmd.layoutOptions.empty())
        return leave(cmd.layoutOptions.front() + " lays the tasks out itself");
    // What the plan cannot honour for a user who never asked for stepmap:
    // a task count per node, Slurm's own binding, steps sharing a job's
    // CPUs (task farms), heterogeneous steps.
    for (const SrunOption &option : cmd.options) {
        if (option.role == SrunOptionRole::TasksPerNode)
            return leave(option.written + " lays the tasks out itself");
        if (option.name == "cpu-bind")
            return leave(option.written + " asks for Slurm's binding");
        if (option.name == "exact" || option.name == "overlap")
            return leave(option.written + " shares the job's CPUs between steps");
        if (option.name == "het-group" || option.name == "pack-group")
            return leave(option.written + " names components of a heterogeneous job");
    }
    if (std::find(input.args.begin(), input.args.end(), ":") != input.args.end())
        return leave("':' makes it a heterogeneous step");
    for (const char *name : {"SLURM_NTASKS_PER_NODE", "SLURM_HET_SIZE", "SLURM_PACK_SIZE"})
        if (variable(input.environment, name))
            return leave(std::string(name) + " is set");
    if (cmd.multiProg && cmd.program) {
        auto text = readFile(*cmd.program);
        if (!text)
            return leave("its --multi-prog file cannot be read: " + text.error().message);
        if (!multiProgApps(text.value(), *cmd.program))
            return leave("its --multi-prog file is not one application per consecutive rank range");
    }
    return {true, {}};
}

} // namespace

ServeDecision decideServing(const ServeInput &input, const SitePolicy &policy,
                            const MpiDefaultLookup &mpiDefault, const UserFileReader &readFile) {
    ServeDecision decision;
    if (input.options.any())
        decision.engaged = "stepmap's placement options";
    else if (input.psiVariable)
        decision.engaged =
            "stepmap's placement (" + *input.psiVariable + " is set in the environment)";
    else if (auto site = servedBySitePolicy(input, policy, mpiDefault, readFile); site.served) {
        decision.bySitePolicy = true;
        decision.engaged = "the site's policy (serve: pmix in " + policy.path + ")";
    } else {
        decision.unservedNote = std::move(site.note);
        return decision; // srun behaves exactly as without the plugin
    }
    decision.served = true;
    return decision;
}

Expected<void> refuseLayoutOptions(const SrunCommandLine &cmd, const SitePolicy &policy,
                                   const std::string &engaged) {
    // Where the site serves PMIx steps, asking for PMIx asks for stepmap.
    if (cmd.mpi && *cmd.mpi != "none" &&
        !(policy.serve == ServedSteps::Pmix && isPmixType(cmd.mpi->c_str())))
        return UserError{"--mpi=" + *cmd.mpi + " conflicts with " + engaged +
                         ": stepmap serves PMIx to this step itself. Remove --mpi (or use "
                         "--mpi=none)."};
    if (!cmd.layoutOptions.empty())
        return UserError{cmd.layoutOptions.front() + " lays the tasks out itself, and " + engaged +
                         " decide the layout here; drop " + cmd.layoutOptions.front() +
                         " (choose nodes with -N, -w, -x, --host or --hostfile)"};
    return {};
}

std::string refusalMessage(const std::string &message, const ServeDecision &decision,
                           const SitePolicy &policy) {
    // A user who gave none of stepmap's options learns why it is involved.
    return decision.bySitePolicy ? message + " (stepmap serves this step because " + policy.path +
                                       " says serve: pmix)"
                                 : message;
}

} // namespace stepmap::plugin
