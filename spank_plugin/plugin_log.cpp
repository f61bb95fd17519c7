#include "plugin_log.hpp"

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

void logError(const std::string &text) {
    slurm_error("stepmap: %s", text.c_str());
}
void logInfo(const std::string &text) {
    slurm_info("stepmap: %s", text.c_str());
}
void logVerbose(const std::string &text) {
    slurm_verbose("stepmap: %s", text.c_str());
}
void logDebug(const std::string &text) {
    slurm_debug("stepmap: %s", text.c_str());
}

} // namespace stepmap::plugin
