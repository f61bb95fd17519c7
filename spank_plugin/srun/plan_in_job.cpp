#include "srun/plan_in_job.hpp"

#include "os/user_file.hpp"
#include "srun/slurm_queries.hpp"
#include "srun/slurm_release.hpp"
#include "srun/step_environment.hpp"

namespace stepmap::plugin {

namespace {

Expected<std::string> readUserFile(const std::string &path) {
    return readBoundedFile(path);
}

} // namespace

Expected<PlanOutcome> planInJob(const SrunInput &input, const WrittenRequest &written,
                                const SitePolicy &policy, bool bySitePolicy, OwnJob &own) {
    const SrunCommandLine &cmd = input.cmd;
    StepRequestInput requestInput{
        input.cmd.ntasks, cmd.multiProg ? std::optional(cmd.program.value_or("")) : std::nullopt,
        input.options, input.psi};
    auto built = buildStepRequest(written, requestInput, readUserFile);
    if (!built)
        return built.error();
    PlanRequest req = std::move(built->request);
    auto counted = srunTaskCount(req, bySitePolicy, input.environment);
    if (!counted)
        return counted.error();
    const SrunTaskCount taskCount = counted.value();
    NodeTable table; // Slurm's node table, loaded only when needed
    std::vector<std::string> allocationNotes;

    Allocation alloc;
    const JobToRunIn job = jobToRunIn(cmd, input.environment);
    applyToEnvironment(job.changes);
    if (taskCount.applies && !job.jobId) {
        auto stepNodes = stepNodeRequest(cmd, readUserFile);
        req.np = taskCount.jobTasks ? *taskCount.jobTasks
                                    : (stepNodes && stepNodes->count ? stepNodes->count->min : 1);
    }
    if (job.jobId) {
        auto a = jobAllocation(job);
        if (!a)
            return a.error();
        alloc = std::move(a->allocation);
        applyToEnvironment(a->changes);
    } else {
        // No allocation yet: ask Slurm's scheduler for one shaped by what the
        // user asked, then plan inside it as inside salloc.
        auto granted = requestJob(std::move(req), cmd, input.environment, table);
        if (!granted)
            return granted.error();
        own.job = std::move(granted->job);
        own.allocationMs = granted->allocationMs;
        own.job->exportJobVariables();
        if (!granted->allocation)
            return granted->allocation.error();
        alloc = std::move(granted->allocation.value());
        allocationNotes = std::move(granted->notes);
        req = keepExclusionsOfGrantedNodes(std::move(granted->request), alloc);
    }
    // A job stepmap asked for was shaped by -N, -w, -x already: the step is all of it.
    if (!own.job) {
        auto stepNodes = stepNodeRequest(cmd, readUserFile);
        if (!stepNodes)
            return stepNodes.error();
        if (stepNodes->any()) {
            auto chosen = selectStepNodes(alloc, stepNodes.value());
            if (!chosen)
                return chosen.error();
            alloc = std::move(chosen.value());
        }
    }
    if (taskCount.applies && !req.np)
        req.np = taskCount.jobTasks ? *taskCount.jobTasks : static_cast<int>(alloc.nodes.size());

    const std::string jobName = own.job ? std::to_string(own.job->jobId()) : job.jobId.value_or("");
    if (auto described = describeNodes(req, alloc, jobName, table); !described)
        return described.error();
    StepRules rules{cpusPerTask(cmd, input.environment, slurm_release::cpusPerTaskVariable()),
                    tasksPerNode(cmd), std::nullopt};
    if (req.overbook)
        rules.overbookBy = input.options.overbook ? "--overbook" : "PSI_OVERBOOK";
    const bool exclusiveInJob = req.parastation.exclusive && !own.job;
    const std::string exclusiveBy = req.parastation.sources.exclusive;
    const Allocation jobNodes = exclusiveInJob ? alloc : Allocation{};
    auto planned = planStep(std::move(req), std::move(alloc), rules, policy);
    if (!planned)
        return planned.error();
    // PSI_EXCLUSIVE inside a job: stepmap cannot hold a node for the job
    // (Slurm gave it), only refuse one that another job shares.
    if (exclusiveInJob) {
        std::vector<std::string> used;
        for (const auto &node : planned->plan.nodes)
            used.push_back(node.name);
        auto shared = nodesSharedWithOtherJobs(jobNodes, used, table);
        if (!shared)
            return shared.error();
        if (!shared->empty()) {
            std::string names;
            for (const auto &n : *shared)
                names += (names.empty() ? "" : ", ") + n;
            return UserError{exclusiveBy + " asks for nodes no other job uses, and job " + jobName +
                             " shares " + names +
                             "; run in a job that holds its nodes whole (salloc or sbatch "
                             "--exclusive), or without " +
                             exclusiveBy};
        }
    }
    std::vector<std::string> notes = std::move(built->psiNotes);
    notes.insert(notes.end(), allocationNotes.begin(), allocationNotes.end());
    return PlanOutcome{std::move(planned.value()), std::move(notes)};
}

} // namespace stepmap::plugin
