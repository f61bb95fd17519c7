#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

extern char **environ;

namespace stepmap::bench {

Expected<pid_t> spawnChild(const ChildSpec &spec) {
    std::vector<std::string> envText(spec.env);
    for (char **e = environ; *e; ++e)
        envText.emplace_back(*e);
    std::vector<std::string> argText = {spec.path};
    argText.insert(argText.end(), spec.args.begin(), spec.args.end());
    std::vector<char *> envp, argv;
    for (auto &e : envText)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    for (auto &a : argText)
        argv.push_back(a.data());
    argv.push_back(nullptr);

    // vfork, not posix_spawn: the child may have to drop root first. Not
    // fork either: copying the address space would make every later write
    // fault and shoot down TLBs on the hub's thread, billing srun's hub for
    // the harness's spawning. The child shares this memory until exec, so
    // it calls only raw system calls (glibc's setuid would change the
    // credentials of the harness's threads too).
    pid_t pid = vfork();
    if (pid == 0) {
        for (auto [child, parent] : spec.fds)
            if (child == parent ? fcntl(child, F_SETFD, 0) != 0 : dup2(parent, child) < 0)
                _exit(126);
        if (spec.user &&
            (syscall(SYS_setgroups, 0, nullptr) != 0 || syscall(SYS_setgid, spec.user->gid) != 0 ||
             syscall(SYS_setuid, spec.user->uid) != 0))
            _exit(126);
        execve(argv[0], argv.data(), envp.data());
        _exit(127);
    }
    if (pid < 0)
        return UserError{"cannot start " + spec.path + ": " + std::strerror(errno)};
    return pid;
}

bool readAll(const std::vector<int> &outs, std::vector<std::string> &texts,
             std::chrono::steady_clock::time_point deadline) {
    texts.assign(outs.size(), {});
    std::vector<pollfd> fds;
    std::vector<std::size_t> owner;
    for (std::size_t i = 0; i < outs.size(); ++i) {
        fds.push_back({outs[i], POLLIN, 0});
        owner.push_back(i);
    }
    while (!fds.empty()) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return false;
        if (poll(fds.data(), fds.size(), static_cast<int>(left.count())) <= 0)
            continue;
        for (std::size_t k = fds.size(); k-- > 0;) {
            if (!fds[k].revents)
                continue;
            char buf[4096];
            ssize_t n = read(fds[k].fd, buf, sizeof buf);
            if (n > 0) {
                texts[owner[k]].append(buf, static_cast<std::size_t>(n));
            } else if (n == 0 || errno != EINTR) {
                fds.erase(fds.begin() + static_cast<std::ptrdiff_t>(k));
                owner.erase(owner.begin() + static_cast<std::ptrdiff_t>(k));
            }
        }
    }
    return true;
}

bool reapAll(const std::vector<pid_t> &pids, std::chrono::steady_clock::time_point deadline) {
    std::vector<pid_t> running(pids);
    bool clean = true;
    while (!running.empty()) {
        const bool late = std::chrono::steady_clock::now() > deadline;
        for (std::size_t k = running.size(); k-- > 0;) {
            if (late)
                kill(running[k], SIGKILL);
            pid_t rc = waitpid(running[k], nullptr, late ? 0 : WNOHANG);
            if (rc == 0)
                continue;
            clean = clean && !late && rc > 0;
            running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        }
        if (!running.empty())
            std::this_thread::sleep_for(std::chrono::microseconds(500));
    }
    return clean;
}

} // namespace stepmap::bench
