#include "topology_cache_writer.hpp"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern "C" {
#include <slurm/spank.h>
}

namespace stepmap::plugin {

namespace {

// hwloc's discovery takes well under a second; a server that hangs there
// must not hold slurmd's start.
constexpr int kWriteTimeoutMs = 10000;

const char *argumentValue(int ac, char **av, const char *key) {
    const size_t length = strlen(key);
    const char *value = nullptr;
    for (int i = 0; i < ac; ++i)
        if (strncmp(av[i], key, length) == 0 && av[i][length] == '=')
            value = av[i] + length + 1;
    return value;
}

} // namespace

void writeTopologyCacheFromSlurmd(int ac, char **av) {
    const char *dir = argumentValue(ac, av, "topology_cache");
    if (!dir)
        dir = "/run/stepmap";
    if (strcmp(dir, "none") == 0)
        return;
    if (dir[0] != '/') // the plugin proper names the bad value in every step
        return;
    const char *server = argumentValue(ac, av, "server");
    if (!server)
        server = STEPMAP_SERVER_PATH;
    const pid_t pid = fork();
    if (pid < 0) {
        slurm_error("stepmap: cannot fork to write the node's topology cache: %s", strerror(errno));
        return;
    }
    if (pid == 0) {
        // Only the standard descriptors, and stdin from nowhere; stderr
        // stays slurmd's (its log when it runs in the foreground).
        const int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        closefrom(3);
        const char *argv[] = {server, "--write-topology-cache", dir, nullptr};
        const char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", nullptr};
        execve(server, const_cast<char **>(argv), const_cast<char **>(envp));
        _exit(127);
    }
    int status = 0;
    for (int waited = 0;; waited += 10) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid)
            break;
        if (done < 0 || waited >= kWriteTimeoutMs) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            slurm_error("stepmap: %s --write-topology-cache %s did not finish within %d s; "
                        "steps discover the node's topology themselves",
                        server, dir, kWriteTimeoutMs / 1000);
            return;
        }
        const timespec tick{0, 10 * 1000 * 1000};
        nanosleep(&tick, nullptr);
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        slurm_info("stepmap: wrote the node's topology cache in %s", dir);
    else
        slurm_error("stepmap: %s --write-topology-cache %s failed (status %d); steps discover "
                    "the node's topology themselves",
                    server, dir, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

} // namespace stepmap::plugin
