// stepmap-stepd: the PMIx server of one step on one node. Started by the
// stepmap SPANK plugin from slurmstepd, as the job's user, inside the step's
// cgroup; leaves when the step ends, when slurmstepd is gone, or when srun's
// rendezvous goes away, removing its files in every case.

#include "hub_link.hpp"
#include "plan/step_bindings.hpp"
#include "pmix_host.hpp"
#include "server_log.hpp"
#include "step_config.hpp"
#include "step_directory.hpp"
#include "step_topology.hpp"
#include "wire/ready_report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <uv.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

using namespace stepmap;
using namespace stepmap::server;

namespace {

bool writeAll(int fd, const std::string &text) {
    const char *p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

void reportFailure(int fd, const std::string &message) {
    logLine(message);
    if (fd >= 0) {
        writeAll(fd, wire::encodeReadyFailure(message));
        close(fd);
    }
}

// The server's private directory (made by the plugin) goes when main
// returns, after PMIx is finalized, whatever the way out.
struct DirectoryRemoval {
    std::string path;
    ~DirectoryRemoval() {
        if (!path.empty() && !os::removeTree(path))
            logLine("could not remove all of " + path);
    }
};

// Everything the running server owns; torn down in reverse order.
struct Server {
    explicit Server(StepConfig c) : config(std::move(c)) {}
    StepConfig config;
    uv_loop_t loop{};
    std::unique_ptr<LoopInbox> inbox;
    std::unique_ptr<PmixHost> host;
    std::unique_ptr<HubLink> link;
    uv_signal_t sigterm{}, sigint{};
    uv_poll_t parentWatch{};
    int pidfd = -1;
    // The plugin's end of the ready socket stays open after the report:
    // slurmstepd writes "X <rank> <status>" there when a task fails.
    uv_poll_t notices{};
    int noticesFd = -1;
    std::string noticeText;
    bool stopping = false;
    int exitCode = 0;

    void closeNotices() {
        if (noticesFd < 0)
            return;
        uv_close(reinterpret_cast<uv_handle_t *>(&notices), nullptr);
        noticesFd = -1;
    }

    // Lines "X <rank> <status>\n" from slurmstepd, strictly parsed; at most
    // 64 bytes pending. Only ranks of this node are passed on.
    void readNotices(int fd) {
        char buf[256];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) {
            if (n < 0 && errno == EINTR)
                return;
            closeNotices();
            return;
        }
        noticeText.append(buf, static_cast<std::size_t>(n));
        std::size_t nl;
        while ((nl = noticeText.find('\n')) != std::string::npos) {
            std::string line = noticeText.substr(0, nl);
            noticeText.erase(0, nl + 1);
            unsigned rank = 0;
            int status = 0;
            char tail = 0;
            if (std::sscanf(line.c_str(), "X %u %d%c", &rank, &status, &tail) == 2 &&
                rank < config.plan.ranks.size() &&
                config.plan.ranks[rank].node == config.nodeIndex && status > 0 && status < 256 &&
                link)
                link->rankExited(rank, status);
        }
        if (noticeText.size() > 64)
            closeNotices();
    }

    void stop(const std::string &why, int code) {
        if (stopping)
            return;
        stopping = true;
        exitCode = code;
        logLine("stopping: " + why);
        if (link)
            link->leave();
        uv_close(reinterpret_cast<uv_handle_t *>(&sigterm), nullptr);
        uv_close(reinterpret_cast<uv_handle_t *>(&sigint), nullptr);
        if (pidfd >= 0)
            uv_close(reinterpret_cast<uv_handle_t *>(&parentWatch), nullptr);
        closeNotices();
        if (inbox)
            inbox->close();
    }
};

} // namespace

int main(int argc, char **argv) {
    umask(077);
    auto parsed = parseStepConfig(argc, argv);
    if (!parsed) {
        // The ready fd may not be known; the plugin sees the exit status.
        logLine("bad invocation: " + parsed.error().message);
        return 2;
    }
    DirectoryRemoval directory;
    Server s(std::move(parsed.value()));
    StepConfig &c = s.config;
    setLogPrefix("stepmap-stepd[" + c.nspace + " " + c.plan.nodes[c.nodeIndex].name + "]");
    fcntl(c.readyFd, F_SETFD, FD_CLOEXEC);

    if (getuid() == 0 || geteuid() == 0) {
        reportFailure(c.readyFd, "refusing to run as root: the PMIx server runs as the job's user");
        return 1;
    }
    // The plugin made the directory with an unpredictable name; it must be
    // ours and private, or another user could read the clients' files.
    if (auto dir = os::openPrivateDirectory(c.tmpdir, getuid()); !dir) {
        reportFailure(c.readyFd, dir.error().message);
        return 1;
    }
    directory.path = c.tmpdir;

    {
        // Where this server runs, for the per-step log: user and cgroups.
        std::string where =
            "starting as uid " + std::to_string(getuid()) + " gid " + std::to_string(getgid());
        if (FILE *f = std::fopen("/proc/self/cgroup", "r")) {
            char line[512];
            while (std::fgets(line, sizeof line, f)) {
                std::string l(line);
                if (l.find(":cpuset:") != std::string::npos ||
                    l.find(":freezer:") != std::string::npos || l.rfind("0::", 0) == 0)
                    where += ", cgroup " + l.substr(0, l.find_last_not_of('\n') + 1);
            }
            std::fclose(f);
        }
        logLine(where);
    }
    auto step = topology::loadStepTopology(c.stepCores, c.topologyXml);
    if (!step) {
        reportFailure(c.readyFd, step.error().message);
        return 1;
    }
    logLine("step CPUs here: " + topology::bitmapListString(step->cpuset.get()));
    // The plan was made in srun from Slurm's view of the job; the step may
    // hold fewer CPUs here. Bind within what it holds (step_bindings.hpp).
    {
        std::vector<std::uint32_t> stepCpus;
        for (int cpu = hwloc_bitmap_first(step->cpuset.get()); cpu >= 0;
             cpu = hwloc_bitmap_next(step->cpuset.get(), cpu))
            stepCpus.push_back(static_cast<std::uint32_t>(cpu));
        auto resolved = resolveBindingsOnNode(c.plan, c.nodeIndex, stepCpus);
        if (!resolved) {
            reportFailure(c.readyFd, resolved.error().message);
            return 1;
        }
        if (resolved->narrowed || resolved->unbound)
            logLine("bindings within the step's CPUs: " + std::to_string(resolved->narrowed) +
                    " ranks narrowed, " + std::to_string(resolved->unbound) +
                    " left unbound (their default binding lay outside the step)");
    }

    uv_loop_init(&s.loop);
    s.inbox = std::make_unique<LoopInbox>(&s.loop);
    s.host = std::make_unique<PmixHost>(c, *s.inbox, step->topology.get(), step->cpuset.get());
    auto started = s.host->start();
    Expected<std::map<std::uint32_t, std::vector<std::string>>> envs =
        started ? s.host->clientEnvironments()
                : Expected<std::map<std::uint32_t, std::vector<std::string>>>(started.error());
    if (!envs) {
        reportFailure(c.readyFd, envs.error().message);
        s.host.reset();
        return 1;
    }

    bool told = writeAll(c.readyFd, wire::encodeReadyReport(envs.value()));
    if (!told) {
        logLine("the plugin did not take the client environment; leaving");
        s.host.reset();
        return 1;
    }

    s.link = std::make_unique<HubLink>(&s.loop, c, *s.host,
                                       [&s](const std::string &why) { s.stop(why, 1); });
    s.host->setCollective(s.link.get());
    s.link->connect();

    s.noticesFd = c.readyFd;
    uv_poll_init(&s.loop, &s.notices, s.noticesFd);
    s.notices.data = &s;
    uv_poll_start(&s.notices, UV_READABLE, [](uv_poll_t *h, int status, int) {
        auto *server = static_cast<Server *>(h->data);
        if (status < 0)
            server->closeNotices();
        else
            server->readNotices(server->noticesFd);
    });

    uv_signal_init(&s.loop, &s.sigterm);
    uv_signal_init(&s.loop, &s.sigint);
    s.sigterm.data = s.sigint.data = &s;
    auto onSignal = [](uv_signal_t *h, int signum) {
        static_cast<Server *>(h->data)->stop("signal " + std::to_string(signum), 0);
    };
    uv_signal_start(&s.sigterm, onSignal, SIGTERM);
    uv_signal_start(&s.sigint, onSignal, SIGINT);

    if (c.watchPid > 0) {
        s.pidfd = static_cast<int>(syscall(SYS_pidfd_open, c.watchPid, 0));
        if (s.pidfd >= 0) {
            uv_poll_init(&s.loop, &s.parentWatch, s.pidfd);
            s.parentWatch.data = &s;
            uv_poll_start(&s.parentWatch, UV_READABLE, [](uv_poll_t *h, int, int) {
                static_cast<Server *>(h->data)->stop("slurmstepd is gone", 1);
            });
        } else {
            // Already gone (or pidfds unsupported): do not serve an orphan step.
            s.stop("cannot watch slurmstepd (pid " + std::to_string(c.watchPid) + ")", 1);
        }
    }

    uv_run(&s.loop, UV_RUN_DEFAULT);
    // Finalize PMIx before the loop goes: its threads may still post work.
    s.host->setCollective(nullptr);
    s.link.reset();
    s.host.reset();
    while (uv_loop_close(&s.loop) == UV_EBUSY)
        uv_run(&s.loop, UV_RUN_NOWAIT);
    if (s.pidfd >= 0)
        close(s.pidfd);
    close(c.readyFd);
    return s.exitCode;
}
