// multiProgApps (spank_plugin/srun/multi_prog.hpp): srun --multi-prog files as
// application contexts. Every context must hold at least one rank.

#include "srun/multi_prog.hpp"
#include "fuzz_check.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto apps = plugin::multiProgApps(fuzz::asText(data, size), "fuzz.conf");
    if (!apps) {
        fuzz::check(apps.error().message.starts_with("--multi-prog file fuzz.conf"),
                    "error without the file name");
        return 0;
    }
    fuzz::check(!apps->empty(), "no application contexts");
    for (int ranks : apps.value())
        fuzz::check(ranks > 0, "an application context without ranks");
    return 0;
}
