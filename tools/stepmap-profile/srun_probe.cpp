#include "srun_probe.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <set>

#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "os/user_file.hpp"
#include "profile/profile_yaml.hpp"

extern char **environ;

namespace stepmap::tools {
namespace {

using topology::NodeProfile;

std::string commandText(const std::vector<std::string> &command) {
    std::string text;
    for (const std::string &word : command)
        text += (text.empty() ? "" : " ") + escaped(word);
    return text;
}

Expected<std::string> ownExecutable() {
    std::string path(PATH_MAX, '\0');
    const ssize_t length = readlink("/proc/self/exe", path.data(), path.size());
    if (length <= 0 || static_cast<std::size_t>(length) >= path.size())
        return UserError{std::string("cannot find this program (/proc/self/exe): ") +
                         std::strerror(errno)};
    path.resize(static_cast<std::size_t>(length));
    return path;
}

// Runs `command` with standard input from /dev/null and standard output
// read back (at most what a profile file may hold); standard error is ours.
Expected<std::string> runCapturingOutput(const std::vector<std::string> &command) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return UserError{std::string("cannot create a pipe: ") + std::strerror(errno)};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    std::vector<char *> argv;
    for (const std::string &word : command)
        argv.push_back(const_cast<char *>(word.c_str()));
    argv.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (spawned != 0) {
        close(fds[0]);
        return UserError{"cannot run " + quoted(command[0]) + ": " + std::strerror(spawned) +
                         " (srun from PATH, or set STEPMAP_SRUN)"};
    }
    auto printed = readBoundedDescriptor(fds[0], topology::kMaxProfileBytes);
    close(fds[0]); // a task printing without end now gets EPIPE
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const std::string how = WIFEXITED(status)
                                    ? "exit status " + std::to_string(WEXITSTATUS(status))
                                    : "signal " + std::to_string(WTERMSIG(status));
        return UserError{"srun failed (" + how +
                         "; its messages above name the node): " + commandText(command)};
    }
    if (!printed)
        return UserError{"the output of srun: " + printed.error().message};
    return std::move(printed.value());
}

} // namespace

std::vector<std::string> srunProbeCommand(const std::string &srun, const ProbeTargets &targets,
                                          const std::string &probeExecutable) {
    const std::string count = std::to_string(targets.nodes.size());
    return {srun,
            "--nodes=" + count,
            "--ntasks=" + count,
            "--ntasks-per-node=1",
            "--nodelist=" + targets.nodeList,
            "--kill-on-bad-exit=1",
            "--label",
            "--overlap",
            "--mpi=none",
            probeExecutable,
            "probe",
            "--name-from-slurmd"};
}

Expected<std::map<unsigned, std::string>> splitLabeledOutput(std::string_view output) {
    std::map<unsigned, std::string> tasks;
    while (!output.empty()) {
        const auto end = output.find('\n');
        const std::string_view line = output.substr(0, end);
        output.remove_prefix(end == std::string_view::npos ? output.size() : end + 1);
        const auto colon = line.find(": ");
        const auto first = line.find_first_not_of(' ');
        const auto task = colon == std::string_view::npos || first >= colon
                              ? std::nullopt
                              : detail::parseUnsigned(line.substr(first, colon - first), 1u << 30);
        if (!task)
            return UserError{"srun printed a line without a task label: " + quoted(line)};
        tasks[static_cast<unsigned>(*task)].append(line.substr(colon + 2)).append("\n");
    }
    return tasks;
}

Expected<std::vector<NodeProfile>> collectProbes(std::string_view output,
                                                 const ProbeTargets &targets) {
    const auto tasks = splitLabeledOutput(output);
    if (!tasks)
        return tasks.error();
    const std::set<std::string> wanted(targets.nodes.begin(), targets.nodes.end());
    std::map<std::string, NodeProfile> byName;
    for (const auto &[task, text] : *tasks) {
        const std::string source = "srun task " + std::to_string(task);
        auto profile = topology::loadProfileYaml(text, source);
        if (!profile)
            return profile.error();
        if (profile->nodes.size() != 1)
            return UserError{source + ": printed " + std::to_string(profile->nodes.size()) +
                             " nodes, not one"};
        NodeProfile &node = profile->nodes[0];
        if (wanted.count(node.name) == 0)
            return UserError{source + ": probed node " + quoted(node.name) + ", not one of " +
                             escaped(targets.nodeList)};
        if (byName.count(node.name) != 0)
            return UserError{source + ": node " + quoted(node.name) + " was probed twice"};
        byName.emplace(node.name, std::move(node));
    }
    std::vector<NodeProfile> nodes;
    for (const std::string &name : targets.nodes) {
        const auto found = byName.find(name);
        if (found == byName.end())
            return UserError{"no profile came back from node " + quoted(name)};
        nodes.push_back(std::move(found->second));
    }
    return nodes;
}

Expected<std::vector<NodeProfile>> probeThroughSrun(const ProbeTargets &targets) {
    const auto executable = ownExecutable();
    if (!executable)
        return executable.error();
    const char *chosen = std::getenv("STEPMAP_SRUN");
    const std::string srun = chosen != nullptr && *chosen != '\0' ? chosen : "srun";
    const auto output = runCapturingOutput(srunProbeCommand(srun, targets, *executable));
    if (!output)
        return output.error();
    return collectProbes(*output, targets);
}

} // namespace stepmap::tools
