#include "srun/show_job_map.hpp"

#include "base/quote.hpp"
#include "display_map.hpp"
#include "placement/parastation_placement.hpp"
#include "plan/job_map.hpp"
#include "plan/plan_svg.hpp"
#include "plugin_log.hpp"
#include "srun/slurm_queries.hpp"
#include "srun/slurm_release.hpp"

#include <algorithm>
#include <cstdio>

namespace stepmap::plugin {

namespace {

std::string counted(std::size_t n, const std::string &thing) {
    return std::to_string(n) + " " + thing + (n == 1 ? "" : "s");
}

} // namespace

Expected<JobMapOutput> prepareJobMap(const std::optional<std::string> &displayMap) {
    JobMapOutput output;
    if (!displayMap)
        return output;
    auto request = parseDisplayMap(*displayMap);
    if (!request)
        return request.error();
    if (request->form == DisplayMapRequest::Form::Text) {
        output.text = true;
        return output;
    }
    auto file = ReplacedFile::create(request->file);
    if (!file)
        return UserError{"--display-map " + quoted(*displayMap, kShownPathBytes) + ": " +
                         file.error().message};
    output.picture.emplace(std::move(file).value());
    return output;
}

void displayJobMap(const PlannedStep &step, const std::string &jobOrNa, bool withCpusPerTask) {
    JobMapHeader header = reportedJobMapHeader(step.report, jobOrNa);
    describeParaStationMapping(header, step.request);
    std::string map = formatJobMap(step.plan, header, step.allocation,
                                   JobMapOptions{BoundStyle::Prrte, step.report.hwthreadCpus});
    // srun plans with the job's CPUs; a step that takes only its tasks'
    // share of a node (-c, --exact) may hold fewer, unknown until Slurm
    // creates it. Say so rather than show CPUs that may not be the ones.
    const bool bound = std::any_of(step.plan.ranks.begin(), step.plan.ranks.end(),
                                   [](const RankPlacement &r) { return r.binding != kUnbound; });
    if (bound && withCpusPerTask)
        map += "Bindings above are within the job's CPUs; with -c or --exact the step may "
               "hold fewer on a node, and each node binds within those it holds (its node "
               "server logs where that narrows a binding).\n";
    std::fwrite(map.data(), 1, map.size(), stderr);
    std::fflush(stderr);
}

Expected<void> drawJobMap(const PlannedStep &step, const std::string &job, ReplacedFile &picture,
                          const std::string &displayMap) {
    // The nodes' hardware is drawn even when the plan did not need it, as
    // stepmap-plan draws it; without it (Slurm did not say) each node shows
    // its ranks as chips.
    std::optional<Allocation> modelled;
    const bool everyModel = std::all_of(step.allocation.nodes.begin(), step.allocation.nodes.end(),
                                        [](const AllocatedNode &n) { return n.model != nullptr; });
    if (!everyModel && !job.empty()) {
        auto attached = allocationWithModels(step.allocation, job);
        if (attached)
            modelled = std::move(attached).value();
        else
            logInfo("the job map is drawn without the nodes' hardware: " +
                    attached.error().message);
    }
    const std::string svg = formatPlanSvg(step.plan, modelled ? *modelled : step.allocation,
                                          PlanSvgOptions{.title = job.empty() ? "" : "job " + job});
    auto written = picture.replace(svg);
    if (!written)
        return UserError{"--display-map " + quoted(displayMap, kShownPathBytes) + ": " +
                         written.error().message};
    logInfo("job map drawn in " + escaped(picture.path(), kShownPathBytes) + " (" +
            counted(step.plan.ranks.size(), "rank") + " on " +
            counted(step.plan.nodes.size(), "node") + ")");
    return {};
}

namespace {

std::optional<std::string> variable(const SrunInput &input, const std::string &name) {
    auto it = input.environment.find(name);
    return it == input.environment.end() ? std::nullopt : std::optional<std::string>(it->second);
}

} // namespace

Expected<void> showJobMap(JobMapOutput &map, const PlannedStep &step, const SrunInput &input,
                          const std::string &ownJob) {
    const auto inherited = variable(input, "SLURM_JOB_ID");
    if (map.text || step.report.display) {
        const bool withCpusPerTask = input.cmd.last("cpus-per-task") || input.cmd.last("exact") ||
                                     variable(input, slurm_release::cpusPerTaskVariable()) ||
                                     step.request.parastation.threads() > 1 ||
                                     variable(input, "SLURM_EXACT");
        displayJobMap(step, !ownJob.empty() ? ownJob : inherited.value_or("N/A"), withCpusPerTask);
    }
    if (!map.picture)
        return {};
    // The picture names the job the step runs in: the one srun asked for,
    // else --jobid, else salloc's or sbatch's.
    std::string job = ownJob;
    if (job.empty()) {
        const SrunOption *given = input.cmd.last("jobid");
        job = given && given->value ? *given->value : inherited.value_or("");
    }
    if (auto drawn = drawJobMap(step, job, *map.picture, *input.options.displayMap); !drawn)
        return drawn;
    map.picture.reset();
    return {};
}

} // namespace stepmap::plugin
