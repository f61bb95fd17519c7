#include "srun/apply_to_srun.hpp"

#include "job_variables.hpp"
#include "plugin_log.hpp"
#include "pmix_request.hpp"
#include "profile/profile_yaml.hpp"
#include "srun/modex_environment.hpp"
#include "srun/slurm_release.hpp"
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
    const std::string lines = hostfileText(plan);
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

Expected<void> exportModex(const std::optional<std::string> &modex, const SiteConfig &site,
                           const LaunchPlan &plan) {
    std::vector<std::string> names;
    for (const auto &node : plan.nodes)
        names.push_back(node.name);
    auto settings = modexEnvironment(modex, site, names, topology::readProfileFile,
                                     static_cast<std::size_t>(sysconf(_SC_ARG_MAX)) / 2);
    if (!settings)
        return settings.error();
    applyToEnvironment(settings->changes);
    for (const std::string &line : settings->info)
        logInfo(line);
    for (const std::string &line : settings->verbose)
        logVerbose(line);
    return {};
}

Expected<os::UniqueFd> applyPlan(const LaunchPlan &plan, const PlanRequest &request,
                                 const std::optional<std::string> &modex, const SiteConfig &site) {
    auto hostfile = writeHostfile(plan);
    if (!hostfile)
        return hostfile;
    if (auto exported = exportPlan(plan, request, hostfile.value()); !exported)
        return exported.error();
    if (auto exported = exportModex(modex, site, plan); !exported)
        return exported.error();
    return hostfile;
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

std::optional<UserError> reexecuteWithoutLayout(const SrunInput &input,
                                                const os::UniqueFd &hostfile, double planMs,
                                                double allocationMs, JobAllocation *job) {
    std::vector<SrunOptionRole> replaced = {SrunOptionRole::StepNodes,
                                            SrunOptionRole::TasksPerNode};
    if (input.cmd.mpi && isPmixType(input.cmd.mpi->c_str()))
        replaced.push_back(SrunOptionRole::MpiType); // the site serves it (refuseLayoutOptions)
    std::vector<std::string> rest = argumentsWithout(input.args, input.cmd, replaced);
    if (rest == input.args)
        return std::nullopt;
    return reexecute(rest, hostfile, planMs, allocationMs, job);
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
