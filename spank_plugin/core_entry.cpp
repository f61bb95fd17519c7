// The plugin proper's entry points (stepmap_core.so), called by stepmap.so
// (stepmap_entry.cpp) for steps stepmap serves: each dispatches on the
// context to the srun side or the slurmstepd side and catches everything,
// so that no exception reaches Slurm.

#include "core_interface.hpp"
#include "options.hpp"
#include "plugin_log.hpp"
#include "site_config.hpp"
#include "srun/srun_side.hpp"
#include "stepd/stepd_side.hpp"

#include <iterator>
#include <memory>
#include <type_traits>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

// Created by stepmap_core_init, destroyed by the exit hook: nothing with a
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

int initState(spank_t sp, int ac, char **av, spank_context_t ctx) {
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
    if (ctx == S_CTX_REMOTE) {
        state->stepd = std::make_unique<StepdSide>(site.value());
        return state->stepd->init(sp);
    }
    return 0;
}

int onOption(int val, const char *arg, int remote) {
    if (val < 0 || val >= kOptionCount)
        return -1;
    std::string name = kOptionSpecs[val].name;
    std::string value = arg ? arg : "";
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
}

int exitHook(spank_t sp) {
    int rc = 0;
    if (state && state->srun)
        rc = state->srun->exit(sp);
    else if (state && state->stepd)
        rc = state->stepd->exit(sp);
    delete state;
    state = nullptr;
    return rc;
}

int hook(int which, spank_t sp) {
    if (!state)
        return 0;
    SrunSide *srun = state->srun.get();
    StepdSide *stepd = state->stepd.get();
    switch (which) {
    case kHookInitPostOpt:
        return srun ? srun->initPostOpt(sp) : 0;
    case kHookLocalUserInit:
        return srun ? srun->localUserInit(sp) : 0;
    case kHookUserInit:
        return stepd ? stepd->userInit(sp) : 0;
    case kHookTaskPostFork:
        return stepd ? stepd->taskPostFork(sp) : 0;
    case kHookTaskInit:
        return stepd ? stepd->taskInit(sp) : 0;
    case kHookTaskExit:
        return stepd ? stepd->taskExit(sp) : 0;
    case kHookExit:
        return exitHook(sp);
    default:
        return -1;
    }
}

const char *hookName(int which) {
    static const char *const names[] = {
        "init_post_opt", "local_user_init", "user_init", "task_post_fork",
        "task_init",     "task_exit",       "exit"};
    static_assert(std::size(names) == kHookExit + 1);
    return which >= 0 && which <= kHookExit ? names[which] : "hook";
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int stepmap_core_init(spank_t sp, int ac, char **av,
                                                             spank_context_t ctx) {
    return guarded("init", [&] { return initState(sp, ac, av, ctx); });
}

__attribute__((visibility("default"))) int stepmap_core_option(int val, const char *arg,
                                                               int remote) {
    return guarded("option", [&] { return onOption(val, arg, remote); });
}

__attribute__((visibility("default"))) int stepmap_core_hook(int which, spank_t sp, int, char **) {
    return guarded(hookName(which), [&] { return hook(which, sp); });
}

} // extern "C"

// The entry calls them through these types (core_interface.hpp).
static_assert(std::is_same_v<decltype(&stepmap_core_init), StepmapCoreInit>);
static_assert(std::is_same_v<decltype(&stepmap_core_option), StepmapCoreOption>);
static_assert(std::is_same_v<decltype(&stepmap_core_hook), StepmapCoreHookCall>);
