#include "srun/spawned_steps.hpp"

#include "hosts/allocation.hpp"
#include "job_variables.hpp"
#include "plugin_log.hpp"
#include "protocol/hub/job_ids.hpp"
#include "srun/job_allocation.hpp"
#include "srun/slurm_release.hpp"
#include "srun/spawn_command.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

extern char **environ;

namespace stepmap::plugin {

namespace {

// srun's own variables that would reshape the spawned srun (its input
// variables and this step's), and this step's stepmap ones.
bool inherited(const char *line) {
    static const char *const dropped[] = {"SLURM_NTASKS=",         "SLURM_NPROCS=",
                                          "SLURM_NNODES=",         "SLURM_NTASKS_PER_NODE=",
                                          "SLURM_TASKS_PER_NODE=", "SLURM_DISTRIBUTION=",
                                          "SLURM_CPU_BIND",        "SLURM_HOSTFILE=",
                                          "SLURM_OVERCOMMIT=",     "SLURM_EXACT=",
                                          "SLURM_EXCLUSIVE=",      "SLURM_OVERLAP=",
                                          "SLURM_STEP_",           "SLURM_STEPID=",
                                          "SLURM_STEPMAP_",        "SLURM_SPANK_",
                                          "_SLURM_SPANK_",         "SLURM_ARBITRARY_",
                                          "SLURM_CPUS_PER_TASK=",  "SLURM_MEM_PER_",
                                          "SLURM_IMMEDIATE="};
    for (const char *prefix : dropped)
        if (std::strncmp(line, prefix, std::strlen(prefix)) == 0)
            return false;
    return true;
}

// A rank's hostfile: a regular file of at most 1 MiB (not a FIFO that
// never ends, nor /dev/zero).
Expected<std::string> readUserFile(const std::string &path) {
    constexpr std::size_t kMaxBytes = 1u << 20;
    const int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return UserError{std::string("cannot be read: ") + std::strerror(errno)};
    struct stat st {};
    std::string text;
    std::string why;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        why = "is not a regular file";
    } else {
        char buffer[65536];
        for (;;) {
            const ssize_t got = read(fd, buffer, sizeof buffer);
            if (got < 0 && errno == EINTR)
                continue;
            if (got <= 0)
                break;
            text.append(buffer, static_cast<std::size_t>(got));
            if (text.size() > kMaxBytes) {
                why = "is over 1 MiB";
                break;
            }
        }
    }
    close(fd);
    if (!why.empty())
        return UserError{why};
    return text;
}

// The --multi-prog file of a spawn of several programs, private to the
// user; its path.
Expected<std::string> writeMultiProg(const std::string &text) {
    const char *tmp = std::getenv("TMPDIR");
    std::string path = std::string(tmp && tmp[0] == '/' ? tmp : "/tmp") + "/stepmap-spawn-XXXXXX";
    const int fd = mkstemp(path.data());
    if (fd < 0)
        return UserError{"cannot write the spawn's --multi-prog file " + path + ": " +
                         std::strerror(errno)};
    const bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    close(fd);
    if (!ok) {
        unlink(path.c_str());
        return UserError{"cannot write the spawn's --multi-prog file " + path};
    }
    return path;
}

std::string statusText(int status) {
    if (WIFEXITED(status))
        return "exit status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
        return std::string("signal ") + strsignal(WTERMSIG(status));
    return "status " + std::to_string(status);
}

} // namespace

void SpawnedSteps::setHub(hub::RendezvousHub *hub, std::string jobHub, std::string jobSecretHex) {
    std::lock_guard lock(mutex_);
    hub_ = hub;
    jobHub_ = std::move(jobHub);
    jobSecretHex_ = std::move(jobSecretHex);
}

std::map<std::string, int> SpawnedSteps::usedSlots() const {
    std::map<std::string, int> used;
    for (const auto &r : plan_->ranks)
        ++used[plan_->nodes[r.node].name];
    for (const auto &[index, child] : children_)
        if (child.running)
            for (const auto &[node, ranks] : child.ranksByNode)
                used[node] += ranks;
    return used;
}

void SpawnedSteps::start(std::uint32_t index, const wire::SpawnRequestMsg &request,
                         const std::string &spawnerPlan) {
    // Off the hub's thread: Slurm's answer about the job and a hostfile
    // take time the other steps' fences must not wait for.
    std::lock_guard lock(mutex_);
    if (closed_) {
        if (hub_)
            hub_->spawnFailed(index, "the spawning step has ended");
        return;
    }
    try {
        starters_.emplace_back(
            [this, index, request, spawnerPlan] { launch(index, request, spawnerPlan); });
    } catch (const std::exception &e) {
        if (hub_)
            hub_->spawnFailed(index, std::string("srun cannot start a thread: ") + e.what());
    }
}

void SpawnedSteps::launch(std::uint32_t index, const wire::SpawnRequestMsg &request,
                          const std::string &spawnerPlan) {
    std::string what;
    for (const auto &app : request.apps)
        what += (what.empty() ? "" : " + ") + std::to_string(app.maxprocs) + " x " + app.cmd;
    const auto fail = [&](const std::string &why) {
        logError("MPI_Comm_spawn of " + what + " failed: " + why);
        std::lock_guard lock(mutex_);
        if (hub_)
            hub_->spawnFailed(index, why);
    };
    auto granted = JobAllocation::lookup(jobId_);
    if (!granted) {
        fail("the job's allocation: " + granted.error().message);
        return;
    }
    auto allocation = allocationFromSlurm(granted->nodeList, granted->cpusPerNode);
    if (!allocation) {
        fail(allocation.error().message);
        return;
    }
    SpawnContext context;
    context.jobId = jobId_;
    context.allocation = std::move(allocation.value());
    context.srun = "/proc/self/exe";
    context.readFile = readUserFile;
    if (auto spawner = decodePlan(spawnerPlan, PlanLimits{.maxTextBytes = 256u << 20}))
        for (const auto &r : spawner->ranks)
            context.spawnerNodes.push_back(spawner->nodes[r.node].name);
    std::unique_lock lock(mutex_);
    if (closed_) {
        lock.unlock();
        fail("the spawning step has ended");
        return;
    }
    context.used = usedSlots();
    auto command = spawnCommand(request, context);
    if (!command) {
        lock.unlock();
        fail(command.error().message);
        return;
    }
    // srun itself, not a path a user could swap.
    char self[4096];
    const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    if (len <= 0) {
        lock.unlock();
        fail("cannot find srun's own executable");
        return;
    }
    command->argv[0].assign(self, static_cast<std::size_t>(len));
    // Several programs: srun reads them from a file of the user's (it
    // ships the text to the nodes), removed once srun ends.
    std::string multiProgPath;
    if (!command->multiProg.empty()) {
        auto written = writeMultiProg(command->multiProg);
        if (!written) {
            lock.unlock();
            fail(written.error().message);
            return;
        }
        multiProgPath = written.value();
        std::replace(command->argv.begin(), command->argv.end(), std::string(kMultiProgFile),
                     multiProgPath);
    }

    // The step's own variables first (the first of a name is the one
    // read), then the caller's additions over srun's environment.
    std::vector<std::string> env = {
        std::string("SLURM_JOB_ID=") + std::to_string(jobId_),
        std::string(kJobHubVariable) + "=" + jobHub_,
        std::string(kJobSecretVariable) + "=" +
            hub::guestKeyHex(wire::decodeSecretHex(jobSecretHex_).value_or(""), index),
        std::string(kJobStepVariable) + "=" + std::to_string(index),
        std::string(kSpawnParentVariable) + "=" + request.parentNspace + ":" +
            std::to_string(hub::localOf(request.rank))};
    std::set<std::string> added;
    for (const auto &line : command->environment)
        if (inherited(line.c_str()) && added.insert(line.substr(0, line.find('='))).second)
            env.push_back(line);
    for (char **e = environ; e && *e; ++e) {
        const std::string line = *e;
        if (inherited(*e) && !added.count(line.substr(0, line.find('='))))
            env.push_back(line);
    }
    std::vector<char *> argv, envp;
    for (auto &a : command->argv)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto &e : env)
        envp.push_back(e.data());
    envp.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    // srun with every signal as a fresh process has it (this thread blocks
    // some): it must take SIGTERM to end its step.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        if (!multiProgPath.empty())
            unlink(multiProgPath.c_str());
        lock.unlock();
        fail(std::string("cannot start srun: ") + std::strerror(rc));
        return;
    }
    logVerbose("spawn: " + command->summary);
    Child &child = children_[index];
    child.pid = pid;
    child.summary = command->summary;
    child.multiProgPath = multiProgPath;
    try {
        child.waiter = std::thread([this, index, pid] { wait(index, pid); });
    } catch (const std::exception &e) {
        // Nobody would watch it: it goes at once.
        kill(pid, SIGKILL);
        while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        if (!multiProgPath.empty())
            unlink(multiProgPath.c_str());
        children_.erase(index);
        lock.unlock();
        fail(std::string("srun cannot start a thread: ") + e.what());
    }
}

void SpawnedSteps::wait(std::uint32_t index, pid_t pid) {
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::seconds(timeoutSec_);
    std::optional<Clock::time_point> killAt; // once it timed out
    int status = 0;
    // Until the processes started, watched for the deadline; then waited
    // for. It exits without being reaped (WNOWAIT): its pid stays its own
    // until it is marked ended below, so endAll never signals another.
    for (;;) {
        siginfo_t info{};
        const int got = waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT);
        if ((got == 0 && info.si_pid == pid) || (got < 0 && errno != EINTR))
            break;
        bool watching;
        {
            std::lock_guard lock(mutex_);
            watching = children_[index].stepTag.empty();
        }
        if (!watching && !killAt) {
            while (waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 &&
                   errno == EINTR) {
            }
            break;
        }
        const auto now = Clock::now();
        if (!killAt && now >= deadline) {
            // srun passes SIGTERM to the processes and ends with them.
            kill(pid, SIGTERM);
            killAt = now + std::chrono::seconds(5);
        } else if (killAt && now >= *killAt) {
            kill(pid, SIGKILL);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::unique_lock lock(mutex_);
    Child &child = children_[index];
    child.running = false;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!child.multiProgPath.empty())
        unlink(child.multiProgPath.c_str());
    const bool started = !child.stepTag.empty();
    const std::string summary = child.summary;
    const bool ending = ending_;
    ended_.notify_all();
    const std::string why = killAt ? "the spawned processes (" + summary +
                                         ") did not all call MPI_Init (PMIx_Init) "
                                         "within " +
                                         std::to_string(timeoutSec_) +
                                         " s (plugstack.conf's spawn_timeout=); "
                                         "they were ended"
                                   : "the srun of the spawned processes (" + summary +
                                         ") ended with " + statusText(status) +
                                         " before they all called MPI_Init (PMIx_Init)";
    if (!started && hub_)
        hub_->spawnFailed(index, why);
    // Its ranks failed or aborted: the steps still connected to it end.
    if (started && status != 0 && hub_ && !ending)
        hub_->spawnedStepFailed(index, "spawned step " + child.stepTag + " (" + summary +
                                           ") ended with " + statusText(status));
    lock.unlock();
    if (!started) {
        if (!ending)
            logError("MPI_Comm_spawn failed: " + why);
    } else if (status != 0 && !ending) {
        logError("spawned step (" + summary + ") ended with " + statusText(status));
    }
}

void SpawnedSteps::started(std::uint32_t index, const std::string &stepTag,
                           const std::string &plan) {
    auto decoded = decodePlan(plan, PlanLimits{.maxTextBytes = 256u << 20});
    std::lock_guard lock(mutex_);
    auto it = children_.find(index);
    unsigned long long job = 0, step = 0;
    char tail = 0;
    // The tag names a step of this job (it is what endAll ends).
    if (it == children_.end() ||
        std::sscanf(stepTag.c_str(), "%llu.%llu%c", &job, &step, &tail) != 2 || job != jobId_)
        return;
    it->second.stepTag = stepTag;
    if (decoded)
        for (const auto &r : decoded->ranks)
            ++it->second.ranksByNode[decoded->nodes[r.node].name];
    logVerbose("spawned step " + stepTag + ": " + it->second.summary);
}

void SpawnedSteps::awaitAll() {
    std::unique_lock lock(mutex_);
    closed_ = true; // new spawns fail; those under way are still answered
    std::size_t running = 0;
    for (auto &[index, child] : children_)
        running += child.running ? 1 : 0;
    if (running)
        logVerbose("waiting for " + std::to_string(running) +
                   " spawned step(s) to end (MPI_Comm_spawn)");
    ended_.wait(lock, [this] {
        for (auto &[index, child] : children_)
            if (child.running)
                return false;
        return true;
    });
    lock.unlock();
    endAll();
}

void SpawnedSteps::endAll() {
    std::unique_lock lock(mutex_);
    closed_ = true;
    ending_ = true;
    hub_ = nullptr;
    // A spawn being started sees closed_ before it starts anything.
    std::vector<std::thread> starters = std::move(starters_);
    starters_.clear();
    lock.unlock();
    for (auto &t : starters)
        t.join();
    lock.lock();
    for (auto &[index, child] : children_) {
        if (!child.running)
            continue;
        unsigned long long job = 0, step = 0;
        if (std::sscanf(child.stepTag.c_str(), "%llu.%llu", &job, &step) == 2)
            slurm_release::killJobStep(static_cast<std::uint32_t>(job),
                                       static_cast<std::uint32_t>(step), SIGKILL);
        kill(child.pid, SIGTERM);
    }
    const auto allEnded = [this] {
        for (auto &[index, child] : children_)
            if (child.running)
                return false;
        return true;
    };
    if (!ended_.wait_for(lock, std::chrono::seconds(10), allEnded))
        for (auto &[index, child] : children_)
            if (child.running)
                kill(child.pid, SIGKILL);
    ended_.wait(lock, allEnded);
    std::vector<std::thread> waiters;
    for (auto &[index, child] : children_)
        if (child.waiter.joinable())
            waiters.push_back(std::move(child.waiter));
    lock.unlock();
    for (auto &t : waiters)
        t.join();
}

SpawnedSteps::~SpawnedSteps() {
    endAll();
}

} // namespace stepmap::plugin
