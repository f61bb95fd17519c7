#include "stepd/server_launch.hpp"

#include "os/cgroup_membership.hpp"
#include "protocol/ready/ready_socket.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <climits>
#include <cstring>
#include <string_view>

namespace stepmap::plugin {

namespace {

using os::UniqueFd;

int pidfdOpen(pid_t pid) {
    return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
}

// In a forked child of slurmstepd: regain root briefly (user_init runs with
// the effective ids dropped but real uid 0) so that the drop below is
// complete and irreversible. Returns false if any step failed.
bool dropToUser(uid_t uid, gid_t gid) {
    if (geteuid() != 0 && getuid() == 0 && seteuid(0) != 0)
        return false;
    if (setgroups(1, &gid) != 0 || setresgid(gid, gid, gid) != 0 || setresuid(uid, uid, uid) != 0)
        return false;
    return getuid() != 0 && geteuid() != 0;
}

// Closes every descriptor from `from` on: close_range where the kernel has
// it, else one by one up to the hard descriptor limit (not the soft one,
// which the job may have lowered).
void closeFrom(int from) {
    if (syscall(SYS_close_range, static_cast<unsigned>(from), ~0U, 0U) == 0)
        return;
    rlimit rl{};
    const rlim_t cap = 1 << 20; // the kernel's default nr_open
    const rlim_t last = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_max < cap ? rl.rlim_max : cap;
    for (rlim_t fd = static_cast<rlim_t>(from); fd < last; ++fd)
        close(static_cast<int>(fd));
}

// What the grandchild executes with; built before fork, since only
// async-signal-safe calls may follow it in a multithreaded slurmstepd.
struct ExecImage {
    std::vector<std::string> strings;
    std::vector<char *> argv, envp;
};

ExecImage makeImage(const ServerLaunch &l, int readyFd) {
    ExecImage image;
    image.strings.push_back(l.executable);
    for (const auto &a : l.args)
        image.strings.push_back(a == "{fd}" ? std::to_string(readyFd) : a);
    const std::size_t argc = image.strings.size();
    for (const auto &e : l.environ)
        image.strings.push_back(e);
    for (std::size_t i = 0; i < image.strings.size(); ++i)
        (i < argc ? image.argv : image.envp).push_back(image.strings[i].data());
    image.argv.push_back(nullptr);
    image.envp.push_back(nullptr);
    return image;
}

constexpr int kReadyFd = 3;

// The grandchild; never returns into slurmstepd code. Exit codes 120-127
// say which step failed (documented in the error message of launchServer).
[[noreturn]] void execServer(const ServerLaunch &l, const ExecImage &image, int readySock,
                             int logFd, int devnull) {
    // Still root here (user_init runs with only the effective ids dropped):
    // what needs root comes first.
    if (geteuid() != 0 && getuid() == 0 && seteuid(0) != 0)
        _exit(120);
    // slurmstepd shields itself from the OOM killer (-1000); the server must
    // not inherit that. After the drop /proc/self is no longer writable.
    int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom < 0 || write(oom, "0", 1) != 1)
        _exit(126);
    close(oom);
    // Lift the descriptors out of the way first, so that dup2 never meets
    // its own source (which would keep close-on-exec), then close all else.
    const int err = fcntl(logFd >= 0 ? logFd : devnull, F_DUPFD_CLOEXEC, 10);
    const int in = fcntl(devnull, F_DUPFD_CLOEXEC, 10);
    const int ready = fcntl(readySock, F_DUPFD_CLOEXEC, 10);
    if (err < 0 || in < 0 || ready < 0 || dup2(in, 0) < 0 || dup2(in, 1) < 0 || dup2(err, 2) < 0 ||
        dup2(ready, kReadyFd) < 0)
        _exit(123);
    closeFrom(kReadyFd + 1);
    if (!dropToUser(l.uid, l.gid))
        _exit(121);
    for (const auto &[resource, value] : l.softLimits) {
        rlimit rl{};
        if (getrlimit(resource, &rl) == 0) {
            rl.rlim_cur = value < rl.rlim_max ? value : rl.rlim_max;
            setrlimit(resource, &rl);
        }
    }
    if (chdir("/") != 0)
        _exit(124);
    setsid();
    // slurmstepd blocks and ignores signals; both survive exec. The server
    // must see SIGTERM.
    for (int sig = 1; sig < NSIG; ++sig)
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execve(image.argv[0], image.argv.data(), image.envp.data());
    _exit(127);
}

// The middle child's one message to slurmstepd: the server's pid, with its
// pidfd attached (SCM_RIGHTS); or why it made no server.
struct StartedServer {
    pid_t pid = 0;
    int directoryErrno = 0; // the server's directory could not be made
    int logErrno = 0;       // its log could not be made (it runs without)
};

struct PidfdMessage {
    StartedServer started;
    iovec iov{&started, sizeof started};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr msg{};
    PidfdMessage() {
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
    }
    PidfdMessage(const PidfdMessage &) = delete;
    PidfdMessage &operator=(const PidfdMessage &) = delete;
};

// Makes the server's directory and log with the job user's file ids only
// (this process is single-threaded: setfsuid changes no other thread's
// rights), then returns to root's. Fills in the errno of what failed.
int makeUserFiles(const ServerLaunch &l, StartedServer &started) {
    int logFd = -1;
    const gid_t groups[] = {l.gid};
    if (syscall(SYS_setgroups, 1, groups) != 0) {
        started.directoryErrno = errno;
        return -1;
    }
    syscall(SYS_setfsgid, l.gid);
    syscall(SYS_setfsuid, l.uid);
    // Both return the previous id, never an error: ask again to be sure.
    if (static_cast<uid_t>(syscall(SYS_setfsuid, -1)) != l.uid ||
        static_cast<gid_t>(syscall(SYS_setfsgid, -1)) != l.gid) {
        started.directoryErrno = EPERM;
        return -1;
    }
    if (!l.directory.empty() && mkdir(l.directory.c_str(), 0700) != 0)
        started.directoryErrno = errno;
    else if (!l.logPath.empty()) {
        logFd = open(l.logPath.c_str(),
                     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600);
        if (logFd < 0)
            started.logErrno = errno;
    }
    syscall(SYS_setfsuid, 0);
    syscall(SYS_setfsgid, 0);
    return logFd;
}

// The middle child: makes the user's files, forks the server, hands its
// pidfd to slurmstepd on `control` (a socket no process of the user ever
// holds), then guards the server's pid (PidGuard) until slurmstepd lets it
// go or is gone.
[[noreturn]] void forkServer(const ServerLaunch &l, const ExecImage &image, int readySock,
                             int control, int devnull) {
    PidfdMessage m;
    const int logFd = makeUserFiles(l, m.started);
    if (m.started.directoryErrno != 0) {
        m.msg.msg_control = nullptr;
        m.msg.msg_controllen = 0;
        (void)sendmsg(control, &m.msg, MSG_NOSIGNAL);
        _exit(4);
    }
    pid_t server = fork();
    if (server == 0) {
        close(control);
        execServer(l, image, readySock, logFd, devnull);
    }
    if (server < 0)
        _exit(1);
    // The server is this process's child: its pid cannot be reused before
    // we reap it, so the pidfd names it for sure.
    int pidfd = pidfdOpen(server);
    if (pidfd < 0) {
        kill(server, SIGKILL);
        _exit(2);
    }
    m.started.pid = server;
    cmsghdr *c = CMSG_FIRSTHDR(&m.msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &pidfd, sizeof pidfd);
    if (sendmsg(control, &m.msg, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof m.started)) {
        kill(server, SIGKILL);
        _exit(3);
    }
    // Until a byte or the end of the socket: slurmstepd placed the server,
    // gave up on it, or died.
    char go;
    while (read(control, &go, 1) < 0 && errno == EINTR) {
    }
    _exit(0);
}

struct ReceivedServer {
    ServerProcess process;
    int logErrno = 0;
};

Expected<ReceivedServer> receiveServer(int control, const ServerLaunch &l) {
    PidfdMessage m;
    ssize_t n;
    do
        n = recvmsg(control, &m.msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n == static_cast<ssize_t>(sizeof m.started) && m.started.directoryErrno != 0)
        return UserError{"cannot make its directory " + l.directory +
                         " as the job's user: " + std::strerror(m.started.directoryErrno)};
    cmsghdr *c = n == static_cast<ssize_t>(sizeof m.started) ? CMSG_FIRSTHDR(&m.msg) : nullptr;
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
        c->cmsg_len != CMSG_LEN(sizeof(int)))
        return UserError{"the server could not be started (fork or pidfd_open failed)"};
    int pidfd = -1;
    std::memcpy(&pidfd, CMSG_DATA(c), sizeof pidfd);
    return ReceivedServer{ServerProcess(m.started.pid, UniqueFd(pidfd)), m.started.logErrno};
}

// A connected pair of sockets of type, each end owned.
Expected<std::pair<UniqueFd, UniqueFd>> socketPair(int type) {
    int fds[2];
    if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0)
        return UserError{std::string("socketpair: ") + std::strerror(errno)};
    return std::pair<UniqueFd, UniqueFd>(UniqueFd(fds[0]), UniqueFd(fds[1]));
}

} // namespace

PidGuard &PidGuard::operator=(PidGuard &&other) noexcept {
    if (this != &other) {
        release();
        pid_ = other.pid_;
        control_ = std::move(other.control_);
        other.pid_ = 0;
    }
    return *this;
}

void PidGuard::release() {
    if (!control_)
        return;
    const char go = 1;
    (void)send(control_.get(), &go, 1, MSG_NOSIGNAL | MSG_DONTWAIT);
    control_.reset();
    // Not this process's child when a contained hook (a clone) lets it go:
    // slurmstepd reaps it then.
    int status = 0;
    while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = 0;
}

Expected<void> placeServer(StartingServer &starting) {
    if (!starting.guard)
        return UserError{"the server's process is no longer guarded"};
    auto moved = os::moveIntoOwnCgroups(starting.process.pid());
    starting.guard.release();
    return moved;
}

void ServerProcess::stop(int waitMs) {
    if (!pidfd_)
        return;
    syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGTERM, nullptr, 0);
    pollfd p{pidfd_.get(), POLLIN, 0};
    int rc;
    do
        rc = poll(&p, 1, waitMs);
    while (rc < 0 && errno == EINTR);
    if (rc == 0)
        syscall(SYS_pidfd_send_signal, pidfd_.get(), SIGKILL, nullptr, 0);
    pidfd_.reset();
}

Expected<StartingServer> spawnServer(ServerLaunch launch) {
    auto ready = socketPair(SOCK_STREAM);
    if (!ready)
        return ready.error();
    auto control = socketPair(SOCK_SEQPACKET);
    if (!control)
        return control.error();
    auto &[readyOurs, readyTheirs] = ready.value();
    auto &[controlOurs, controlTheirs] = control.value();
    UniqueFd devnull(open("/dev/null", O_RDWR | O_CLOEXEC));
    if (!devnull)
        return UserError{std::string("/dev/null: ") + std::strerror(errno)};
    const ExecImage image = makeImage(launch, kReadyFd);

    pid_t child = fork();
    if (child < 0)
        return UserError{std::string("fork: ") + std::strerror(errno)};
    if (child == 0)
        forkServer(launch, image, readyTheirs.get(), controlTheirs.get(), devnull.get());
    readyTheirs.reset();
    controlTheirs.reset();
    PidGuard guard(child, std::move(controlOurs));
    auto received = receiveServer(guard.control(), launch);
    if (!received)
        return received.error();
    StartingServer out{std::move(received->process), std::move(guard),
                       std::move(readyOurs),         launch.timeoutSec,
                       std::move(launch.localRanks), {}};
    if (received->logErrno != 0)
        out.logProblem = "cannot create the server's log " + launch.logPath + ": " +
                         std::strerror(received->logErrno);
    return out;
}

Expected<RunningServer> awaitServer(StartingServer starting) {
    starting.guard.release();
    RunningServer out;
    out.process = std::move(starting.process);
    auto fail = [&](const std::string &why) -> Expected<RunningServer> {
        out.process.stop(200);
        return UserError{why};
    };
    auto text = ready::readReport(starting.ready.get(), starting.timeoutSec,
                                  ready::maxReadyReportBytes(starting.localRanks.size()));
    if (!text)
        return fail(text.error().message);
    if (text->empty())
        return fail("the server exited before it was ready (see the node's log; exit codes "
                    "120-127 mean it could not drop privileges, set up or be executed)");
    auto envs = ready::decodeReadyReport(*text, starting.localRanks);
    if (!envs)
        return fail(envs.error().message);
    out.clientEnv = std::move(envs.value());
    out.notices = std::move(starting.ready);
    return out;
}

Expected<RunningServer> launchServer(ServerLaunch launch) {
    auto starting = spawnServer(std::move(launch));
    if (!starting)
        return starting.error();
    return awaitServer(std::move(starting.value()));
}

bool runAsUser(uid_t uid, gid_t gid, const std::function<bool()> &work, int timeoutMs) {
    pid_t child = fork();
    if (child < 0)
        return false;
    if (child == 0) {
        // Never back into slurmstepd's code from here, whatever happens,
        // and not for longer than the timeout (slurmstepd may have blocked
        // or ignored SIGALRM; the child must not).
        signal(SIGALRM, SIG_DFL);
        sigset_t alrm;
        sigemptyset(&alrm);
        sigaddset(&alrm, SIGALRM);
        sigprocmask(SIG_UNBLOCK, &alrm, nullptr);
        alarm(static_cast<unsigned>(timeoutMs / 1000 + 1));
        if (!dropToUser(uid, gid))
            _exit(121);
        try {
            _exit(work() ? 0 : 1);
        } catch (...) {
            _exit(1);
        }
    }
    UniqueFd pidfd(pidfdOpen(child));
    if (pidfd) {
        pollfd p{pidfd.get(), POLLIN, 0};
        int rc;
        do
            rc = poll(&p, 1, timeoutMs);
        while (rc < 0 && errno == EINTR);
        if (rc == 0)
            kill(child, SIGKILL);
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR)
            return false;
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

std::vector<std::pair<int, rlim_t>>
jobSoftLimits(const std::function<std::optional<std::string>(const char *)> &getenv) {
    static const std::pair<const char *, int> names[] = {
        {"SLURM_RLIMIT_CPU", RLIMIT_CPU},         {"SLURM_RLIMIT_FSIZE", RLIMIT_FSIZE},
        {"SLURM_RLIMIT_DATA", RLIMIT_DATA},       {"SLURM_RLIMIT_STACK", RLIMIT_STACK},
        {"SLURM_RLIMIT_CORE", RLIMIT_CORE},       {"SLURM_RLIMIT_RSS", RLIMIT_RSS},
        {"SLURM_RLIMIT_NPROC", RLIMIT_NPROC},     {"SLURM_RLIMIT_NOFILE", RLIMIT_NOFILE},
        {"SLURM_RLIMIT_MEMLOCK", RLIMIT_MEMLOCK}, {"SLURM_RLIMIT_AS", RLIMIT_AS},
    };
    std::vector<std::pair<int, rlim_t>> out;
    for (const auto &[name, resource] : names) {
        auto text = getenv(name);
        if (!text)
            continue;
        // "U" marks a limit the user asked to propagate (srun --propagate).
        std::string_view v = *text;
        if (!v.empty() && v.front() == 'U')
            v.remove_prefix(1);
        unsigned long long value = 0;
        auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), value);
        if (ec != std::errc() || p != v.data() + v.size() || v.empty())
            continue;
        out.emplace_back(resource, static_cast<rlim_t>(value));
    }
    return out;
}

} // namespace stepmap::plugin
