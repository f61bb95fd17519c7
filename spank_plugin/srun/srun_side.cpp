#include "srun/srun_side.hpp"

#include "job_variables.hpp"
#include "os/user_file.hpp"
#include "plugin_log.hpp"
#include "pmix_request.hpp"
#include "protocol/wire/frame_channel.hpp"
#include "site/site_defaults.hpp"
#include "srun/apply_to_srun.hpp"
#include "srun/mpi_linkage.hpp"
#include "srun/plan_in_job.hpp"
#include "srun/plan_step.hpp"
#include "srun/show_job_map.hpp"
#include "srun/slurm_release.hpp"
#include "srun/srun_input.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace stepmap::plugin {

namespace {

Expected<std::string> readUserFile(const std::string &path) {
    return readBoundedFile(path);
}

// Ends srun with `message` before anything starts (even if the site loads
// the plugin as "optional"); removes the picture's temporary file first.
[[noreturn]] void refuse(const std::string &message, const ServeDecision &serve,
                         const SitePolicy &policy, std::optional<ReplacedFile> *picture = nullptr) {
    logError(refusalMessage(message, serve, policy));
    if (picture)
        picture->reset();
    std::exit(EXIT_FAILURE);
}

std::optional<std::string> variable(const SrunInput &input, const std::string &name) {
    auto it = input.environment.find(name);
    return it == input.environment.end() ? std::nullopt : std::optional<std::string>(it->second);
}

// What the later hooks need of srun's input and the plan.
ServedStep servedStep(const SrunInput &input, const SitePolicy &policy, LaunchPlan plan) {
    ServedStep step;
    step.planned = input.planned;
    step.forwarded = input.forwarded;
    step.profileModex = input.options.modex.value_or(policy.modex.value_or("")) == "profile";
    step.plan = std::move(plan);
    return step;
}

// The previous image of this srun planned, allocated and set the
// environment; only the plan is needed again here.
ServedStep resume(const SrunInput &input, const Reexec &reexec, const SitePolicy &policy) {
    wire::initCryptoWithoutExitCleanup();
    const char *encoded = std::getenv(kPlanVariable);
    auto decoded = decodePlan(encoded ? encoded : "");
    if (!decoded)
        refuse("lost the plan across srun's restart: " + decoded.error().message, {}, policy);
    ServedStep step = servedStep(input, policy, std::move(decoded.value()));
    step.hostfile.reset(reexec.hostfileFd);
    fcntl(step.hostfile.get(), F_SETFD, FD_CLOEXEC);
    step.planMs = reexec.planMs;
    step.allocationMs = reexec.allocationMs;
    if (reexec.job) {
        step.job = JobAllocation::adopt(reexec.job, reexec.watcherFd);
        if (!step.job)
            refuse("lost job " + std::to_string(reexec.job) + " across srun's restart", {}, policy);
    }
    return step;
}

// The chain for a step stepmap serves: check srun's input, plan in the job
// (asking Slurm for one if srun has none), apply the plan to srun and show
// the map; srun is re-executed here if the plan replaces its layout
// options. A user error ends srun with its message.
ServedStep serveStep(const SrunInput &input, const SiteConfig &site, const ServeDecision &serve,
                     std::chrono::steady_clock::time_point started) {
    if (auto accepted = refuseLayoutOptions(input.cmd, site.policy, serve.engaged); !accepted)
        refuse(accepted.error().message, serve, site.policy);
    auto prepared = prepareJobMap(input.options.displayMap);
    if (!prepared)
        refuse(prepared.error().message, serve, site.policy);
    JobMapOutput &map = prepared.value();
    OwnJob own;
    // From here on a failure releases the job stepmap asked for.
    auto fail = [&](const std::string &message) {
        if (own.job)
            own.job->release(1);
        refuse(message, serve, site.policy, &map.picture);
    };

    if (auto refused = pmiOnlyProgram(input.cmd, variable(input, "PATH").value_or("")))
        fail(refused->message + siteDefaultsNote({}, site.policy));
    const WrittenRequest written = writtenRequest(input.options, input.psi, site.policy);
    auto outcome = planInJob(input, written, site.policy, serve.bySitePolicy, own);
    if (!outcome)
        fail(outcome.error().message + siteDefaultsNote(written.siteDefaults, site.policy));
    PlannedStep &planned = outcome->step;

    // Make Slurm start exactly the plan (set before srun reads its
    // environment, so the inherited task and node counts give way to the
    // host file).
    auto hostfile = applyPlan(planned.plan, planned.request, input.options.modex, site);
    if (!hostfile)
        fail(hostfile.error().message);
    if (auto ft = faultToleranceEnvironment(
            input.options.withFt ? input.options.withFt : site.policy.withFt, input.cmd);
        !ft)
        fail(ft.error().message);
    else
        applyToEnvironment(ft.value());
    const std::string ownJob = own.job ? std::to_string(own.job->jobId()) : "";
    if (auto shown = showJobMap(map, planned, input, ownJob); !shown)
        fail(shown.error().message);
    // The srun-side cost of stepmap, shown by `srun -v` once srun knows
    // its verbosity (local_user_init).
    const double planMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
            .count() -
        own.allocationMs;
    if (auto failed = reexecuteWithoutLayout(input, hostfile.value(), planMs, own.allocationMs,
                                             own.job.get()))
        fail(failed->message);

    ServedStep step = servedStep(input, site.policy, std::move(planned.plan));
    step.hostfile = std::move(hostfile.value());
    step.planMs = planMs;
    step.allocationMs = own.allocationMs;
    step.verboseNotes = std::move(outcome->verboseNotes);
    step.job = std::move(own.job);
    return step;
}

} // namespace

int SrunSide::init(spank_t) {
    timeline::SrunMarks marks;
    marks.started = timeline::nowUsec();
    const auto started = std::chrono::steady_clock::now();
    const SrunInput input = readSrunInput({slurm_release::cpusPerTaskVariable()});

    if (auto reexec = takeReexec()) {
        step_ = resume(input, *reexec, site_.policy);
        step_->marks = marks;
        return 0;
    }

    // What an outer stepmap step handed its tasks is not this step's: an
    // srun inside such a task must not carry it into its own step. (The
    // spawn variables are not a task's: the srun that spawns sets them for
    // the srun it starts, and slurmstepd removes them from tasks.)
    for (const char *name : kJobVariables)
        if (!isSpawnVariable(name))
            unsetenv(name);
    const ServeInput served{input.args, input.cmd, input.options, firstPsiVariable(input.psi),
                            input.environment};
    serve_ = decideServing(served, site_.policy, slurmMpiDefault, readUserFile);
    // Not served: srun behaves exactly as without the plugin.
    if (!serve_.served)
        return 0;
    wire::initCryptoWithoutExitCleanup(); // before any OpenSSL use (see there)

    step_ = serveStep(input, site_, serve_, started);
    step_->marks = marks;
    return 0;
}

int SrunSide::optionSeen(const std::string &name, const std::string &value) {
    if (!step_) {
        // init found no stepmap option, yet srun parsed one: our reading of
        // the command line missed it, so no plan was made for this step.
        logError("could not read --" + name +
                 " from srun's command line before srun parsed it; write it as --" + name +
                 (value.empty() ? "" : "=" + value) + " before the program name");
        return -1;
    }
    // srun first hands over what salloc/sbatch forwarded, then its own
    // command line's value, which the plan was made with (it wins).
    auto it = step_->planned.find(name);
    auto from = step_->forwarded.find(name);
    const bool forwardedValue = from != step_->forwarded.end() && from->second == value;
    if ((it == step_->planned.end() || it->second != value) && !forwardedValue) {
        logError("--" + name + " '" + value +
                 "' differs from the value the plan was made with; write each stepmap option "
                 "once, as --name=value");
        return -1;
    }
    return 0;
}

int SrunSide::initPostOpt(spank_t) {
    // srun has read the host file by now.
    if (step_)
        step_->hostfile.reset();
    return 0;
}

namespace {

// srun -v: what planning cost srun.
void logPlanCost(const ServedStep &step) {
    char line[160];
    if (step.allocationMs > 0)
        std::snprintf(line, sizeof line,
                      "planned %zu ranks on %zu nodes in %.3f ms (and waited %.3f ms for "
                      "Slurm to grant the job)",
                      step.plan.ranks.size(), step.plan.nodes.size(), step.planMs,
                      step.allocationMs);
    else
        std::snprintf(line, sizeof line, "planned %zu ranks on %zu nodes in %.3f ms",
                      step.plan.ranks.size(), step.plan.nodes.size(), step.planMs);
    logVerbose(line);
    for (const std::string &note : step.verboseNotes)
        logVerbose(note);
}

} // namespace

int SrunSide::localUserInit(spank_t sp) {
    if (!step_) {
        if (!serve_.unservedNote.empty())
            logVerbose(serve_.unservedNote);
        return 0;
    }
    if (serve_.bySitePolicy)
        logVerbose("serving this PMIx step with the site's defaults (serve: pmix in " +
                   site_.policy.path + ")");
    uint32_t jobId = 0, stepId = 0;
    spank_get_item(sp, S_JOB_ID, &jobId);
    spank_get_item(sp, S_JOB_STEPID, &stepId);
    step_->marks.stepCreated = timeline::nowUsec();
    uint32_t tasks = 0, nnodes = 0;
    spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &tasks);
    spank_get_item(sp, S_JOB_NNODES, &nnodes);
    if (auto matches = checkStepAgainstPlan(step_->plan, {jobId, stepId, tasks, nnodes});
        !matches) {
        logError(matches.error().message);
        return -1;
    }
    logPlanCost(*step_);
    hub_ = StepHub::start({&step_->plan, &site_, step_->profileModex, jobId, stepId});
    if (!hub_)
        return -1;
    step_->marks.hubOpen = timeline::nowUsec();
    return 0;
}

int SrunSide::exit(spank_t) {
    if (!step_)
        return 0;
    step_->marks.exiting = timeline::nowUsec();
    step_->hostfile.reset();
    timeline::SrunMarks marks = step_->marks;
    marks.planMs = step_->planMs;
    marks.allocationMs = step_->allocationMs;
    const int status = hub_ ? hub_->finish(marks) : -1;
    const bool failed = hub_ && hub_->failed();
    if (step_->job) {
        // srun's own allocation would end here, with srun's status; the
        // plugin knows the application's abort status, else success.
        step_->job->release(status >= 0 ? status : (failed ? 1 : 0));
        step_->job.reset();
    }
    if (status >= 0) {
        // srun would report the killed ranks' signal; the step's status is
        // the one the application aborted with, as under mpirun.
        std::fflush(nullptr);
        std::_Exit(status);
    }
    return 0;
}

} // namespace stepmap::plugin
