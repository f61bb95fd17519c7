// stepmap-plan: computes the launch plan srun with stepmap's options would
// start, from an allocation given on the command line (or Slurm's), and
// prints it as mpirun's job map, as JSON or as an SVG picture; with --site,
// under a site policy file as srun plans under it. Launches nothing.

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli_allocation.hpp"
#include "cli_hardware.hpp"
#include "cli_options.hpp"
#include "cli_request.hpp"
#include "cli_site.hpp"
#include "plan/job_map.hpp"
#include "plan/plan_svg.hpp"
#include "planner/planner.hpp"
#include "site/site_defaults.hpp"
#include "site/site_file.hpp"

namespace {

constexpr int kPlanningError = 1;
constexpr int kInputError = 2;

int fail(const std::string &message, int status) {
    std::fprintf(stderr, "stepmap-plan: %s\n", message.c_str());
    return status;
}

void print(const std::string &text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
}

// The picture draws the nodes' hardware even when the request does not use
// it; the plan is still made as srun makes it, without the models then.
stepmap::Expected<stepmap::PlanResult>
planFor(const stepmap::Allocation &nodes, const stepmap::PlanRequest &request, bool withModels) {
    if (withModels)
        return stepmap::planJob(nodes, request);
    stepmap::Allocation plain = nodes;
    for (stepmap::AllocatedNode &node : plain.nodes)
        node.model.reset();
    return stepmap::planJob(plain, request);
}

std::string formatted(const stepmap::cli::CliOptions &options,
                      const stepmap::cli::CliAllocation &allocation,
                      const stepmap::PlanResult &result) {
    using namespace stepmap;
    switch (options.output) {
    case cli::OutputFormat::Json:
        return formatPlanJson(result.plan);
    case cli::OutputFormat::Svg:
        return formatPlanSvg(
            result.plan, allocation.allocation,
            PlanSvgOptions{.title = allocation.jobId == "N/A" ? "" : "job " + allocation.jobId});
    case cli::OutputFormat::Map:
        break;
    }
    return formatJobMap(result.plan, reportedJobMapHeader(result.report, allocation.jobId),
                        allocation.allocation,
                        JobMapOptions{options.bindings, result.report.hwthreadCpus});
}

} // namespace

int main(int argc, char **argv) {
    using namespace stepmap;
    using namespace stepmap::cli;
    const std::vector<std::string> args(argv + 1, argv + argc);
    auto options = parseCommandLine(args);
    if (!options)
        return fail(options.error().message, kInputError);
    if (options->help) {
        print(usageText());
        return 0;
    }
    // --site: the site's defaults where the command line gives none; errors
    // from here on name the defaults used, as srun's do.
    std::optional<plugin::SitePolicy> site;
    std::string note;
    if (options->siteFile) {
        auto policy = plugin::readSitePolicy(*options->siteFile);
        if (!policy)
            return fail(policy.error().message, kInputError);
        site = std::move(policy.value());
        note = plugin::siteDefaultsNote(applySiteDefaults(*site, options.value()), *site);
    }
    auto request = buildRequest(options.value());
    if (!request)
        return fail(request.error().message + note, kInputError);
    auto allocation = loadAllocation(options.value());
    if (!allocation)
        return fail(allocation.error().message, kInputError);
    const bool planWithHardware = options->alwaysHardware || needsHardware(*request);
    const bool drawn = options->output == OutputFormat::Svg;
    auto hardware = addHardware(allocation.value(), options.value(), planWithHardware || drawn);
    if (!hardware)
        return fail(hardware.error().message, kInputError);

    auto result = planFor(allocation->allocation, request.value(), planWithHardware || !drawn);
    if (!result)
        return fail(result.error().message + note, kPlanningError);
    if (site) {
        const auto overbookBy =
            options->overbook ? std::optional<std::string>("--overbook") : std::nullopt;
        if (auto within = plugin::checkSitePolicy(*site, result->plan, overbookBy); !within)
            return fail(within.error().message + note, kPlanningError);
    }
    print(formatted(options.value(), allocation.value(), result.value()));
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write the plan", kInputError);
}
