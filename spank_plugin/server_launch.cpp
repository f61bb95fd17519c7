#include "server_launch.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>

namespace stepmap::plugin {

namespace {

// Runs in the grandchild, which must never return into slurmstepd code.
[[noreturn]] void execServer(const ServerLaunch &l, int writeFd) {
    // user_init runs with the effective ids dropped but real uid 0: regain
    // root briefly so the drop below is complete and irreversible.
    if (geteuid() != 0 && getuid() == 0 && seteuid(0) != 0)
        _exit(120);
    if (setgroups(1, &l.gid) != 0 || setresgid(l.gid, l.gid, l.gid) != 0 ||
        setresuid(l.uid, l.uid, l.uid) != 0)
        _exit(121);
    if (getuid() == 0 || geteuid() == 0)
        _exit(122);
    // slurmstepd protects itself from the OOM killer; the server should not be.
    int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (oom >= 0) {
        (void)!write(oom, "0", 1);
        close(oom);
    }
    int devnull = open("/dev/null", O_RDWR);
    if (devnull >= 0) {
        dup2(devnull, 0);
        dup2(devnull, 1);
        int log = l.logFile.empty()
                      ? -1
                      : open(l.logFile.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW, 0600);
        dup2(log >= 0 ? log : devnull, 2);
        if (log > 2)
            close(log);
        if (devnull > 2)
            close(devnull);
    }
    // Move the pipe to fd 3 and close everything else slurmstepd had open.
    if (writeFd != 3) {
        if (dup2(writeFd, 3) < 0)
            _exit(123);
        close(writeFd);
    }
    syscall(SYS_close_range, 4U, ~0U, 0U);
    setsid();
    // slurmstepd blocks and ignores signals; both survive exec. The server
    // must see SIGTERM.
    for (int sig = 1; sig < NSIG; ++sig)
        signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);

    std::vector<std::string> args;
    args.push_back(l.executable);
    for (auto &a : l.args)
        args.push_back(a == "{fd}" ? "3" : a);
    std::vector<char *> argv, envp;
    for (auto &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);
    for (auto &e : l.environ)
        envp.push_back(const_cast<char *>(e.c_str()));
    envp.push_back(nullptr);
    execve(l.executable.c_str(), argv.data(), envp.data());
    _exit(127);
}

Expected<std::string> readReply(int fd, int timeoutSec) {
    std::string text;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
    char buf[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0)
            return UserError{"the server did not report ready within " +
                             std::to_string(timeoutSec) + " s"};
        pollfd p{fd, POLLIN, 0};
        int rc = poll(&p, 1, static_cast<int>(left));
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc <= 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return text;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > (64u << 20))
            return UserError{"the server's reply is too large"};
    }
}

} // namespace

Expected<RunningServer> launchServer(const ServerLaunch &launch) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return UserError{std::string("pipe: ") + std::strerror(errno)};
    pid_t child = fork();
    if (child < 0) {
        close(fds[0]);
        close(fds[1]);
        return UserError{std::string("fork: ") + std::strerror(errno)};
    }
    if (child == 0) {
        close(fds[0]);
        pid_t grandchild = fork();
        if (grandchild != 0)
            _exit(grandchild < 0 ? 1 : 0);
        execServer(launch, fds[1]);
    }
    close(fds[1]);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    auto reply = readReply(fds[0], launch.timeoutSec);
    close(fds[0]);
    if (!reply)
        return reply.error();

    RunningServer out{0, -1, {}};
    const std::string &text = reply.value();
    std::size_t pos = 0;
    std::uint32_t rank = 0;
    bool haveRank = false, ended = false;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        if (nl == std::string::npos)
            break;
        std::string line = text.substr(pos, nl - pos);
        pos = nl + 1;
        if (line.rfind("ERROR ", 0) == 0)
            return UserError{line.substr(6)};
        if (line.rfind("OK ", 0) == 0) {
            int pid = 0;
            std::from_chars(line.data() + 3, line.data() + line.size(), pid);
            out.pid = pid;
        } else if (line.rfind("RANK ", 0) == 0) {
            std::from_chars(line.data() + 5, line.data() + line.size(), rank);
            haveRank = true;
            out.clientEnv[rank];
        } else if (line.rfind("ENV ", 0) == 0 && haveRank) {
            auto eq = line.find('=', 4);
            if (eq != std::string::npos)
                out.clientEnv[rank].emplace_back(line.substr(4, eq - 4), line.substr(eq + 1));
        } else if (line == "END") {
            ended = true;
        }
    }
    if (!ended || out.pid <= 0)
        return UserError{"the server exited before it was ready (see the node's log; exit "
                         "codes 120-127 mean it could not drop privileges or be executed)"};
    out.pidfd = static_cast<int>(syscall(SYS_pidfd_open, out.pid, 0));
    return out;
}

} // namespace stepmap::plugin
