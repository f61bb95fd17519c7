#include "srun/job_allocation.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "hosts/hostlist.hpp"
#include "plugin_log.hpp"
#include "srun/slurm_release.hpp"

extern "C" {
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
}

namespace stepmap::plugin {

namespace {

// The pipe's messages: "J<id>\n" once the job id is known, "R\n" once srun
// released the job itself.
bool tell(int fd, const std::string &message) {
    if (fd < 0)
        return false;
    return write(fd, message.data(), message.size()) == static_cast<ssize_t>(message.size());
}

// The watcher: reads the pipe until srun's end closes it; if srun named a
// job and did not release it, cancels it. Runs as the user (srun's own
// rights); never returns.
[[noreturn]] void watch(int readFd) {
    // Out of the terminal's process group and deaf to its signals: a Ctrl-C
    // that kills srun must leave the watcher to clean up.
    setpgid(0, 0);
    // Its own name: `pkill srun` or `killall srun` must not take it too.
    prctl(PR_SET_NAME, "stepmap-watch", 0, 0, 0);
    for (int sig : {SIGINT, SIGQUIT, SIGHUP, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE})
        signal(sig, SIG_IGN);
    // Only the pipe stays open (as fd 3): the watcher must not hold srun's
    // output pipes or terminal, so that readers see their end with srun's.
    if (readFd != 3) {
        dup2(readFd, 3);
        readFd = 3;
    }
    int devnull = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd)
        if (devnull >= 0)
            dup2(devnull, fd);
    if (close_range(4, ~0U, 0) != 0) {
        rlimit lim{};
        int top = getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur < 65536
                      ? static_cast<int>(lim.rlim_cur)
                      : 65536;
        for (int fd = 4; fd < top; ++fd)
            close(fd);
    }
    std::uint32_t job = 0;
    bool released = false;
    std::string buffer;
    char chunk[64];
    for (;;) {
        ssize_t n = read(readFd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        buffer.append(chunk, static_cast<std::size_t>(n));
        if (buffer.size() > 4096)
            break;
        std::size_t nl;
        while ((nl = buffer.find('\n')) != std::string::npos) {
            std::string line = buffer.substr(0, nl);
            buffer.erase(0, nl + 1);
            if (line == "R")
                released = true;
            else if (line.size() > 1 && line[0] == 'J')
                job = static_cast<std::uint32_t>(std::strtoul(line.c_str() + 1, nullptr, 10));
        }
    }
    if (job && !released)
        slurm_release::killJob(job, SIGKILL);
    _exit(0);
}

// Starts the watcher (double fork: srun never waits for it) and returns the
// write end of its pipe, close-on-exec.
os::UniqueFd startWatcher() {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return {};
    os::UniqueFd readEnd(fds[0]), writeEnd(fds[1]);
    pid_t child = fork();
    if (child < 0)
        return {};
    if (child == 0) {
        writeEnd.reset();
        if (fork() == 0)
            watch(readEnd.get());
        _exit(0);
    }
    readEnd.reset();
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    return writeEnd;
}

// The allocation request in progress, for the pending callback (a plain C
// function pointer) and the signal handler.
int gPendingWatcherFd = -1;
volatile sig_atomic_t gInterrupted = 0;

void onPending(std::uint32_t job) {
    tell(gPendingWatcherFd, "J" + std::to_string(job) + "\n");
}

void onSignalWhileWaiting(int) {
    // libslurm's wait returns on EINTR and cancels the pending job itself.
    gInterrupted = 1;
}

// As srun after its allocation: wait until the job's nodes are up and its
// prolog has run (with PrologFlags=Alloc or Contain the prolog makes the
// job's namespace, which a step joins). Returns an error when Slurm revoked
// the job, or when a signal (gInterrupted) ends the wait.
Expected<void> waitNodesReady(std::uint32_t job) {
    for (int i = 0;; ++i) {
        if (i > 0) {
            // First retry soon; then as srun, 0.1 s longer each time (at most 1 s).
            const long ms = i == 1 ? 10 : std::min(100L * i, 1000L);
            timespec ts{ms / 1000, (ms % 1000) * 1000000L};
            nanosleep(&ts, nullptr);
        }
        if (gInterrupted)
            return UserError{"interrupted while waiting for job " + std::to_string(job) +
                             "'s nodes"};
        const int rc = slurm_release::jobNodeReady(job);
        if (rc == READY_JOB_FATAL)
            return UserError{"Slurm cannot say whether job " + std::to_string(job) +
                             "'s nodes are ready: " + slurm_strerror(slurm_release::lastError())};
        if (rc == READY_JOB_ERROR || rc == EAGAIN) {
            // Also while the prolog runs. srun learns of a job that ends
            // meanwhile (a failed prolog) from slurmctld's message to it;
            // stepmap asks now and then.
            if (i % 5 == 4) {
                resource_allocation_response_msg_t *alive = slurm_release::lookupAllocation(job);
                if (!alive)
                    return UserError{"Slurm ended job " + std::to_string(job) +
                                     " before it started (" +
                                     slurm_strerror(slurm_release::lastError()) +
                                     "; a node or its prolog failed?)"};
                slurm_free_resource_allocation_response_msg(alive);
            }
            continue;
        }
        if ((rc & READY_JOB_STATE) == 0)
            return UserError{"Slurm revoked job " + std::to_string(job) +
                             " before it started (a node or its prolog failed; see "
                             "`scontrol show job " +
                             std::to_string(job) + "`)"};
        if ((rc & READY_NODE_STATE) && (rc & READY_PROLOG_STATE))
            return {};
    }
}

std::string cpusPerNodeText(const resource_allocation_response_msg_t &r) {
    std::string out;
    for (std::uint32_t i = 0; i < r.num_cpu_groups; ++i) {
        if (!out.empty())
            out += ",";
        out += std::to_string(r.cpus_per_node[i]);
        if (r.cpu_count_reps[i] > 1)
            out += "(x" + std::to_string(r.cpu_count_reps[i]) + ")";
    }
    return out;
}

} // namespace

Expected<JobAllocation::Granted> JobAllocation::lookup(std::uint32_t jobId) {
    resource_allocation_response_msg_t *resp =
        jobId ? slurm_release::lookupAllocation(jobId) : nullptr;
    if (!resp)
        return UserError{slurm_strerror(slurm_release::lastError())};
    Granted g{resp->node_list ? resp->node_list : "", cpusPerNodeText(*resp)};
    slurm_free_resource_allocation_response_msg(resp);
    return g;
}

JobAllocation::~JobAllocation() = default;

namespace {

// A string field of the job description (libslurm only reads it).
char *cstr(const std::string &s) {
    return s.empty() ? nullptr : const_cast<char *>(s.c_str());
}

// Slurm's job description of `r`. It points into `r` and `strings`, which
// must outlive it (libslurm only reads it).
job_desc_msg_t describe(const AllocationRequest &r, std::vector<std::string> &strings) {
    job_desc_msg_t desc;
    slurm_init_job_desc_msg(&desc);
    desc.user_id = getuid();
    desc.group_id = getgid();
    strings = {r.workDir, compressHostlist(r.requiredNodes), compressHostlist(r.excludedNodes)};
    if (strings[0].empty()) {
        char cwd[4096];
        if (getcwd(cwd, sizeof cwd))
            strings[0] = cwd;
    }
    desc.work_dir = cstr(strings[0]);
    desc.req_nodes = cstr(strings[1]);
    desc.exc_nodes = cstr(strings[2]);
    desc.name = cstr(r.name);
    desc.account = cstr(r.account);
    desc.partition = cstr(r.partition);
    desc.qos = cstr(r.qos);
    desc.features = cstr(r.constraint);
    desc.reservation = cstr(r.reservation);
    desc.dependency = cstr(r.dependency);
    desc.comment = cstr(r.comment);
    desc.wckey = cstr(r.wckey);
    desc.licenses = cstr(r.licenses);
    if (r.minNodes)
        desc.min_nodes = static_cast<std::uint32_t>(*r.minNodes);
    if (r.maxNodes)
        desc.max_nodes = static_cast<std::uint32_t>(*r.maxNodes);
    if (r.cpusPerTask)
        desc.cpus_per_task = static_cast<std::uint16_t>(*r.cpusPerTask);
    if (r.tasksPerNode)
        desc.ntasks_per_node = static_cast<std::uint16_t>(*r.tasksPerNode);
    if (r.minCpusPerNode)
        desc.pn_min_cpus = static_cast<std::uint16_t>(*r.minCpusPerNode);
    if (r.tasks) {
        desc.num_tasks = static_cast<std::uint32_t>(*r.tasks);
        // As srun: CPUs for every task, or one per node when overcommitting.
        desc.min_cpus =
            r.overcommit ? static_cast<std::uint32_t>(r.minNodes.value_or(1))
                         : desc.num_tasks * static_cast<std::uint32_t>(r.cpusPerTask.value_or(1));
    }
    if (r.overcommit)
        desc.overcommit = 1;
    if (r.memPerNodeMb)
        desc.pn_min_memory = *r.memPerNodeMb;
    if (r.memPerCpuMb)
        desc.pn_min_memory = *r.memPerCpuMb | MEM_PER_CPU;
    if (r.timeLimitMin)
        desc.time_limit = *r.timeLimitMin;
    else if (r.unlimitedTime)
        desc.time_limit = INFINITE;
    if (r.timeMinMin)
        desc.time_min = *r.timeMinMin;
    switch (r.sharing) {
    case AllocationRequest::Sharing::Default:
        break;
    case AllocationRequest::Sharing::Exclusive:
        desc.shared = JOB_SHARED_NONE;
        break;
    case AllocationRequest::Sharing::ExclusiveUser:
        desc.shared = JOB_SHARED_USER;
        break;
    case AllocationRequest::Sharing::ExclusiveMcs:
        desc.shared = JOB_SHARED_MCS;
        break;
    case AllocationRequest::Sharing::Oversubscribe:
        desc.shared = JOB_SHARED_OK;
        break;
    }
    if (r.contiguous)
        desc.contiguous = 1;
    if (r.immediate)
        desc.immediate = 1;
    if (r.spread)
        desc.bitflags |= SPREAD_JOB;
    if (r.useMinNodes)
        desc.bitflags |= USE_MIN_NODES;

    return desc;
}

} // namespace

Expected<std::unique_ptr<JobAllocation>> JobAllocation::request(const AllocationRequest &r) {
    std::vector<std::string> strings;
    job_desc_msg_t desc = describe(r, strings);

    std::unique_ptr<JobAllocation> job(new JobAllocation());
    job->watcherFd_ = startWatcher();
    if (!job->watcherFd_)
        return UserError{std::string("cannot start the allocation's watcher process: ") +
                         std::strerror(errno)};

    gPendingWatcherFd = job->watcherFd_.get();
    gInterrupted = 0;
    struct sigaction wait {
    }, old[4];
    wait.sa_handler = onSignalWhileWaiting;
    sigemptyset(&wait.sa_mask);
    const int signals[4] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
    // srun blocks these signals before its plugins start and unblocks them
    // only while it waits for an allocation itself: do as it does.
    sigset_t set, oldMask;
    sigemptyset(&set);
    for (int i = 0; i < 4; ++i) {
        sigaction(signals[i], &wait, &old[i]);
        sigaddset(&set, signals[i]);
    }
    pthread_sigmask(SIG_UNBLOCK, &set, &oldMask);
    // A signal already pending arrives on unblocking: then ask nothing.
    resource_allocation_response_msg_t *resp =
        gInterrupted ? nullptr : slurm_release::allocateBlocking(desc, onPending);
    const int error = errno;
    Expected<void> ready;
    if (resp) {
        tell(job->watcherFd_.get(), "J" + std::to_string(slurm_release::jobIdOf(*resp)) + "\n");
        ready = waitNodesReady(slurm_release::jobIdOf(*resp));
    }
    pthread_sigmask(SIG_SETMASK, &oldMask, nullptr);
    for (int i = 0; i < 4; ++i)
        sigaction(signals[i], &old[i], nullptr);
    gPendingWatcherFd = -1;

    if (!resp) {
        if (gInterrupted)
            return UserError{"interrupted while waiting for the job allocation; the request was "
                             "withdrawn"};
        std::string named;
        const std::string &required = strings[1];
        if (!required.empty() && (error == ESLURM_INVALID_NODE_NAME ||
                                  error == ESLURM_REQUESTED_NODE_CONFIG_UNAVAILABLE))
            named = " (nodes named: " + required +
                    "; a node must exist and be in the partition to be named)";
        return UserError{std::string("Slurm refused the job allocation stepmap asked for: ") +
                         slurm_strerror(error) + named};
    }
    job->jobId_ = slurm_release::jobIdOf(*resp);
    tell(job->watcherFd_.get(), "J" + std::to_string(job->jobId_) + "\n");
    job->nodeList_ = resp->node_list ? resp->node_list : "";
    job->cpusPerNode_ = cpusPerNodeText(*resp);
    job->partition_ = resp->partition ? resp->partition : "";
    slurm_free_resource_allocation_response_msg(resp);
    if (gInterrupted) {
        job->release(1);
        return UserError{"interrupted while waiting for the job allocation; job " +
                         std::to_string(job->jobId_) + " was released"};
    }
    if (!ready) {
        job->release(1);
        return UserError{ready.error().message + "; job " + std::to_string(job->jobId_) +
                         " was released"};
    }
    if (job->nodeList_.empty() || job->cpusPerNode_.empty()) {
        job->release(1);
        return UserError{"Slurm granted job " + std::to_string(job->jobId_) +
                         " without nodes; released it"};
    }
    return job;
}

void JobAllocation::exportJobVariables() const {
    const std::string id = std::to_string(jobId_);
    setenv("SLURM_JOB_ID", id.c_str(), 1);
    setenv("SLURM_JOBID", id.c_str(), 1);
    setenv("SLURM_JOB_NODELIST", nodeList_.c_str(), 1);
    setenv("SLURM_NODELIST", nodeList_.c_str(), 1);
    setenv("SLURM_JOB_CPUS_PER_NODE", cpusPerNode_.c_str(), 1);
    if (!partition_.empty())
        setenv("SLURM_JOB_PARTITION", partition_.c_str(), 1);
}

int JobAllocation::keepAcrossExec() {
    int flags = watcherFd_ ? fcntl(watcherFd_.get(), F_GETFD) : -1;
    if (flags >= 0)
        fcntl(watcherFd_.get(), F_SETFD, flags & ~FD_CLOEXEC);
    return watcherFd_.get();
}

std::unique_ptr<JobAllocation> JobAllocation::adopt(std::uint32_t jobId, int watcherFd) {
    struct stat st {};
    if (jobId == 0 || watcherFd < 3 || fstat(watcherFd, &st) != 0 || !S_ISFIFO(st.st_mode))
        return nullptr;
    fcntl(watcherFd, F_SETFD, FD_CLOEXEC);
    std::unique_ptr<JobAllocation> adopted(new JobAllocation());
    adopted->jobId_ = jobId;
    adopted->watcherFd_.reset(watcherFd);
    return adopted;
}

void JobAllocation::release(int status) {
    if (released_ || !jobId_)
        return;
    released_ = true;
    if (slurm_release::completeJob(jobId_, static_cast<std::uint32_t>(status)) == SLURM_SUCCESS ||
        errno == ESLURM_ALREADY_DONE)
        tell(watcherFd_.get(), "R\n");
    // Otherwise the watcher cancels it when srun is gone.
}

} // namespace stepmap::plugin
