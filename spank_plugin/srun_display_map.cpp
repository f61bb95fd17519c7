// --display-map=svg:FILE in srun: the job drawn as stepmap-plan --output svg
// draws it, written to FILE as the user before the step starts.

#include "srun_side.hpp"

#include "base/quote.hpp"
#include "plan/plan_svg.hpp"
#include "plugin_log.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>

namespace stepmap::plugin {

namespace {

// The job the step runs in: the one srun asked for, else --jobid, else
// salloc's or sbatch's.
std::string stepJob(const SrunCommandLine &cmd, const JobAllocation *job) {
    if (job)
        return std::to_string(job->jobId());
    if (const SrunOption *given = cmd.last("jobid"); given && given->value)
        return *given->value;
    const char *inherited = std::getenv("SLURM_JOB_ID");
    return inherited ? inherited : "";
}

std::string counted(std::size_t n, const std::string &thing) {
    return std::to_string(n) + " " + thing + (n == 1 ? "" : "s");
}

} // namespace

// Before the plan, so that a bad value or a file srun cannot create stops
// srun before anything is allocated or started.
void SrunSide::prepareDisplayMap() {
    if (!options_.displayMap)
        return;
    auto request = parseDisplayMap(*options_.displayMap);
    if (!request)
        refuse(request.error().message);
    if (request->form == DisplayMapRequest::Form::Text) {
        textMap_ = true;
        return;
    }
    auto file = ReplacedFile::create(request->file);
    if (!file)
        refuse("--display-map " + quoted(*options_.displayMap, kShownPathBytes) + ": " +
               file.error().message);
    mapPicture_.emplace(std::move(file).value());
}

void SrunSide::drawJobMap(const SrunCommandLine &cmd) {
    const std::string job = stepJob(cmd, job_.get());
    // The nodes' hardware is drawn even when the plan did not need it, as
    // stepmap-plan draws it; without it (Slurm did not say) each node shows
    // its ranks as chips.
    std::optional<Allocation> modelled;
    const bool everyModel = std::all_of(allocation_.nodes.begin(), allocation_.nodes.end(),
                                        [](const AllocatedNode &n) { return n.model != nullptr; });
    if (!everyModel && !job.empty()) {
        auto attached = allocationWithModels(job);
        if (attached)
            modelled = std::move(attached).value();
        else
            logInfo("the job map is drawn without the nodes' hardware: " +
                    attached.error().message);
    }
    const std::string svg = formatPlanSvg(plan_, modelled ? *modelled : allocation_,
                                          PlanSvgOptions{.title = job.empty() ? "" : "job " + job});
    auto written = mapPicture_->replace(svg);
    if (!written)
        fail("--display-map " + quoted(*options_.displayMap, kShownPathBytes) + ": " +
             written.error().message);
    logInfo("job map drawn in " + escaped(mapPicture_->path(), kShownPathBytes) + " (" +
            counted(plan_.ranks.size(), "rank") + " on " + counted(plan_.nodes.size(), "node") +
            ")");
    mapPicture_.reset();
}

} // namespace stepmap::plugin
