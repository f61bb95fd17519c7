// scanSrunCommandLine (spank_plugin/srun/srun_command_line.hpp): srun's own
// command line, NUL-separated as /proc/self/cmdline gives it (without
// argv[0]), then what srun's side (srun/srun_input.cpp) does with it: merge
// the options, check each value (--host, --map-by, --tpp, ...) and parse -n.

#include "srun/srun_command_line.hpp"
#include "fuzz_check.hpp"
#include "options.hpp"
#include "plan/launch_plan.hpp"
#include "request/plan_request.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::vector<std::string> args = fuzz::splitAt(fuzz::asText(data, size), '\0');
    const auto arity = plugin::optionArity();
    const plugin::SrunCommandLine cmd = plugin::scanSrunCommandLine(args, arity);

    for (const auto &[name, value] : cmd.stepmapOptions) {
        fuzz::check(arity.count(name) == 1, "an option that is not stepmap's");
        plugin::checkOptionValue(name, value);
    }
    plugin::mergeOptions(cmd.stepmapOptions, {}).any();
    if (cmd.ntasks) {
        if (const auto np = parseProcessCount(*cmd.ntasks))
            fuzz::check(np.value() >= 1 && np.value() <= kMaxRanks, "-n out of range");
    }
    return 0;
}
