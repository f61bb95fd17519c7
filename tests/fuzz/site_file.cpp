// parseSitePolicy (site/site_file.hpp): the site policy file,
// written by an administrator. An error names the file; a policy it accepts
// reads the same to stepmap.so's serve-line reader (serve_line.hpp).

#include "site/site_file.hpp"
#include "fuzz_check.hpp"
#include "site/serve_line.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text = fuzz::asText(data, size);
    const auto policy = plugin::parseSitePolicy(text, "stepmap.yaml");
    if (!policy) {
        fuzz::check(policy.error().message.starts_with("stepmap.yaml"),
                    "site file error without the file name");
        return 0;
    }
    const auto hint = plugin::serveHint(text.data(), text.size());
    fuzz::check(hint == (policy->serve == plugin::ServedSteps::Pmix ? plugin::kServePmix
                                                                    : plugin::kServeOptions),
                "stepmap.so reads serve: otherwise than the YAML");
    for (const auto &path : {policy->profile, policy->logDir})
        fuzz::check(!path || path->starts_with("/"), "a relative path");
    return 0;
}
