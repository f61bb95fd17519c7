#include "srun/srun_input.hpp"

#include "srun/allocation_request.hpp"

#include <cstdlib>

namespace stepmap::plugin {

SrunInput srunInput(std::vector<std::string> args, std::map<std::string, std::string> forwarded,
                    EnvironmentValues psi, SrunEnvironment environment) {
    SrunInput input;
    input.cmd = scanSrunCommandLine(args, optionArity());
    input.args = std::move(args);
    input.options = mergeOptions(input.cmd.stepmapOptions, forwarded);
    input.planned = forwarded;
    for (auto &[k, v] : input.cmd.stepmapOptions)
        input.planned[k] = v;
    input.forwarded = std::move(forwarded);
    input.psi = std::move(psi);
    input.environment = std::move(environment);
    return input;
}

std::vector<std::string> srunVariablesRead(const std::vector<std::string> &extra) {
    std::vector<std::string> names = {
        // whether stepmap serves (served_decision.hpp)
        "SLURM_MPI_TYPE", "SLURM_NTASKS_PER_NODE", "SLURM_HET_SIZE", "SLURM_PACK_SIZE",
        // the job srun runs in (step_environment.hpp)
        "SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_JOB_CPUS_PER_NODE",
        // srun's task count (plan_step.hpp), --exact for the job map
        "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_EXACT",
        // where the program is found (mpi_linkage.hpp)
        "PATH"};
    for (const std::string &name : allocationVariables())
        names.push_back(name);
    names.insert(names.end(), extra.begin(), extra.end());
    return names;
}

SrunInput readSrunInput(const std::vector<std::string> &extraVariables) {
    EnvironmentValues psi;
    for (const std::string &name : environmentNamesRead())
        if (const char *value = std::getenv(name.c_str()))
            psi[name] = value;
    return srunInput(readOwnCommandLine(), forwardedOptions(), std::move(psi),
                     readSrunEnvironment(srunVariablesRead(extraVariables)));
}

} // namespace stepmap::plugin
