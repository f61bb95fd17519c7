#include "srun/spawn_command.hpp"

#include "hosts/host_list.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace stepmap::plugin {

namespace {

// A spawn never starts more processes than this.
constexpr std::uint32_t kMaxSpawnedProcesses = 1u << 20;

const std::string *infoValue(const wire::SpawnInfo &info, const std::string &key) {
    const std::string *found = nullptr;
    for (const auto &[k, v] : info)
        if (k == key)
            found = &v; // the later (the program's, after the job's) wins
    return found;
}

std::string lower(std::string text) {
    for (char &c : text)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
}

// The request's host or hostfile filter, or none.
Expected<std::optional<HostSpec>> hostFilter(const wire::SpawnInfo &request,
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

// The keys that shape the whole spawn: the job's, then its first
// program's; every program that names hosts names the same ones.
Expected<wire::SpawnInfo> spawnKeys(const wire::SpawnRequestMsg &request) {
    wire::SpawnInfo keys = request.info;
    keys.insert(keys.end(), request.apps.front().info.begin(), request.apps.front().info.end());
    for (const auto &app : request.apps)
        for (const char *key : {"add-host", "add-hostfile"})
            if (infoValue(app.info, key) || infoValue(request.info, key))
                return UserError{std::string("the spawn's ") + key +
                                 " asks for nodes outside the job: Slurm fixed the job's nodes "
                                 "when it was allocated, so allocate it with them (salloc -w "
                                 "...) and name them with host"};
    for (const auto &app : request.apps)
        for (const char *key : {"host", "hostfile"}) {
            const std::string *mine = infoValue(app.info, key);
            const std::string *first = infoValue(keys, key);
            if (mine && (!first || *mine != *first))
                return UserError{std::string("the programs of the spawn name different ") + key +
                                 "s: stepmap places a spawn's programs over one set of hosts, so "
                                 "give each the same (or name it once, for the first)"};
        }
    return keys;
}

// A word srun's --multi-prog file takes as it is.
bool plainWord(const std::string &word) {
    return !word.empty() && word.size() <= 4096 &&
           std::none_of(word.begin(), word.end(), [](char c) {
               return std::isspace(static_cast<unsigned char>(c)) || c == '\'' || c == '"' ||
                      c == '\\' || c == '%' || c == '#';
           });
}

// The spawn's programs as srun's --multi-prog file: consecutive ranks per
// program, in order.
Expected<std::string> multiProgFile(const wire::SpawnRequestMsg &request) {
    std::string text;
    std::uint32_t first = 0;
    for (std::size_t a = 0; a < request.apps.size(); ++a) {
        const auto &app = request.apps[a];
        std::vector<std::string> words = {app.cmd};
        words.insert(words.end(), app.argv.begin() + (app.argv.empty() ? 0 : 1), app.argv.end());
        for (const auto &word : words)
            if (!plainWord(word))
                return UserError{"program " + std::to_string(a) + " of the spawn: '" +
                                 word.substr(0, 64) +
                                 "': the programs and arguments of MPI_Comm_spawn_multiple "
                                 "cannot hold spaces, quotes, backslashes, % or #"};
        const std::uint32_t last = first + app.maxprocs - 1;
        text += std::to_string(first) + (last > first ? "-" + std::to_string(last) : "");
        for (const auto &word : words)
            text += " " + word;
        text += "\n";
        first = last + 1;
    }
    return text;
}

// The srun of the spawn: its size, the hosts it fills, how it places on
// them, then the directory, the programs and their environment.
Expected<SpawnCommand> finishCommand(const wire::SpawnRequestMsg &request,
                                     const wire::SpawnInfo &keys, const SpawnContext &context,
                                     int wanted, const std::string &hosts,
                                     std::vector<std::string> placement) {
    SpawnCommand out;
    auto &argv = out.argv;
    argv = {context.srun, "--jobid=" + std::to_string(context.jobId), "--overlap",
            "--ntasks=" + std::to_string(wanted), "--host=" + hosts};
    argv.insert(argv.end(), placement.begin(), placement.end());
    if (const std::string *bind = infoValue(keys, "bind-to"))
        argv.push_back("--bind-to=" + *bind);
    // The first program's directory, as srun has one for a step.
    const wire::SpawnApp &first = request.apps.front();
    const std::string *wdir = infoValue(keys, "wdir");
    const std::string &cwd = wdir ? *wdir : first.cwd;
    if (!cwd.empty())
        argv.push_back("--chdir=" + cwd);
    if (request.apps.size() == 1) {
        argv.push_back(first.cmd);
        for (std::size_t i = 1; i < first.argv.size(); ++i)
            argv.push_back(first.argv[i]);
    } else {
        auto file = multiProgFile(request);
        if (!file)
            return file.error();
        out.multiProg = std::move(file.value());
        argv.push_back("--multi-prog");
        argv.push_back(kMultiProgFile);
    }
    // One environment for the step: a name's first value wins.
    std::set<std::string> named;
    for (const auto &app : request.apps)
        for (const auto &line : app.env)
            if (named.insert(line.substr(0, line.find('='))).second)
                out.environment.push_back(line);
    for (const auto &app : request.apps)
        out.summary +=
            (out.summary.empty() ? "" : " + ") + std::to_string(app.maxprocs) + " x " + app.cmd;
    out.summary += " on " + hosts;
    return out;
}

// parent-mapping: each node of the caller's step takes as many children
// as it holds of the step's first N ranks (modulo its size), in its node
// order; they share those nodes' slots.
Expected<SpawnCommand> parentMapped(const wire::SpawnRequestMsg &request,
                                    const wire::SpawnInfo &keys, const SpawnContext &context,
                                    int wanted) {
    for (const char *key : {"host", "hostfile", "map-by", "rank-by", "ppr"})
        if (infoValue(keys, key))
            return UserError{std::string("the spawn's parent-mapping places the children "
                                         "itself: give it no ") +
                             key};
    if (context.spawnerNodes.empty())
        return UserError{"parent-mapping: the spawning step's placement is not known"};
    std::vector<std::pair<std::string, int>> counts;
    for (int i = 0; i < wanted; ++i) {
        const std::string &node =
            context.spawnerNodes[static_cast<std::size_t>(i) % context.spawnerNodes.size()];
        auto it = std::find_if(counts.begin(), counts.end(),
                               [&](const auto &c) { return c.first == node; });
        if (it == counts.end())
            counts.emplace_back(node, 1);
        else
            ++it->second;
    }
    std::string hosts;
    for (const auto &[node, n] : counts)
        hosts += (hosts.empty() ? "" : ",") + node + ":" + std::to_string(n);
    return finishCommand(request, keys, context, wanted, hosts, {"--map-by=slot:OVERSUBSCRIBE"});
}

} // namespace

Expected<SpawnCommand> spawnCommand(const wire::SpawnRequestMsg &request,
                                    const SpawnContext &context) {
    if (request.apps.empty())
        return UserError{"the spawn names no program"};
    std::uint64_t wantedProcs = 0;
    for (const auto &app : request.apps) {
        if (app.maxprocs == 0)
            return UserError{"a program of the spawn asks for no processes"};
        if (app.cmd.front() == '-')
            return UserError{"the spawn's program '" + app.cmd.substr(0, 64) +
                             "' begins with '-' (srun would read it as an option)"};
        wantedProcs += app.maxprocs;
    }
    if (wantedProcs > kMaxSpawnedProcesses)
        return UserError{"a spawn of " + std::to_string(wantedProcs) + " processes (1 to " +
                         std::to_string(kMaxSpawnedProcesses) + ")"};
    for (const auto &app : request.apps)
        for (const auto &line : app.env)
            if (line.find('=') == std::string::npos || line.front() == '=')
                return UserError{"the spawn's environment line '" + line.substr(0, 64) +
                                 "' is not NAME=VALUE"};
    auto keyed = spawnKeys(request);
    if (!keyed)
        return keyed.error();
    const wire::SpawnInfo &keys = keyed.value();
    if (const std::string *parent = infoValue(keys, "parent-mapping")) {
        const std::string value = lower(*parent);
        if (value != "true" && value != "1" && value != "yes" && value != "false" && value != "0" &&
            value != "no")
            return UserError{"the spawn's parent-mapping '" + *parent +
                             "': expected true or false"};
        if (value == "true" || value == "1" || value == "yes")
            return parentMapped(request, keys, context, static_cast<int>(wantedProcs));
    }
    auto filter = hostFilter(keys, context);
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
    const std::string *mapBy = infoValue(keys, "map-by");
    const bool oversubscribe = mapBy && lower(*mapBy).find("oversubscribe") != std::string::npos;
    const auto wanted = static_cast<int>(wantedProcs);
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

    std::vector<std::string> placement;
    if (mapBy)
        placement.push_back("--map-by=" + *mapBy);
    else if (const std::string *ppr = infoValue(keys, "ppr"))
        placement.push_back("--map-by=ppr:" + pprObject(*ppr));
    if (const std::string *rankBy = infoValue(keys, "rank-by"))
        placement.push_back("--rank-by=" + *rankBy);
    return finishCommand(request, keys, context, wanted, hosts, std::move(placement));
}

} // namespace stepmap::plugin
