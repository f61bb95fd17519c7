// loadProfileYaml (topology/profile/profile_yaml.hpp): the site's profile in
// srun, and the entries srun ships in the job environment, which the user
// controls, in every node server. An error names the input; a profile that
// loads is written back to text that loads as the same profile.

#include "profile/profile_yaml.hpp"
#include "fuzz_check.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto profile = topology::loadProfileYaml(fuzz::asText(data, size), "fuzz.yaml");
    if (!profile) {
        fuzz::check(profile.error().message.starts_with("fuzz.yaml"),
                    "profile error without the file name");
        return 0;
    }
    const auto again = topology::loadProfileYaml(topology::writeProfileYaml(*profile), "again");
    fuzz::check(again.ok() && *again == *profile, "profile changed in write/load");
    return 0;
}
