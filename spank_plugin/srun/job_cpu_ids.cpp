#include "srun/job_cpu_ids.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <vector>

#include "hosts/hostlist.hpp"
#include "os/unique_fd.hpp"

extern char **environ;

namespace stepmap::plugin {

namespace {

// The value of `key` starting at `at` (which points at the key), up to the
// next blank.
std::string_view valueAt(std::string_view text, std::size_t at, std::string_view key) {
    std::size_t from = at + key.size();
    std::size_t end = text.find_first_of(" \t\n", from);
    return text.substr(from, end == std::string_view::npos ? std::string_view::npos : end - from);
}

bool isCpuIdList(std::string_view ids) {
    if (ids.empty())
        return false;
    for (char c : ids)
        if (!(c >= '0' && c <= '9') && c != ',' && c != '-')
            return false;
    return true;
}

} // namespace

Expected<std::map<std::string, std::string>> parseJobCpuIds(std::string_view text) {
    static constexpr std::string_view kNodes = "Nodes=";
    static constexpr std::string_view kIds = "CPU_IDs=";
    std::map<std::string, std::string> byNode;
    std::size_t at = 0;
    while ((at = text.find(kNodes, at)) != std::string_view::npos) {
        // Only the whole word: NumNodes=, ReqNodes= and the like are other fields.
        if (at > 0 && text[at - 1] != ' ' && text[at - 1] != '\n' && text[at - 1] != '\t') {
            at += kNodes.size();
            continue;
        }
        std::string_view nodes = valueAt(text, at, kNodes);
        std::size_t after = at + kNodes.size() + nodes.size();
        if (text.substr(after, 1 + kIds.size()) != " CPU_IDs=") {
            at = after;
            continue;
        }
        std::string_view ids = valueAt(text, after + 1, kIds);
        if (!isCpuIdList(ids))
            return UserError{"scontrol printed CPU_IDs=" + std::string(ids) + " for nodes " +
                             std::string(nodes) + ": not a CPU id list"};
        auto names = expandHostlist(nodes);
        if (!names)
            return UserError{"scontrol printed Nodes=" + std::string(nodes) + ": " +
                             names.error().message};
        for (std::string &name : names.value())
            byNode[std::move(name)] = std::string(ids);
        at = after + 1 + kIds.size() + ids.size();
    }
    if (byNode.empty())
        return UserError{"scontrol printed no Nodes=... CPU_IDs=... line for the job"};
    return byNode;
}

namespace {

// scontrol next to the running srun (a site may have several Slurms
// installed; the one srun belongs to talks to the right controller), else
// the first on PATH.
std::string scontrolPath() {
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        std::string dir(self, static_cast<std::size_t>(n));
        dir.erase(dir.rfind('/') == std::string::npos ? 0 : dir.rfind('/'));
        std::string candidate = dir + "/scontrol";
        if (access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return "scontrol";
}

constexpr std::size_t kMaxScontrolBytes = 4 << 20;
constexpr int kScontrolTimeoutMs = 30000;

// Runs scontrol with `args` as the user (srun's own rights) and returns its
// standard output, bounded in size and time.
Expected<std::string> runScontrol(const std::vector<std::string> &args) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return UserError{std::string("cannot run scontrol: pipe: ") + std::strerror(errno)};
    os::UniqueFd readEnd(fds[0]), writeEnd(fds[1]);
    const std::string path = scontrolPath();
    std::vector<char *> argv;
    argv.push_back(const_cast<char *>(path.c_str()));
    for (const std::string &a : args)
        argv.push_back(const_cast<char *>(a.c_str()));
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, writeEnd.get(), 1);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    // srun blocks its signals while plugins run; scontrol must not inherit that.
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, path.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    writeEnd.reset();
    if (rc != 0)
        return UserError{"cannot run " + path + ": " + std::strerror(rc)};

    std::string out;
    bool tooLong = false, timedOut = false;
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(kScontrolTimeoutMs);
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                              deadline - std::chrono::steady_clock::now())
                              .count();
        if (left <= 0) {
            timedOut = true;
            break;
        }
        pollfd p{readEnd.get(), POLLIN, 0};
        int ready = poll(&p, 1, static_cast<int>(left));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0) {
            timedOut = ready == 0;
            break;
        }
        char chunk[16384];
        ssize_t got = read(readEnd.get(), chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        out.append(chunk, static_cast<std::size_t>(got));
        if (out.size() > kMaxScontrolBytes) {
            tooLong = true;
            break;
        }
    }
    if (timedOut || tooLong)
        kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timedOut)
        return UserError{path + " did not answer within " +
                         std::to_string(kScontrolTimeoutMs / 1000) + " s"};
    if (tooLong)
        return UserError{path + " printed more than " + std::to_string(kMaxScontrolBytes) +
                         " bytes"};
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return UserError{path + " failed (status " + std::to_string(status) + ")"};
    return out;
}

} // namespace

Expected<std::string> readJobDetail(std::uint32_t job) {
    return runScontrol({"-d", "-o", "show", "job", std::to_string(job)});
}

} // namespace stepmap::plugin
