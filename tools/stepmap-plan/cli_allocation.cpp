#include "cli_allocation.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>

#include "base/quote.hpp"
#include "cli_files.hpp"
#include "hosts/host_list.hpp"
#include "hosts/hostlist.hpp"
#include "hosts/node_model.hpp"
#include "os/user_file.hpp"

extern char **environ;

namespace stepmap::cli {

namespace {

CliAllocation plain(Allocation allocation) {
    CliAllocation out;
    out.cpuIds.resize(allocation.nodes.size());
    out.slotsGiven.assign(allocation.nodes.size(), true);
    out.allocation = std::move(allocation);
    return out;
}

Expected<CliAllocation> fromAllocationFile(const std::string &path) {
    auto text = readTextFile(path, "--allocation");
    if (!text)
        return text.error();
    auto spec = parseHostfile(text.value(), path);
    if (!spec)
        return UserError{"--allocation: " + spec.error().message};
    if (spec->exclude || spec->entries.empty())
        return UserError{"--allocation " + quoted(path, kShownPathBytes) +
                         " lists no nodes; write one \"name slots=N\" line per node"};
    CliAllocation out;
    for (const HostEntry &entry : spec->entries) {
        if (entry.maxSlots)
            return UserError{"--allocation " + quoted(path, kShownPathBytes) + ": node " +
                             entry.name +
                             " has max_slots, which an allocation cannot carry; give max_slots "
                             "in a --hostfile instead"};
        if (entry.name.rfind("+n", 0) == 0)
            return UserError{"--allocation " + quoted(path, kShownPathBytes) + ": " +
                             quoted(entry.name) + " is relative; an allocation names its nodes"};
        out.allocation.nodes.push_back(AllocatedNode{entry.name, entry.slots.value_or(1), {}});
        out.slotsGiven.push_back(entry.slots.has_value());
    }
    out.cpuIds.resize(out.allocation.nodes.size());
    return out;
}

// Runs `scontrol show job -d ID` (no shell) and returns what it printed.
Expected<std::string> runScontrol(const std::string &jobId) {
    int fds[2];
    if (pipe(fds) != 0)
        return UserError{std::string("--job: cannot create a pipe: ") + std::strerror(errno)};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[1]);
    std::string a0 = "scontrol", a1 = "show", a2 = "job", a3 = "-d", a4 = jobId;
    char *argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, "scontrol", &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (spawned != 0) {
        close(fds[0]);
        return UserError{"--job " + jobId + ": cannot run scontrol (" + std::strerror(spawned) +
                         "); --job needs Slurm's scontrol in PATH - otherwise describe the "
                         "allocation with --nodes/--cpus or --allocation"};
    }
    auto printed = readBoundedDescriptor(fds[0]);
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!printed)
        return UserError{"--job " + jobId +
                         ": cannot read what scontrol printed: " + printed.error().message};
    std::string output = std::move(printed.value());
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        while (!output.empty() && (output.back() == '\n' || output.back() == ' '))
            output.pop_back();
        return UserError{"--job " + jobId + ": scontrol show job -d " + jobId +
                         " failed: " + (output.empty() ? "no output" : escaped(output, 300)) +
                         "; check the job id"};
    }
    return output;
}

// The value of the first "key=value" token on the line whose key is `key`.
std::optional<std::string> field(std::string_view line, std::string_view key) {
    std::istringstream in{std::string(line)};
    std::string token;
    while (in >> token)
        if (token.size() > key.size() && token.compare(0, key.size(), key) == 0 &&
            token[key.size()] == '=')
            return token.substr(key.size() + 1);
    return std::nullopt;
}

} // namespace

Expected<CliAllocation> parseScontrolJob(std::string_view text, std::string_view jobId) {
    const std::string job = "--job " + std::string(jobId);
    std::optional<std::string> nodeList;
    std::string state = "unknown";
    std::map<std::string, std::vector<std::uint32_t>> idsOf;
    std::istringstream in{std::string(text)};
    std::string line;
    while (std::getline(in, line)) {
        if (auto s = field(line, "JobState"))
            state = *s;
        if (!nodeList)
            if (auto n = field(line, "NodeList"))
                nodeList = *n;
        auto nodes = field(line, "Nodes");
        auto cpus = field(line, "CPU_IDs");
        if (!nodes || !cpus)
            continue;
        auto names = expandHostlist(*nodes);
        if (!names)
            return UserError{job + ": scontrol's Nodes=" + escaped(*nodes) + ": " +
                             names.error().message};
        auto ids = parseCpuIdList(*cpus);
        if (!ids)
            return UserError{job + ": scontrol's CPU_IDs=" + escaped(*cpus) + ": " +
                             ids.error().message};
        for (const std::string &name : names.value())
            idsOf[name] = ids.value();
    }
    if (!nodeList || nodeList->empty() || *nodeList == "(null)")
        return UserError{job + " has no nodes (JobState=" + escaped(state) +
                         "); wait until it runs, or describe the allocation with --nodes/--cpus"};
    auto names = expandHostlist(*nodeList);
    if (!names)
        return UserError{job + ": scontrol's NodeList=" + escaped(*nodeList) + ": " +
                         names.error().message};
    CliAllocation out;
    out.jobId = std::string(jobId);
    for (const std::string &name : names.value()) {
        auto it = idsOf.find(name);
        if (it == idsOf.end() || it->second.empty())
            return UserError{job + ": scontrol shows no CPU_IDs for node " + name +
                             " (JobState=" + escaped(state) + "); the job must be running"};
        out.allocation.nodes.push_back(
            AllocatedNode{name, static_cast<int>(it->second.size()), {}});
        out.cpuIds.emplace_back(it->second);
        out.slotsGiven.push_back(true);
    }
    return out;
}

Expected<CliAllocation> loadAllocation(const CliOptions &options) {
    const int sources = (options.nodes || options.cpus ? 1 : 0) + (options.allocationFile ? 1 : 0) +
                        (options.job ? 1 : 0);
    if (sources > 1)
        return UserError{"give the allocation once: --nodes/--cpus, --allocation or --job"};
    if (options.nodes || options.cpus) {
        if (!options.nodes || !options.cpus)
            return UserError{options.nodes ? "--nodes needs --cpus (e.g. --cpus '2(x4)')"
                                           : "--cpus needs --nodes (e.g. --nodes 'n[1-4]')"};
        auto allocation = allocationFromSlurm(*options.nodes, *options.cpus);
        if (!allocation)
            return UserError{"--nodes/--cpus: " + allocation.error().message};
        return plain(std::move(allocation.value()));
    }
    if (options.allocationFile)
        return fromAllocationFile(*options.allocationFile);
    if (options.job) {
        const std::string &id = *options.job;
        if (id.empty() || id.find_first_not_of("0123456789_") != std::string::npos)
            return UserError{"--job " + quoted(id) + ": not a job id (digits, e.g. --job 1234)"};
        auto text = runScontrol(id);
        if (!text)
            return text.error();
        return parseScontrolJob(text.value(), id);
    }
    const char *nodeList = std::getenv("SLURM_JOB_NODELIST");
    const char *cpus = std::getenv("SLURM_JOB_CPUS_PER_NODE");
    if (!nodeList || !cpus)
        return UserError{"no allocation: give --nodes HOSTLIST --cpus SPEC, --allocation FILE "
                         "or --job ID, or run inside a Slurm allocation"};
    auto allocation = allocationFromSlurm(nodeList, cpus);
    if (!allocation)
        return UserError{"Slurm's environment (SLURM_JOB_NODELIST, SLURM_JOB_CPUS_PER_NODE): " +
                         allocation.error().message};
    CliAllocation out = plain(std::move(allocation.value()));
    if (const char *id = std::getenv("SLURM_JOB_ID"))
        out.jobId = id;
    return out;
}

} // namespace stepmap::cli
