#include "srun/step_environment.hpp"

#include "job_variables.hpp"
#include "options.hpp"

#include <cstring>

#include <cstdlib>

namespace stepmap::plugin {

SrunEnvironment readSrunEnvironment(const std::vector<std::string> &names) {
    SrunEnvironment values;
    for (const std::string &name : names)
        if (const char *value = std::getenv(name.c_str()))
            values[name] = value;
    return values;
}

void applyToEnvironment(const EnvironmentChanges &changes) {
    for (const EnvironmentChange &change : changes) {
        if (change.value)
            setenv(change.name.c_str(), change.value->c_str(), change.overwrite ? 1 : 0);
        else
            unsetenv(change.name.c_str());
    }
}

namespace {

std::optional<std::string> lookup(const SrunEnvironment &environment, const std::string &name) {
    auto it = environment.find(name);
    return it == environment.end() ? std::nullopt : std::optional<std::string>(it->second);
}

} // namespace

JobToRunIn jobToRunIn(const SrunCommandLine &cmd, const SrunEnvironment &environment) {
    JobToRunIn job;
    job.jobId = lookup(environment, "SLURM_JOB_ID");
    job.nodeList = lookup(environment, "SLURM_JOB_NODELIST");
    job.cpusPerNode = lookup(environment, "SLURM_JOB_CPUS_PER_NODE");
    if (const SrunOption *given = cmd.last("jobid"); given && given->value) {
        if (job.jobId && *job.jobId != *given->value) {
            // srun runs in the --jobid job: the variables are another job's.
            job.nodeList.reset();
            job.cpusPerNode.reset();
            job.changes = {{"SLURM_JOB_NODELIST", std::nullopt},
                           {"SLURM_JOB_CPUS_PER_NODE", std::nullopt}};
        }
        job.jobId = given->value;
    }
    return job;
}

Expected<Allocation> allocationOfJobVariables(const JobToRunIn &job) {
    auto a = allocationFromSlurm(job.nodeList.value_or(""), job.cpusPerNode.value_or(""));
    if (!a)
        return UserError{"cannot read the job's allocation: " + a.error().message};
    return a;
}

Expected<JobFromSlurm> allocationOfLookedUpJob(const std::string &jobId,
                                               const std::string &nodeList,
                                               const std::string &cpusPerNode) {
    auto a = allocationFromSlurm(nodeList, cpusPerNode);
    if (!a)
        return UserError{"cannot read job " + jobId + "'s allocation: " + a.error().message};
    return JobFromSlurm{
        std::move(a.value()),
        {{"SLURM_JOB_NODELIST", nodeList}, {"SLURM_JOB_CPUS_PER_NODE", cpusPerNode}}};
}

std::string hostfileText(const LaunchPlan &plan) {
    std::string lines;
    for (auto &r : plan.ranks)
        lines += plan.nodes[r.node].name + "\n";
    return lines;
}

Expected<EnvironmentChanges> planEnvironment(const LaunchPlan &plan, const PlanRequest &request,
                                             const std::string &hostfilePath,
                                             const std::string &cpusPerTaskVariable) {
    EnvironmentChanges changes = {
        {"SLURM_HOSTFILE", hostfilePath},
        {"SLURM_DISTRIBUTION", "arbitrary"},
        {"SLURM_MPI_TYPE", "none"},
        // stepmap binds the tasks itself (or not at all, leaving the cgroup):
        // Slurm's task/affinity must not bind them a second time.
        {"SLURM_CPU_BIND", "none"},
        // As under mpirun: a rank that fails ends the step instead of leaving
        // the others waiting in a collective. An explicit -K/--kill-on-bad-exit
        // wins.
        {"SLURM_KILL_BAD_EXIT", "1", false},
    };
    if (plan.oversubscribed)
        changes.push_back({"SLURM_OVERCOMMIT", "1"});
    // ParaStation's queue rule for the step too: under a PSI_* variable
    // without PSI_WAIT, a step whose CPUs other steps hold fails at once
    // (srun's --immediate; one the user set wins).
    if (request.parastation.fromEnvironment && !request.parastation.wait)
        changes.push_back({"SLURM_IMMEDIATE", "1", false});
    // --tpp / PSI_TPP: each task gets its hardware threads from Slurm too
    // (srun's -c, through the variable this release's srun reads).
    if (request.parastation.threads() > 1)
        changes.push_back({cpusPerTaskVariable, std::to_string(request.parastation.threads())});
    std::string encoded = encodePlan(plan);
    // Linux caps one environment string at 128 KiB (MAX_ARG_STRLEN).
    if (encoded.size() + std::strlen(kPlanVariable) + 1 > 128 * 1024)
        return UserError{"the launch plan is too irregular to pass to the nodes (" +
                         std::to_string(encoded.size()) +
                         " bytes encoded); use --map-by slot or nodes with equal CPU counts"};
    changes.push_back({kPlanVariable, std::move(encoded)});
    return changes;
}

Expected<EnvironmentChanges> faultToleranceEnvironment(const std::optional<std::string> &mode,
                                                       const SrunCommandLine &cmd) {
    if (!mode)
        return EnvironmentChanges{};
    if (auto valid = checkOptionValue("with-ft", *mode); !valid)
        return valid.error();
    if (*mode != "ulfm")
        return EnvironmentChanges{};
    if (const SrunOption *kill = cmd.last("kill-on-bad-exit");
        kill && (!kill->value || *kill->value != "0"))
        return UserError{"--with-ft=ulfm keeps the step going when a rank fails, " + kill->written +
                         (kill->value
                              ? (kill->written.rfind("--", 0) == 0 ? "=" : "") + *kill->value
                              : std::string()) +
                         " ends it: give one of them (or -K0)"};
    return EnvironmentChanges{{"SLURM_KILL_BAD_EXIT", "0"},
                              {"OMPI_MCA_mpi_ft_enable", "1", false},
                              {kFaultToleranceVariable, "ulfm"}};
}

} // namespace stepmap::plugin
