// stepmap.so, what plugstack.conf names and Slurm loads in every srun,
// salloc, sbatch and slurmstepd. It registers the options and decides
// whether stepmap serves this step; only then does it load the plugin proper
// (stepmap_core.so, from this object's own directory) and forward every hook
// to it. A step stepmap does not serve loads nothing else: this object needs
// only libc (no C++ runtime, libcrypto or libuv, which cost a few
// milliseconds per process to load, on every node of every step).
//
// Written without the C++ library or exceptions on purpose; the linker drops
// libstdc++ from its dependencies (checked by tests/integration).

#include "core_interface.hpp"
#include "job_variables.hpp"
#include "option_table.hpp"
#include "pmix_request.hpp"
#include "site/serve_line.hpp"
#include "site_keys.hpp"
#include "slurmd/topology_cache_writer.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern "C" {
extern const char plugin_name[] __attribute__((visibility("default"))) = "stepmap";
extern const char plugin_type[] __attribute__((visibility("default"))) = "spank";
extern const unsigned int plugin_version __attribute__((visibility("default"))) =
    SLURM_VERSION_NUMBER;
}

#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 5, 0)
// A failed slurm_spank_init in slurmstepd (e.g. a bad plugstack argument)
// fails the job instead of draining the node. Slurm reads it by name from
// the object it loaded, so here and not in the plugin proper.
extern "C" {
__attribute__((visibility("default"))) int slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE;
}
#endif

extern char **environ;

using namespace stepmap::plugin;

namespace {

// Plain data only: this object may be dlclose'd.
struct Core {
    void *handle;
    StepmapCoreInit init;
    StepmapCoreOption option;
    StepmapCoreHookCall hook;
    bool failed;
};
Core core;
spank_context_t context = S_CTX_ERROR;
// plugstack.conf's arguments, which Slurm keeps for the plugin's lifetime:
// an allocator loads the plugin proper from an option's callback.
int pluginArgc;
char **pluginArgv;

bool startsWith(const char *text, const char *prefix) {
    return strncmp(text, prefix, strlen(prefix)) == 0;
}

// The plugin proper's path: this object's directory + kCoreFileName.
bool corePath(char (&path)[PATH_MAX]) {
    Dl_info info{};
    if (!dladdr(reinterpret_cast<void *>(&corePath), &info) || !info.dli_fname)
        return false;
    const char *slash = strrchr(info.dli_fname, '/');
    const size_t dir = slash ? static_cast<size_t>(slash - info.dli_fname) + 1 : 0;
    if (dir + strlen(kCoreFileName) + 1 > sizeof path)
        return false;
    memcpy(path, info.dli_fname, dir);
    strcpy(path + dir, kCoreFileName);
    return true;
}

// Loads the plugin proper once and runs its init; false (logged) if that
// fails, and every later attempt fails the same way.
bool loadCore(spank_t sp, int ac, char **av) {
    if (core.handle)
        return true;
    if (core.failed)
        return false;
    core.failed = true;
    char path[PATH_MAX];
    if (!corePath(path)) {
        slurm_error("stepmap: cannot find %s next to stepmap.so", kCoreFileName);
        return false;
    }
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        slurm_error("stepmap: cannot load %s: %s", path, dlerror());
        return false;
    }
    core.init = reinterpret_cast<StepmapCoreInit>(dlsym(handle, "stepmap_core_init"));
    core.option = reinterpret_cast<StepmapCoreOption>(dlsym(handle, "stepmap_core_option"));
    core.hook = reinterpret_cast<StepmapCoreHookCall>(dlsym(handle, "stepmap_core_hook"));
    if (!core.init || !core.option || !core.hook) {
        slurm_error("stepmap: %s is not stepmap's plugin (or not of this version)", path);
        return false;
    }
    core.handle = handle;
    if (core.init(sp, ac, av, context) != 0)
        return false;
    core.failed = false;
    return true;
}

// Whether an argument of srun may be one of stepmap's options: "--NAME" or
// "--NAME=..." with NAME a prefix of an option's name (getopt_long accepts
// unambiguous abbreviations). Cheap and generous: a false alarm only loads
// the plugin proper, which reads the command line exactly.
bool mayBeOurOption(const char *arg) {
    if (!startsWith(arg, "--") || !arg[2])
        return false;
    const char *name = arg + 2;
    const char *eq = strchr(name, '=');
    const size_t length = eq ? static_cast<size_t>(eq - name) : strlen(name);
    for (const OptionSpec &spec : kOptionSpecs) {
        if (length && length <= strlen(spec.name) && strncmp(spec.name, name, length) == 0)
            return true;
    }
    return false;
}

// What srun's command line says, read cheaply: whether an argument may be
// one of stepmap's options, and whether one mentions PMIx (--mpi=pmix...).
struct CommandLineHints {
    bool ours;
    bool pmix;
};

CommandLineHints readCommandLineHints() {
    FILE *f = fopen("/proc/self/cmdline", "re");
    if (!f)
        return {true, true}; // cannot tell: let the plugin proper look
    char arg[4096];
    size_t n = 0;
    CommandLineHints hints{false, false};
    for (int c; !hints.ours && (c = getc(f)) != EOF;) {
        if (c != '\0') {
            if (n + 1 < sizeof arg)
                arg[n++] = static_cast<char>(c);
            continue;
        }
        arg[n] = '\0';
        hints.ours = mayBeOurOption(arg);
        hints.pmix = hints.pmix || strstr(arg, "pmix") != nullptr;
        n = 0;
    }
    fclose(f);
    return hints;
}

// The site file's `serve:` line (stepmap.yaml(5); plugstack.conf's
// config=FILE), read without a YAML parser: the plugin proper reads the
// whole file, and refuses a `serve:` this reading could get wrong. A file
// that cannot be read here is unclear: the plugin proper then says why.
// plugstack.conf's config=FILE, or nullptr.
const char *siteFile(int ac, char **av) {
    const char *path = nullptr;
    for (int i = 0; i < ac; ++i)
        if (startsWith(av[i], "config="))
            path = av[i] + strlen("config=");
    return path;
}

ServeHint siteServeHint(const char *path) {
    const int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return kServeUnclear;
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return kServeUnclear;
    }
    static char text[kMaxSitePolicyBytes];
    size_t length = 0;
    ssize_t got = 0;
    while (length < sizeof text && (got = read(fd, text + length, sizeof text - length)) > 0)
        length += static_cast<size_t>(got);
    close(fd);
    return got < 0 ? kServeUnclear : serveHint(text, length);
}

// What engages stepmap in srun besides its options (srun/served_decision.cpp): options
// forwarded by salloc/sbatch, ParaStation's PSI_* variables, what a stepmap
// step hands its tasks (an srun inside one clears it), srun's restart.
bool environmentMayUseStepmap() {
    for (char **e = environ; e && *e; ++e) {
        if (startsWith(*e, "SLURM_SPANK__SLURM_SPANK_OPTION_stepmap_") || startsWith(*e, "PSI_") ||
            startsWith(*e, "SLURM_STEPMAP_") || startsWith(*e, "STEPMAP_SRUN_REEXEC="))
            return true;
    }
    return false;
}

// slurmstepd: the step is stepmap's when srun handed it a plan.
bool stepHasPlan(spank_t sp) {
    char probe[1];
    return spank_getenv(sp, kPlanVariable, probe, sizeof probe) != ESPANK_ENV_NOEXIST;
}

int onOption(int val, const char *arg, int remote) {
    if (!core.handle) {
        if (remote)
            return 0;
        // An allocator's option (salloc, sbatch) is checked by the plugin
        // proper; so is one srun's command line scan missed.
        if (!loadCore(nullptr, pluginArgc, pluginArgv))
            return -1;
    }
    return core.option(val, arg, remote);
}

int registerOptions(spank_t sp) {
    for (int i = 0; i < kOptionCount; ++i) {
        spank_option opt{};
        opt.name = const_cast<char *>(kOptionSpecs[i].name);
        opt.arginfo = const_cast<char *>(kOptionSpecs[i].arg);
        // 2: getopt_long's optional_argument, which Slurm hands to getopt_long
        // as it is on every release 22.05-26.05 (spank(7) documents it); a
        // bare option's value reaches onOption as NULL, and sbatch/salloc
        // forward it as "(null)". Only Slurm built with --enable-developer
        // (asserts on) aborts on the NULL from 25.11, as it aborts on every
        // flag before 25.11 (_do_option_cb's xassert).
        opt.has_arg = !kOptionSpecs[i].arg ? 0 : kOptionSpecs[i].valueOptional ? 2 : 1;
        opt.val = i;
        opt.usage = const_cast<char *>(kOptionSpecs[i].usage);
        opt.cb = onOption;
        if (spank_option_register(sp, &opt) != ESPANK_SUCCESS) {
            slurm_error("stepmap: cannot register --%s", kOptionSpecs[i].name);
            return -1;
        }
    }
    return 0;
}

// Every plugstack.conf argument is a known key=value (site_keys.hpp); the
// plugin proper checks the values when it loads. Logged as it would log.
bool siteArgumentsKnown(int ac, char **av) {
    for (int i = 0; i < ac; ++i) {
        const char *eq = strchr(av[i], '=');
        if (!eq) {
            slurm_error("stepmap: plugstack.conf argument '%s' is not key=value", av[i]);
            return false;
        }
        const size_t length = static_cast<size_t>(eq - av[i]);
        bool known = false;
        for (const char *key : kSiteKeys)
            known = known || (strlen(key) == length && strncmp(key, av[i], length) == 0);
        if (!known) {
            slurm_error("stepmap: unknown plugstack.conf argument '%.*s' (value '%s'); known: %s",
                        static_cast<int>(length), av[i], eq + 1, kSiteKeyList);
            return false;
        }
    }
    return true;
}

int forward(int which, spank_t sp, int ac, char **av) {
    return core.handle ? core.hook(which, sp, ac, av) : 0;
}

} // namespace

extern "C" {

__attribute__((visibility("default"))) int slurm_spank_init(spank_t sp, int ac, char **av) {
    context = spank_context();
    pluginArgc = ac;
    pluginArgv = av;
    if (context == S_CTX_SLURMD) {
        if (siteArgumentsKnown(ac, av))
            writeTopologyCacheFromSlurmd(ac, av);
        return 0; // slurmd starts whatever the cache did
    }
    if (context != S_CTX_LOCAL && context != S_CTX_REMOTE && context != S_CTX_ALLOCATOR)
        return 0;
    if (!siteArgumentsKnown(ac, av))
        return -1;
    if (registerOptions(sp) != 0)
        return -1;
    bool serve = false;
    if (context == S_CTX_LOCAL) {
        const CommandLineHints hints = readCommandLineHints();
        serve = hints.ours || environmentMayUseStepmap();
        // A site that serves every PMIx step (serve: pmix): the plugin
        // proper decides exactly whether this one asks for PMIx.
        // Without a site file nothing more is looked at.
        const char *site = serve ? nullptr : siteFile(ac, av);
        if (site &&
            (hints.pmix || isPmixType(getenv("SLURM_MPI_TYPE")) || isPmixType(slurmMpiDefault())))
            serve = siteServeHint(site) != kServeOptions;
    } else if (context == S_CTX_REMOTE)
        serve = stepHasPlan(sp);
    if (serve && !loadCore(sp, ac, av))
        return -1;
    return 0;
}

__attribute__((visibility("default"))) int slurm_spank_init_post_opt(spank_t sp, int ac,
                                                                     char **av) {
    return forward(kHookInitPostOpt, sp, ac, av);
}

__attribute__((visibility("default"))) int slurm_spank_local_user_init(spank_t sp, int ac,
                                                                       char **av) {
    return forward(kHookLocalUserInit, sp, ac, av);
}

__attribute__((visibility("default"))) int slurm_spank_user_init(spank_t sp, int ac, char **av) {
    return forward(kHookUserInit, sp, ac, av);
}

__attribute__((visibility("default"))) int slurm_spank_task_post_fork(spank_t sp, int ac,
                                                                      char **av) {
    return forward(kHookTaskPostFork, sp, ac, av);
}

__attribute__((visibility("default"))) int slurm_spank_task_init(spank_t sp, int ac, char **av) {
    return forward(kHookTaskInit, sp, ac, av);
}

__attribute__((visibility("default"))) int slurm_spank_task_exit(spank_t sp, int ac, char **av) {
    return forward(kHookTaskExit, sp, ac, av);
}

// The plugin proper stays mapped: its libraries (OpenSSL, libuv) are not
// made to be unloaded, and the process ends soon after.
__attribute__((visibility("default"))) int slurm_spank_exit(spank_t sp, int ac, char **av) {
    return forward(kHookExit, sp, ac, av);
}

} // extern "C"
