#include "srun/apply_to_srun.hpp"

#include "job_variables.hpp"
#include "modex/modex_mode.hpp"
#include "plugin_log.hpp"
#include "profile/profile_subset.hpp"
#include "profile/profile_yaml.hpp"
#include "slurm_release.hpp"
#include "srun/step_environment.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stepmap::plugin {

namespace {

// "<pid>:<host file fd>:<plan ms>:<allocation ms>:<job>:<watcher fd>" (job
// 0: none). The pid makes sure it is this process's, not inherited.
constexpr const char *kReexecVariable = "STEPMAP_SRUN_REEXEC";

} // namespace

Expected<os::UniqueFd> writeHostfile(const LaunchPlan &plan) {
    os::UniqueFd hostfile(memfd_create("stepmap-hostfile", MFD_CLOEXEC));
    if (!hostfile)
        return UserError{std::string("cannot create the step's host file: ") +
                         std::strerror(errno)};
    const int fd = hostfile.get();
    std::string lines;
    for (auto &r : plan.ranks)
        lines += plan.nodes[r.node].name + "\n";
    if (write(fd, lines.data(), lines.size()) != static_cast<ssize_t>(lines.size()))
        return UserError{"cannot write the step's host file"};
    lseek(fd, 0, SEEK_SET);
    return hostfile;
}

Expected<void> exportPlan(const LaunchPlan &plan, const PlanRequest &request,
                          const os::UniqueFd &hostfile) {
    const std::string path = "/proc/self/fd/" + std::to_string(hostfile.get());
    auto changes = planEnvironment(plan, request, path, slurm_release::cpusPerTaskVariable());
    if (!changes)
        return changes.error();
    applyToEnvironment(changes.value());
    return {};
}

Expected<void> exportModex(const std::optional<std::string> &modexOption, const SiteConfig &site,
                           const LaunchPlan &plan) {
    auto mode = modex::ModexMode::Fence;
    // --modex (or sbatch's), else the site's default.
    if (modexOption || site.policy.modex) {
        const std::string source =
            modexOption ? "--modex" : "defaults.modex in " + site.policy.path;
        auto parsed =
            modex::parseModexMode(modexOption.value_or(site.policy.modex.value_or("")), source);
        if (!parsed)
            return parsed.error();
        mode = *parsed;
    }
    const bool needed = mode == modex::ModexMode::Profile;
    // With its port range: every node must pin the same ports.
    if (mode != modex::ModexMode::Fence)
        setenv(kModexVariable,
               (std::string(modex::modexModeName(mode)) + ":" + site.modexPorts).c_str(), 1);
    if (site.profile.empty()) {
        if (needed)
            return UserError{"--modex=profile needs the site's interconnect profile, and "
                             "plugstack.conf names none (profile=FILE, made with stepmap-profile "
                             "make); use --modex=async"};
        return {};
    }
    auto unusable = [&](const std::string &why) -> Expected<void> {
        if (needed)
            return UserError{"--modex=profile cannot use the site's interconnect profile: " + why +
                             "; use --modex=async, or ask the site to update the profile"};
        logVerbose("not serving the site's interconnect profile: " + why);
        return {};
    };
    auto profile = topology::readProfileFile(site.profile);
    if (!profile) {
        // A broken site file is the site's to fix: said on every srun, not
        // only with -v (a node without an entry is no fault).
        if (needed)
            return unusable(profile.error().message);
        logInfo("not serving the site's interconnect profile: " + profile.error().message);
        return {};
    }
    std::vector<std::string> names;
    for (const auto &node : plan.nodes)
        names.push_back(node.name);
    const topology::Profile ours = topology::profileOfNodes(*profile, names);
    if (ours.nodes.empty())
        return unusable(site.profile + " has no entry for the step's nodes");
    const std::string text = topology::writeProfileYaml(ours);
    // In pieces (job_variables.hpp), and within what srun's own re-exec and
    // slurmstepd's start of the server can carry.
    const std::size_t most = std::min(std::size(kProfileVariables) * kProfilePieceBytes,
                                      static_cast<std::size_t>(sysconf(_SC_ARG_MAX)) / 2);
    if (text.size() > most)
        return unusable("the entries of the step's " + std::to_string(ours.nodes.size()) +
                        " nodes take " + std::to_string(text.size()) + " bytes, more than the " +
                        std::to_string(most) + " the job environment can carry");
    for (std::size_t at = 0, piece = 0; at < text.size(); at += kProfilePieceBytes, ++piece)
        setenv(kProfileVariables[piece], text.substr(at, kProfilePieceBytes).c_str(), 1);
    return {};
}

UserError reexecute(const std::vector<std::string> &args, const os::UniqueFd &hostfile,
                    double planMs, double allocationMs, JobAllocation *job) {
    int flags = fcntl(hostfile.get(), F_GETFD);
    fcntl(hostfile.get(), F_SETFD, flags & ~FD_CLOEXEC);
    int watcher = job ? job->keepAcrossExec() : -1;
    char value[128];
    std::snprintf(value, sizeof value, "%ld:%d:%.3f:%.3f:%lu:%d", static_cast<long>(getpid()),
                  hostfile.get(), planMs, allocationMs,
                  static_cast<unsigned long>(job ? job->jobId() : 0), watcher);
    setenv(kReexecVariable, value, 1);
    std::vector<char *> argv;
    static char srunName[] = "srun";
    argv.push_back(srunName);
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    std::fflush(nullptr);
    // By its real path: the process keeps the name "srun" (pkill, killall,
    // ps -C see it as before); /proc/self/exe only if that is gone.
    char self[4096];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len > 0) {
        self[len] = '\0';
        execv(self, argv.data());
    }
    execv("/proc/self/exe", argv.data());
    return UserError{std::string("cannot restart srun without its -N/-w/-x options: ") +
                     std::strerror(errno)};
}

std::optional<Reexec> takeReexec() {
    const char *value = std::getenv(kReexecVariable);
    if (!value)
        return std::nullopt;
    std::string text = value;
    unsetenv(kReexecVariable);
    unsigned long pid = 0, job = 0;
    Reexec r;
    if (std::sscanf(text.c_str(), "%lu:%d:%lf:%lf:%lu:%d", &pid, &r.hostfileFd, &r.planMs,
                    &r.allocationMs, &job, &r.watcherFd) != 6 ||
        pid != static_cast<unsigned long>(getpid()) || r.hostfileFd < 3)
        return std::nullopt;
    r.job = static_cast<std::uint32_t>(job);
    return r;
}

} // namespace stepmap::plugin
