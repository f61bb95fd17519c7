// parseHostfile (mapper/host_list.hpp): srun --hostfile's text. Every name
// must come out once, with positive counts and slots within max_slots.

#include "host_entry_checks.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto spec = parseHostfile(fuzz::asText(data, size), "fuzz_hosts");
    if (!spec) {
        fuzz::check(spec.error().message.starts_with("hostfile fuzz_hosts"),
                    "hostfile error without the file name");
        return 0;
    }
    fuzz::check(!spec->exclude, "a hostfile excluding hosts");
    fuzz::checkHostEntries(spec->entries);
    return 0;
}
