// SPANK entry points of stepmap: each one only dispatches on the context to
// the srun side or the slurmstepd side, and catches everything so that no
// exception reaches Slurm.

#include "options.hpp"
#include "plugin_log.hpp"
#include "site_config.hpp"
#include "srun_side.hpp"
#include "stepd_side.hpp"

#include <memory>

extern "C" {
#include <slurm/spank.h>

extern const char plugin_name[] __attribute__((visibility("default"))) = "stepmap";
extern const char plugin_type[] __attribute__((visibility("default"))) = "spank";
extern const unsigned int plugin_version __attribute__((visibility("default"))) =
    SLURM_VERSION_NUMBER;
}

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

// Created in slurm_spank_init, destroyed in slurm_spank_exit: nothing with a
// destructor lives at namespace scope of this dlopen'ed object.
struct PluginState {
    std::unique_ptr<SrunSide> srun;
    std::unique_ptr<StepdSide> stepd;
    spank_context_t context = S_CTX_ERROR;
};
PluginState *state = nullptr;

template <class F> int guarded(const char *hook, F &&f) {
    try {
        return f();
    } catch (const std::exception &e) {
        logError(std::string(hook) + ": " + e.what());
    } catch (...) {
        logError(std::string(hook) + ": unexpected error");
    }
    return -1;
}

int onOption(int val, const char *optarg, int remote) {
    return guarded("option", [&] {
        const auto &specs = optionSpecs();
        if (val < 0 || static_cast<std::size_t>(val) >= specs.size())
            return -1;
        std::string name = specs[static_cast<std::size_t>(val)].name;
        std::string value = optarg ? optarg : "";
        if (remote || !state)
            return 0;
        if (state->srun)
            return state->srun->optionSeen(name, value);
        auto ok = checkOptionValue(name, value);
        if (!ok) {
            logError("--" + name + " " + value + ": " + ok.error().message);
            return -1;
        }
        return 0;
    });
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int slurm_spank_init(spank_t sp, int ac, char **av) {
    return guarded("init", [&] {
        spank_context_t ctx = spank_context();
        if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
            return 0;
        const auto &specs = optionSpecs();
        for (std::size_t i = 0; i < specs.size(); ++i) {
            spank_option opt{};
            opt.name = const_cast<char *>(specs[i].name);
            opt.arginfo = const_cast<char *>(specs[i].arg);
            opt.has_arg = specs[i].arg ? 1 : 0;
            opt.val = static_cast<int>(i);
            opt.usage = const_cast<char *>(specs[i].usage);
            opt.cb = onOption;
            if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
                logError(std::string("cannot register --") + specs[i].name);
                return -1;
            }
        }
        auto site = parseSiteConfig(std::vector<std::string>(av, av + ac), STEPMAP_SERVER_PATH);
        if (!site) {
            logError(site.error().message);
            return -1;
        }
        state = new PluginState;
        state->context = ctx;
        if (ctx == S_CTX_LOCAL) {
            state->srun = std::make_unique<SrunSide>(site.value());
            return state->srun->init(sp);
        }
        if (ctx == S_CTX_REMOTE)
            state->stepd = std::make_unique<StepdSide>(site.value());
        return 0;
    });
}

__attribute__((visibility("default"))) int slurm_spank_init_post_opt(spank_t sp, int, char **) {
    return guarded("init_post_opt",
                   [&] { return state && state->srun ? state->srun->initPostOpt(sp) : 0; });
}

__attribute__((visibility("default"))) int slurm_spank_local_user_init(spank_t sp, int, char **) {
    return guarded("local_user_init",
                   [&] { return state && state->srun ? state->srun->localUserInit(sp) : 0; });
}

__attribute__((visibility("default"))) int slurm_spank_user_init(spank_t sp, int, char **) {
    return guarded("user_init",
                   [&] { return state && state->stepd ? state->stepd->userInit(sp) : 0; });
}

__attribute__((visibility("default"))) int slurm_spank_task_init(spank_t sp, int, char **) {
    return guarded("task_init",
                   [&] { return state && state->stepd ? state->stepd->taskInit(sp) : 0; });
}

__attribute__((visibility("default"))) int slurm_spank_task_exit(spank_t sp, int, char **) {
    return guarded("task_exit",
                   [&] { return state && state->stepd ? state->stepd->taskExit(sp) : 0; });
}

__attribute__((visibility("default"))) int slurm_spank_exit(spank_t sp, int, char **) {
    return guarded("exit", [&] {
        int rc = 0;
        if (state && state->srun)
            rc = state->srun->exit(sp);
        else if (state && state->stepd)
            rc = state->stepd->exit(sp);
        delete state;
        state = nullptr;
        return rc;
    });
}

} // extern "C"
