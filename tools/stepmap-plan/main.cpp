// stepmap-plan: computes the launch plan srun with stepmap's options would
// start, from an allocation given on the command line (or Slurm's), and
// prints it as mpirun's job map or as JSON. Launches nothing.

#include <cstdio>
#include <string>
#include <vector>

#include "cli_allocation.hpp"
#include "cli_hardware.hpp"
#include "cli_options.hpp"
#include "cli_request.hpp"
#include "plan/job_map.hpp"
#include "planner/planner.hpp"

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
    auto request = buildRequest(options.value());
    if (!request)
        return fail(request.error().message, kInputError);
    auto allocation = loadAllocation(options.value());
    if (!allocation)
        return fail(allocation.error().message, kInputError);
    auto hardware = addHardware(allocation.value(), options.value(),
                                options->alwaysHardware || needsHardware(*request));
    if (!hardware)
        return fail(hardware.error().message, kInputError);

    const Allocation &nodes = allocation->allocation;
    auto result = planJob(nodes, request.value());
    if (!result)
        return fail(result.error().message, kPlanningError);
    if (options->output == OutputFormat::Json) {
        print(formatPlanJson(result->plan));
    } else {
        const JobMapHeader header = reportedJobMapHeader(result->report, allocation->jobId);
        print(formatJobMap(result->plan, header, nodes,
                           JobMapOptions{options->bindings, result->report.hwthreadCpus}));
    }
    return std::fflush(stdout) == 0 ? 0 : fail("cannot write the plan", kInputError);
}
