// parseSiteConfig (spank_plugin/site_config.hpp): the plugin's arguments in
// plugstack.conf, which Slurm splits at blanks. A configuration it accepts
// has absolute paths and timeouts in range.

#include "site_config.hpp"
#include "fuzz_check.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::vector<std::string> args;
    for (std::string &word : fuzz::splitAt(fuzz::asText(data, size), ' '))
        for (std::string &arg : fuzz::splitAt(word, '\n'))
            if (!arg.empty())
                args.push_back(std::move(arg));

    const auto config = plugin::parseSiteConfig(args, "/usr/libexec/stepmap-stepd");
    if (!config)
        return 0;
    fuzz::check(config->server.starts_with("/") && config->tmpdir.starts_with("/"),
                "a relative path");
    fuzz::check(config->logDir.empty() || config->logDir.starts_with("/"), "a relative log_dir");
    for (int seconds : {config->dmodexTimeoutSec, config->serverStartTimeoutSec})
        fuzz::check(seconds >= 1 && seconds <= 86400, "a timeout out of range");
    return 0;
}
