#include "srun/allocation_request.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <utility>

#include "base/input_limits.hpp"
#include "base/quote.hpp"
#include "hosts/hostlist.hpp"
#include "hosts/step_nodes.hpp"
#include "request/plan_request.hpp"

namespace stepmap::plugin {

namespace {

// srun's input variables and the option each stands for (srun's own table,
// src/srun/libsrun/opt.c). Those stepmap passes on when it allocates:
const std::map<std::string, std::string> kPassedVariables = {
    {"SLURM_ACCOUNT", "account"},
    {"SLURM_CONSTRAINT", "constraint"},
    {"SLURM_DEPENDENCY", "dependency"},
    {"SLURM_EXCLUSIVE", "exclusive"},
    {"SLURM_JOB_NAME", "job-name"},
    {"SLURM_JOB_NUM_NODES", "nodes"},
    {"SLURM_MEM_PER_CPU", "mem-per-cpu"},
    {"SLURM_MEM_PER_NODE", "mem"},
    {"SLURM_NPROCS", "ntasks"},
    {"SLURM_NTASKS", "ntasks"},
    {"SLURM_NTASKS_PER_NODE", "ntasks-per-node"},
    {"SLURM_OVERCOMMIT", "overcommit"},
    {"SLURM_PARTITION", "partition"},
    {"SLURM_QOS", "qos"},
    {"SLURM_RESERVATION", "reservation"},
    {"SLURM_SPREAD_JOB", "spread-job"},
    {"SLURM_TIMELIMIT", "time"},
    {"SLURM_USE_MIN_NODES", "use-min-nodes"},
    {"SLURM_WCKEY", "wckey"},
    // srun reads one of these as -c, by release (slurm_release.hpp).
    {"SLURM_CPUS_PER_TASK", "cpus-per-task"},
    {"SRUN_CPUS_PER_TASK", "cpus-per-task"},
};
// ... and those that shape the allocation in ways stepmap does not pass on.
const std::map<std::string, std::string> kRefusedVariables = {
    {"SLURM_BURST_BUFFER", "bb"},
    {"SLURM_CLUSTERS", "clusters"},
    {"SLURM_CLUSTER_CONSTRAINT", "cluster-constraint"},
    {"SLURM_CORE_SPEC", "core-spec"},
    {"SLURM_CPUS_PER_GPU", "cpus-per-gpu"},
    {"SLURM_DELAY_BOOT", "delay-boot"},
    {"SLURM_GPUS", "gpus"},
    {"SLURM_GPUS_PER_NODE", "gpus-per-node"},
    {"SLURM_GPUS_PER_SOCKET", "gpus-per-socket"},
    {"SLURM_GPUS_PER_TASK", "gpus-per-task"},
    {"SLURM_GRES", "gres"},
    {"SLURM_GRES_FLAGS", "gres-flags"},
    {"SLURM_HINT", "hint"},
    {"SLURM_MEM_PER_GPU", "mem-per-gpu"},
    {"SLURM_NCORES_PER_SOCKET", "cores-per-socket"},
    {"SLURM_NETWORK", "network"},
    {"SLURM_NO_KILL", "no-kill"},
    {"SLURM_NSOCKETS_PER_NODE", "sockets-per-node"},
    {"SLURM_NTASKS_PER_GPU", "ntasks-per-gpu"},
    {"SLURM_NTASKS_PER_TRES", "ntasks-per-tres"},
    {"SLURM_POWER", "power"},
    {"SLURM_REQ_SWITCH", "switches"},
    {"SLURM_SIGNAL", "signal"},
    {"SLURM_THREAD_SPEC", "thread-spec"},
    {"SLURM_THREADS_PER_CORE", "threads-per-core"},
};

// One setting and where it came from ("-p", "SLURM_PARTITION").
struct Setting {
    std::string value;
    std::string source;
};

Expected<int> positive(const Setting &s, int limit) {
    auto n = parseProcessCount(s.value);
    if (!n || *n > limit)
        return UserError{s.source + " " + quoted(s.value) + ": expected a number from 1 to " +
                         std::to_string(limit)};
    return *n;
}

} // namespace

Expected<std::vector<std::string>> parseNodeNames(const std::string &source,
                                                  const std::string &value,
                                                  const NodeFileReader &readFile) {
    const Setting s{value, source};
    std::string text = s.value;
    if (text.find('/') != std::string::npos) {
        // srun reads a -w value holding '/' as a file of node names.
        auto read = readFile(text);
        if (!read)
            return UserError{"cannot read " + s.source + " file " + quoted(text, kShownPathBytes) +
                             ": " + read.error().message};
        text = read.value();
    }
    std::vector<std::string> names;
    std::string word;
    auto flush = [&]() -> Expected<void> {
        if (word.empty())
            return {};
        HostlistLimits limits;
        limits.namesSoFar = names.size();
        auto expanded = expandHostlist(word, limits);
        if (!expanded)
            return UserError{s.source + " " + quoted(word) + ": " + expanded.error().message};
        names.insert(names.end(), expanded->begin(), expanded->end());
        word.clear();
        return {};
    };
    int depth = 0;
    for (char c : text) {
        // Commas inside brackets belong to the expression: "n[1,3],n5".
        if (c == '[')
            ++depth;
        else if (c == ']' && depth > 0)
            --depth;
        if ((c == ',' && depth == 0) || std::isspace(static_cast<unsigned char>(c))) {
            if (auto ok = flush(); !ok)
                return ok.error();
            continue;
        }
        word.push_back(c);
    }
    if (auto ok = flush(); !ok)
        return ok.error();
    if (names.empty())
        return UserError{s.source + " " + quoted(s.value) + " names no node"};
    return names;
}

const std::vector<std::string> &allocationVariables() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> v;
        for (const auto &[name, _] : kPassedVariables)
            v.push_back(name);
        for (const auto &[name, _] : kRefusedVariables)
            v.push_back(name);
        return v;
    }();
    return names;
}

Expected<std::uint32_t> parseSlurmMinutes(const std::string &what, const std::string &text,
                                          bool &unlimited) {
    unlimited = false;
    std::string upper;
    for (char c : text)
        upper.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
    if (upper == "INFINITE" || upper == "UNLIMITED" || upper == "-1") {
        unlimited = true;
        return 0;
    }
    auto bad = [&] {
        return UserError{what + " " + quoted(text) +
                         ": expected minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS or "
                         "UNLIMITED"};
    };
    std::uint64_t days = 0;
    std::string rest = text;
    const bool hasDays = text.find('-') != std::string::npos;
    if (hasDays) {
        auto dash = text.find('-');
        auto d = parseProcessCount(text.substr(0, dash));
        if (text.substr(0, dash) == "0")
            d = 0;
        if (!d)
            return bad();
        days = static_cast<std::uint64_t>(*d);
        rest = text.substr(dash + 1);
    }
    std::vector<std::uint64_t> parts;
    std::string cur;
    for (std::size_t i = 0; i <= rest.size(); ++i) {
        if (i == rest.size() || rest[i] == ':') {
            if (cur.empty() || cur.size() > 9)
                return bad();
            parts.push_back(std::stoull(cur));
            cur.clear();
        } else if (std::isdigit(static_cast<unsigned char>(rest[i]))) {
            cur.push_back(rest[i]);
        } else {
            return bad();
        }
    }
    if (parts.empty() || parts.size() > 3)
        return bad();
    std::uint64_t seconds = 0;
    if (hasDays) {
        // D-H, D-H:M, D-H:M:S
        seconds = days * 86400 + parts[0] * 3600;
        if (parts.size() > 1)
            seconds += parts[1] * 60;
        if (parts.size() > 2)
            seconds += parts[2];
    } else if (parts.size() == 1) {
        seconds = parts[0] * 60; // M
    } else if (parts.size() == 2) {
        seconds = parts[0] * 60 + parts[1]; // M:S
    } else {
        seconds = parts[0] * 3600 + parts[1] * 60 + parts[2];
    }
    std::uint64_t minutes = (seconds + 59) / 60;
    if (minutes >= 0xfffffffeu)
        return bad();
    return static_cast<std::uint32_t>(minutes);
}

Expected<std::uint64_t> parseSlurmMegabytes(const std::string &what, const std::string &text) {
    auto bad = [&] {
        return UserError{what + " " + quoted(text) +
                         ": expected a size in megabytes, optionally with a K, M, G or T suffix"};
    };
    std::size_t digits = 0;
    while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits])))
        ++digits;
    if (digits == 0 || digits > 12)
        return bad();
    std::uint64_t n = std::stoull(text.substr(0, digits));
    std::string unit = text.substr(digits);
    if (unit.size() == 2 && (unit[1] == 'B' || unit[1] == 'b'))
        unit.pop_back();
    if (unit.size() > 1)
        return bad();
    switch (unit.empty() ? 'M' : std::toupper(static_cast<unsigned char>(unit[0]))) {
    case 'K':
        return (n + 1023) / 1024;
    case 'M':
        return n;
    case 'G':
        return n * 1024;
    case 'T':
        return n * 1024 * 1024;
    default:
        return bad();
    }
}

namespace {

// The allocation settings the user gave: srun's variables, then the command
// line (which wins), by srun's option name.
class Settings {
public:
    Settings(const SrunCommandLine &cmd, const std::map<std::string, std::string> &environment) {
        for (const auto &[variable, name] : kPassedVariables)
            if (auto it = environment.find(variable); it != environment.end())
                byName_[name] = Setting{it->second, variable};
        for (const SrunOption &option : cmd.options)
            if (option.role == SrunOptionRole::Allocation ||
                option.role == SrunOptionRole::StepNodes ||
                option.role == SrunOptionRole::TasksPerNode)
                byName_[option.name] = Setting{option.value.value_or(""), option.written};
    }

    // Nothing when the user did not give it.
    const Setting *find(const char *name) const {
        auto it = byName_.find(name);
        return it == byName_.end() ? nullptr : &it->second;
    }
    bool given(const char *name) const { return find(name) != nullptr; }

private:
    std::map<std::string, Setting> byName_;
};

// Refused first: the user learns of everything stepmap would drop.
std::optional<UserError> refusal(const SrunCommandLine &cmd,
                                 const std::map<std::string, std::string> &environment) {
    for (const SrunOption &option : cmd.options)
        if (option.role == SrunOptionRole::AllocationOnly)
            return UserError{option.written +
                             " shapes the job's allocation, and stepmap does not pass it on when "
                             "it asks Slurm for one; get the allocation first, e.g. `salloc " +
                             option.written + (option.value ? " " + *option.value : "") +
                             " srun ...` or #SBATCH " + option.written};
    for (const auto &[variable, name] : kRefusedVariables)
        if (environment.count(variable))
            return UserError{variable + " (srun's --" + name +
                             ") shapes the job's allocation, and stepmap does not pass it on "
                             "when it asks Slurm for one; unset it, or get the allocation first "
                             "(salloc --" +
                             name + "=... srun ...)"};
    return std::nullopt;
}

// `field` = the setting `name` as a number from 1 to `limit`, if given.
std::optional<UserError> setPositive(const Settings &settings, const char *name, int limit,
                                     std::optional<int> &field) {
    if (const Setting *s = settings.find(name)) {
        auto n = positive(*s, limit);
        if (!n)
            return n.error();
        field = *n;
    }
    return std::nullopt;
}

// Tasks, nodes, tasks per node, CPUs: the user's, else what the placement
// implies.
std::optional<UserError> setCounts(const Settings &settings, const AllocationShape &shape,
                                   AllocationRequest &r) {
    r.tasks = shape.tasks;
    if (auto error = setPositive(settings, "ntasks", kMaxRanks, r.tasks))
        return error;
    if (const Setting *s = settings.find("nodes")) {
        auto n = parseNodeCount(s->source, s->value);
        if (!n)
            return n.error();
        r.minNodes = n->min;
        r.maxNodes = n->max;
    } else if (shape.nodes) {
        r.minNodes = r.maxNodes = shape.nodes;
    }
    r.tasksPerNode = shape.tasksPerNode;
    // srun's other spelling counts only without the first.
    const char *perNode = settings.given("ntasks-per-node") ? "ntasks-per-node" : "tasks-per-node";
    if (auto error = setPositive(settings, perNode, kMaxCpusPerNode, r.tasksPerNode))
        return error;
    if (shape.cpusPerTask > 1)
        r.cpusPerTask = shape.cpusPerTask;
    if (auto error = setPositive(settings, "cpus-per-task", kMaxCpusPerNode, r.cpusPerTask))
        return error;
    if (auto error = setPositive(settings, "mincpus", kMaxCpusPerNode, r.minCpusPerNode))
        return error;
    // Named nodes that must run several processes need those CPUs there.
    if (shape.processesPerNamedNode > 1) {
        const int cpus =
            std::min(shape.processesPerNamedNode * r.cpusPerTask.value_or(1), kMaxCpusPerNode);
        r.minCpusPerNode = std::max(r.minCpusPerNode.value_or(0), cpus);
    }
    return std::nullopt;
}

std::optional<UserError> setMemory(const Settings &settings, AllocationRequest &r) {
    if (const Setting *s = settings.find("mem")) {
        auto mb = parseSlurmMegabytes(s->source, s->value);
        if (!mb)
            return mb.error();
        r.memPerNodeMb = *mb;
    }
    if (const Setting *s = settings.find("mem-per-cpu")) {
        if (r.memPerNodeMb)
            return UserError{s->source + " and --mem (or SLURM_MEM_PER_NODE) exclude each other; "
                                         "give one of them"};
        auto mb = parseSlurmMegabytes(s->source, s->value);
        if (!mb)
            return mb.error();
        r.memPerCpuMb = *mb;
    }
    return std::nullopt;
}

std::optional<UserError> setTimes(const Settings &settings, AllocationRequest &r) {
    if (const Setting *s = settings.find("time")) {
        auto m = parseSlurmMinutes(s->source, s->value, r.unlimitedTime);
        if (!m)
            return m.error();
        if (!r.unlimitedTime)
            r.timeLimitMin = *m;
    }
    if (const Setting *s = settings.find("time-min")) {
        bool unlimited = false;
        auto m = parseSlurmMinutes(s->source, s->value, unlimited);
        if (!m)
            return m.error();
        if (!unlimited)
            r.timeMinMin = *m;
    }
    return std::nullopt;
}

// Settings Slurm takes as they are written.
const std::pair<const char *, std::string AllocationRequest::*> kTextSettings[] = {
    {"job-name", &AllocationRequest::name},
    {"account", &AllocationRequest::account},
    {"partition", &AllocationRequest::partition},
    {"qos", &AllocationRequest::qos},
    {"constraint", &AllocationRequest::constraint},
    {"reservation", &AllocationRequest::reservation},
    {"dependency", &AllocationRequest::dependency},
    {"comment", &AllocationRequest::comment},
    {"wckey", &AllocationRequest::wckey},
    {"licenses", &AllocationRequest::licenses},
    {"chdir", &AllocationRequest::workDir},
};

void setTexts(const Settings &settings, const std::string &program, AllocationRequest &r) {
    for (const auto &[name, field] : kTextSettings)
        if (const Setting *s = settings.find(name))
            r.*field = s->value;
    if (r.name.empty()) {
        auto slash = program.rfind('/');
        r.name = slash == std::string::npos ? program : program.substr(slash + 1);
    }
}

// `names` = the nodes the setting `name` (-w, -x) lists, if given.
std::optional<UserError> setNodeNames(const Settings &settings, const char *name,
                                      const NodeFileReader &readNodeFile,
                                      std::vector<std::string> &names) {
    if (const Setting *s = settings.find(name)) {
        auto parsed = parseNodeNames(s->source, s->value, readNodeFile);
        if (!parsed)
            return parsed.error();
        names = std::move(parsed.value());
    }
    return std::nullopt;
}

// Required nodes: -w, then those the placement names; excluded: -x, then
// those the placement excludes. No node may be both.
std::optional<UserError> setNodes(const Settings &settings, const AllocationShape &shape,
                                  const NodeFileReader &readNodeFile, AllocationRequest &r) {
    if (auto error = setNodeNames(settings, "nodelist", readNodeFile, r.requiredNodes))
        return error;
    std::set<std::string> seen(r.requiredNodes.begin(), r.requiredNodes.end());
    for (const std::string &name : shape.namedNodes)
        if (seen.insert(name).second)
            r.requiredNodes.push_back(name);
    if (auto error = setNodeNames(settings, "exclude", readNodeFile, r.excludedNodes))
        return error;
    r.excludedNodes.insert(r.excludedNodes.end(), shape.excludedNodes.begin(),
                           shape.excludedNodes.end());
    const Setting *exclude = settings.find("exclude");
    if (!exclude)
        return std::nullopt;
    const std::set<std::string> excluded(r.excludedNodes.begin(), r.excludedNodes.end());
    const Setting *nodelist = settings.find("nodelist");
    for (const std::string &name : r.requiredNodes)
        if (excluded.count(name))
            return UserError{"node " + quoted(name) + " is both excluded by " + exclude->source +
                             " and named by " + (nodelist ? nodelist->source : shape.namedBy) +
                             "; drop it from one of them"};
    return std::nullopt;
}

std::optional<UserError> setSharing(const Settings &settings, AllocationRequest &r) {
    if (const Setting *s = settings.find("exclusive")) {
        if (s->value.empty())
            r.sharing = AllocationRequest::Sharing::Exclusive;
        else if (s->value == "user")
            r.sharing = AllocationRequest::Sharing::ExclusiveUser;
        else if (s->value == "mcs")
            r.sharing = AllocationRequest::Sharing::ExclusiveMcs;
        else
            return UserError{s->source + " " + quoted(s->value) +
                             ": expected nothing, 'user' or 'mcs'"};
    }
    if (settings.given("oversubscribe")) {
        if (r.sharing != AllocationRequest::Sharing::Default)
            return UserError{"--exclusive and --oversubscribe exclude each other; give one"};
        r.sharing = AllocationRequest::Sharing::Oversubscribe;
    }
    return std::nullopt;
}

// Needs the node counts and required nodes already set.
void setFlags(const Settings &settings, const AllocationShape &shape, AllocationRequest &r) {
    r.overcommit = settings.given("overcommit") || shape.overcommit;
    r.contiguous = settings.given("contiguous");
    r.immediate = settings.given("immediate");
    r.useMinNodes = settings.given("use-min-nodes");
    // --map-by node spreads over nodes; a node count or named nodes the
    // user gave decide instead.
    r.spread =
        settings.given("spread-job") || (shape.spread && !r.minNodes && r.requiredNodes.empty());
}

} // namespace

Expected<AllocationRequest> allocationRequestFor(
    const SrunCommandLine &cmd, const std::map<std::string, std::string> &environment,
    const AllocationShape &shape, const std::string &program, const NodeFileReader &readNodeFile) {
    if (auto refused = refusal(cmd, environment))
        return *refused;
    const Settings settings(cmd, environment);
    AllocationRequest r;
    if (auto error = setCounts(settings, shape, r))
        return *error;
    if (auto error = setMemory(settings, r))
        return *error;
    if (auto error = setTimes(settings, r))
        return *error;
    setTexts(settings, program, r);
    if (auto error = setNodes(settings, shape, readNodeFile, r))
        return *error;
    if (auto error = setSharing(settings, r))
        return *error;
    setFlags(settings, shape, r);
    return r;
}

OverbookAsk overbookOverPool(AllocationRequest request,
                             const std::vector<std::pair<std::string, int>> &pool) {
    if (request.minNodes || request.maxNodes || pool.empty())
        return {std::move(request), ""};
    long cpus = 0;
    for (const auto &[name, count] : pool)
        cpus += count;
    const long needed =
        static_cast<long>(request.tasks.value_or(1)) * request.cpusPerTask.value_or(1);
    const std::string processes = std::to_string(request.tasks.value_or(1)) +
                                  (request.tasks.value_or(1) == 1 ? " process" : " processes");
    if (needed <= cpus) {
        request.overcommit = false;
        request.spread = true;
        return {std::move(request), "--overbook: " + processes + " fit the " +
                                        std::to_string(cpus) +
                                        " CPUs of the nodes it may use; asked Slurm for them "
                                        "without overbooking"};
    }
    std::vector<std::string> names;
    for (const auto &[name, count] : pool)
        names.push_back(name);
    request.requiredNodes = names;
    request.minNodes = request.maxNodes = static_cast<int>(pool.size());
    if (request.sharing == AllocationRequest::Sharing::Default)
        request.sharing = AllocationRequest::Sharing::Exclusive;
    request.overcommit = true;
    request.spread = false;
    return {std::move(request),
            "--overbook: " + processes + " for the " + std::to_string(cpus) + " CPUs of " +
                compressHostlist(names) +
                ": asked Slurm for every one of those nodes, whole, to spread them evenly over "
                "all their CPUs"};
}

Expected<QueueAsk> parastationQueueRules(AllocationRequest request, const ParaStationRequest &ps) {
    QueueAsk ask;
    using Sharing = AllocationRequest::Sharing;
    if (ps.exclusive) {
        const std::string why = ps.sources.exclusive == "PSI_EXCLUSIVE"
                                    ? std::string("PSI_EXCLUSIVE")
                                    : ps.sources.exclusive + " (which enforces PSI_EXCLUSIVE)";
        switch (request.sharing) {
        case Sharing::Oversubscribe:
            return UserError{why + " asks for nodes no other job uses, and --oversubscribe lets "
                                   "other jobs onto them: give one of them"};
        case Sharing::Default:
        case Sharing::Exclusive:
            request.sharing = Sharing::Exclusive;
            ask.notes.push_back(why + ": asked Slurm for nodes no other job uses, held for this "
                                      "job (--exclusive)");
            break;
        case Sharing::ExclusiveUser:
        case Sharing::ExclusiveMcs:
            ask.notes.push_back(why + ": kept --exclusive=" +
                                (request.sharing == Sharing::ExclusiveUser ? "user" : "mcs") +
                                " as given: other jobs of that kind may share the nodes");
            break;
        }
    }
    if (ps.fromEnvironment && !ps.wait && !request.immediate) {
        request.immediate = true;
        ask.immediateForPsi = true;
        ask.notes.push_back("PSI_WAIT is not set: asked Slurm to start the job now or not at all "
                            "(as srun --immediate); set PSI_WAIT to wait in Slurm's queue");
    }
    ask.request = std::move(request);
    return ask;
}

} // namespace stepmap::plugin
