#include "srun/spawn_command.hpp"

#include "hosts/host_list.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace stepmap::plugin {

namespace {

// A spawn never starts more processes than this.
constexpr std::uint32_t kMaxSpawnedProcesses = 1u << 20;

const std::string *infoValue(const wire::SpawnRequestMsg &request, const std::string &key) {
    const std::string *found = nullptr;
    for (const auto &[k, v] : request.info)
        if (k == key)
            found = &v; // the application's, given after the job's, wins
    return found;
}

std::string lower(std::string text) {
    for (char &c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// The request's host or hostfile filter, or none.
Expected<std::optional<HostSpec>> hostFilter(const wire::SpawnRequestMsg &request,
                                             const SpawnContext &context) {
    if (const std::string *host = infoValue(request, "host")) {
        auto spec = parseHostOption(*host);
        if (!spec)
            return UserError{"the spawn's host '" + *host + "': " + spec.error().message};
        return std::optional<HostSpec>(std::move(spec.value()));
    }
    if (const std::string *file = infoValue(request, "hostfile")) {
        if (!context.readFile)
            return UserError{"the spawn's hostfile cannot be read here"};
        auto text = context.readFile(*file);
        if (!text)
            return UserError{"the spawn's hostfile " + *file + ": " + text.error().message};
        auto spec = parseHostfile(text.value(), *file);
        if (!spec)
            return spec.error();
        return std::optional<HostSpec>(std::move(spec.value()));
    }
    return std::optional<HostSpec>();
}

struct Candidate {
    std::string name;
    int slots = 0;
};

// The allocation's nodes the filter keeps, with their slots (a count in
// the filter caps them), in the allocation's order.
Expected<std::vector<Candidate>> candidates(const std::optional<HostSpec> &filter,
                                            const Allocation &allocation) {
    std::vector<Candidate> out;
    if (!filter) {
        for (const auto &node : allocation.nodes)
            out.push_back({node.name, node.slots});
        return out;
    }
    std::vector<std::string> outside;
    for (const auto &entry : filter->entries) {
        const bool known =
            std::any_of(allocation.nodes.begin(), allocation.nodes.end(),
                        [&](const AllocatedNode &n) { return n.name == entry.name; });
        if (!known)
            outside.push_back(entry.name);
    }
    if (!outside.empty()) {
        std::string names;
        for (const auto &n : outside)
            names += (names.empty() ? "" : ",") + n;
        return UserError{"At least one of the requested hosts is not included in the current "
                         "allocation: " +
                         names +
                         " (a spawn runs inside the job's nodes; allocate the job with them, "
                         "e.g. salloc -w ...)"};
    }
    for (const auto &node : allocation.nodes) {
        auto entry = std::find_if(filter->entries.begin(), filter->entries.end(),
                                  [&](const HostEntry &e) { return e.name == node.name; });
        const bool listed = entry != filter->entries.end();
        if (listed == filter->exclude)
            continue;
        int slots = node.slots;
        if (listed && entry->slots)
            slots = std::min(slots, *entry->slots);
        out.push_back({node.name, slots});
    }
    return out;
}

// Open MPI 4.1 writes npernode N and pernode as PMIx ppr "N:n": PRRTE's
// one-letter objects, spelt out as --map-by ppr takes them.
std::string pprObject(const std::string &ppr) {
    const auto colon = ppr.rfind(':');
    if (colon == std::string::npos || colon + 2 != ppr.size())
        return ppr;
    const char *word = nullptr;
    switch (ppr.back()) {
    case 'n':
        word = "node";
        break;
    case 's':
        word = "package";
        break;
    case 'c':
        word = "core";
        break;
    case 'h':
        word = "hwthread";
        break;
    default:
        return ppr;
    }
    return ppr.substr(0, colon + 1) + word;
}

} // namespace

Expected<SpawnCommand> spawnCommand(const wire::SpawnRequestMsg &request,
                                    const SpawnContext &context) {
    for (const char *key : {"add-host", "add-hostfile"})
        if (infoValue(request, key))
            return UserError{std::string("the spawn's ") + key +
                             " asks for nodes outside the job: Slurm fixed the job's nodes when "
                             "it was allocated, so allocate it with them (salloc -w ...) and "
                             "name them with host"};
    if (request.maxprocs == 0 || request.maxprocs > kMaxSpawnedProcesses)
        return UserError{"a spawn of " + std::to_string(request.maxprocs) + " processes (1 to " +
                         std::to_string(kMaxSpawnedProcesses) + ")"};
    for (const auto &line : request.env)
        if (line.find('=') == std::string::npos || line.front() == '=')
            return UserError{"the spawn's environment line '" + line.substr(0, 64) +
                             "' is not NAME=VALUE"};
    auto filter = hostFilter(request, context);
    if (!filter)
        return filter.error();
    auto nodes = candidates(filter.value(), context.allocation);
    if (!nodes)
        return nodes.error();
    if (nodes->empty())
        return UserError{"the spawn's host filter leaves none of the job's nodes"};

    std::string hosts;
    int free = 0, total = 0;
    for (const auto &node : nodes.value()) {
        auto used = context.used.find(node.name);
        const int left = node.slots - (used == context.used.end() ? 0 : used->second);
        total += node.slots;
        if (left <= 0)
            continue;
        free += left;
        hosts += (hosts.empty() ? "" : ",") + node.name + ":" + std::to_string(left);
    }
    const std::string *mapBy = infoValue(request, "map-by");
    const bool oversubscribe = mapBy && lower(*mapBy).find("oversubscribe") != std::string::npos;
    const auto wanted = static_cast<int>(request.maxprocs);
    if (free < wanted) {
        if (!oversubscribe)
            return UserError{
                std::to_string(wanted) + " processes but " + std::to_string(free) + " of the " +
                (filter.value() ? "filtered nodes' " : "allocation's ") + std::to_string(total) +
                " slots are free (the job's running steps use the others); spawn at most " +
                std::to_string(free) +
                ", or allow oversubscription (MPI_Info key map_by, value :OVERSUBSCRIBE)"};
        // Sharing the slots the running steps use, spread as the plan does.
        hosts.clear();
        for (const auto &node : nodes.value())
            hosts += (hosts.empty() ? "" : ",") + node.name + ":" + std::to_string(node.slots);
    }

    SpawnCommand out;
    auto &argv = out.argv;
    argv = {context.srun, "--jobid=" + std::to_string(context.jobId), "--overlap",
            "--ntasks=" + std::to_string(wanted), "--host=" + hosts};
    if (mapBy)
        argv.push_back("--map-by=" + *mapBy);
    else if (const std::string *ppr = infoValue(request, "ppr"))
        argv.push_back("--map-by=ppr:" + pprObject(*ppr));
    for (const char *key : {"rank-by", "bind-to"})
        if (const std::string *value = infoValue(request, key))
            argv.push_back(std::string("--") + key + "=" + *value);
    const std::string *wdir = infoValue(request, "wdir");
    const std::string &cwd = wdir ? *wdir : request.cwd;
    if (!cwd.empty())
        argv.push_back("--chdir=" + cwd);
    argv.push_back(request.cmd);
    for (std::size_t i = 1; i < request.argv.size(); ++i)
        argv.push_back(request.argv[i]);
    out.environment = request.env;
    out.summary = std::to_string(wanted) + " x " + request.cmd + " on " + hosts;
    return out;
}

} // namespace stepmap::plugin
