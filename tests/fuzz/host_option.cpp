// parseHostOption (mapper/host_list.hpp): srun --host. Every name must come
// out once, with positive counts.

#include "host_entry_checks.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto spec = parseHostOption(fuzz::asText(data, size));
    if (spec)
        fuzz::checkHostEntries(spec->entries);
    else
        fuzz::check(spec.error().message.starts_with("--host"), "error not naming --host");
    return 0;
}
