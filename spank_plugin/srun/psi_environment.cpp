#include "srun/psi_environment.hpp"

#include "base/quote.hpp"
#include "request/parastation_request.hpp"

namespace stepmap::plugin {

namespace {

const std::string kOverbook = "PSI_OVERBOOK";
const std::string kLoopNodesFirst = "PSI_LOOP_NODES_FIRST";
const std::string kNodes = "PSI_NODES";
const std::string kHosts = "PSI_HOSTS";
const std::string kHostfile = "PSI_HOSTFILE";
const std::string kNodesSort = "PSI_NODES_SORT";
const std::string kTpp = "PSI_TPP";
const std::string kExclusive = "PSI_EXCLUSIVE";
const std::string kWait = "PSI_WAIT";
const std::string kOmpNumThreads = "OMP_NUM_THREADS";
// Pinning's variables: they shape ParaStation placement but do not engage it.
const std::string kNoPinProc = "__PSI_NO_PINPROC";
const std::string kCpuMap = "__PSI_CPUMAP";
const std::string kNoBindMem = "__PSI_NO_BINDMEM";

const std::string *lookup(const EnvironmentValues &env, const std::string &name) {
    const auto found = env.find(name);
    return found == env.end() ? nullptr : &found->second;
}

// The node pool from the first set of PSI_NODES, PSI_HOSTS, PSI_HOSTFILE.
Expected<std::optional<NodePool>> readPool(const EnvironmentValues &env, const FileReader &readFile,
                                           std::vector<std::string> &notes) {
    const std::string *chosen = nullptr;
    std::string name;
    for (const std::string *candidate : {&kNodes, &kHosts, &kHostfile}) {
        const std::string *value = lookup(env, *candidate);
        if (!value)
            continue;
        if (chosen) {
            notes.push_back(*candidate + " is ignored: " + name + " is set and comes first");
            continue;
        }
        chosen = value;
        name = *candidate;
    }
    if (!chosen)
        return std::optional<NodePool>{};
    Expected<NodePool> pool = UserError{};
    if (name == kNodes) {
        pool = parsePsiNodes(*chosen);
    } else if (name == kHosts) {
        pool = parsePsiHosts(*chosen);
    } else {
        if (chosen->empty())
            return UserError{"PSI_HOSTFILE is set but empty: give the name of a file with one "
                             "host name per line, or unset it"};
        auto text = readFile(*chosen);
        if (!text)
            return UserError{"cannot read PSI_HOSTFILE " + quoted(*chosen, kShownPathBytes) + ": " +
                             text.error().message};
        pool = parsePsiHostfile(text.value(), *chosen);
    }
    if (!pool)
        return pool.error();
    return std::optional<NodePool>{std::move(pool.value())};
}

} // namespace

const std::vector<std::string> &psiVariableNames() {
    static const std::vector<std::string> names = {
        kOverbook, kLoopNodesFirst, kNodesSort, kTpp, kNodes, kHosts, kHostfile, kExclusive, kWait};
    return names;
}

const std::vector<std::string> &environmentNamesRead() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> all = psiVariableNames();
        all.push_back(kNoPinProc);
        all.push_back(kCpuMap);
        all.push_back(kNoBindMem);
        all.push_back(kOmpNumThreads);
        return all;
    }();
    return names;
}

std::optional<std::string> firstPsiVariable(const EnvironmentValues &env) {
    for (const std::string &name : psiVariableNames()) {
        if (env.count(name))
            return name;
    }
    return std::nullopt;
}

Expected<std::vector<std::string>> applyParaStationEnvironment(const StepmapOptions &options,
                                                               const EnvironmentValues &env,
                                                               const FileReader &readFile,
                                                               PlanRequest &request) {
    std::vector<std::string> notes;
    ParaStationRequest &ps = request.parastation;

    request.overbook = options.overbook || lookup(env, kOverbook) != nullptr;
    ps.sources.overbook = options.overbook || !request.overbook ? "--overbook" : kOverbook;

    // ParaStation: PSI_OVERBOOK "also enforces PSI_EXCLUSIVE" (--overbook is
    // its option).
    ps.exclusive = request.overbook || lookup(env, kExclusive) != nullptr;
    if (!lookup(env, kExclusive) && request.overbook)
        ps.sources.exclusive = ps.sources.overbook;
    ps.fromEnvironment = firstPsiVariable(env).has_value();
    ps.wait = lookup(env, kWait) != nullptr;

    ps.loopNodesFirst = options.loopNodesFirst || lookup(env, kLoopNodesFirst) != nullptr;
    ps.sources.loopNodesFirst =
        options.loopNodesFirst || !ps.loopNodesFirst ? "--loop-nodes-first" : kLoopNodesFirst;

    if (options.nodesSort) {
        auto sort = parseNodesSort(*options.nodesSort, "--nodes-sort");
        if (!sort)
            return sort.error();
        ps.nodesSort = sort.value();
        ps.sources.nodesSort = "--nodes-sort";
        if (lookup(env, kNodesSort))
            notes.push_back(kNodesSort + " is ignored: --nodes-sort is given");
    } else if (const std::string *value = lookup(env, kNodesSort)) {
        auto sort = parseNodesSort(*value, kNodesSort);
        if (!sort)
            return sort.error();
        ps.nodesSort = sort.value();
        ps.sources.nodesSort = kNodesSort;
    }

    if (options.host || options.hostfile) {
        for (const std::string *name : {&kNodes, &kHosts, &kHostfile}) {
            if (lookup(env, *name))
                notes.push_back(*name + " is ignored: " + (options.host ? "--host" : "--hostfile") +
                                " is given");
        }
    } else {
        auto pool = readPool(env, readFile, notes);
        if (!pool)
            return pool.error();
        ps.pool = std::move(pool.value());
    }

    // Pinning: on unless __PSI_NO_PINPROC (any value); --bind-to none is
    // the planner's to see (parastationPins).
    ps.pin = lookup(env, kNoPinProc) == nullptr;
    ps.bindMemory = ps.pin && lookup(env, kNoBindMem) == nullptr;
    if (const std::string *map = lookup(env, kCpuMap)) {
        if (!ps.pin) {
            notes.push_back(kCpuMap + " is ignored: " + kNoPinProc + " turns pinning off");
        } else {
            auto cpus = parsePsiCpuMap(*map);
            if (!cpus)
                return cpus.error();
            ps.cpuMap = std::move(cpus.value());
        }
    }

    // Threads per process: only ParaStation placement reads OMP_NUM_THREADS.
    const bool engaged = request.overbook || ps.loopNodesFirst || ps.nodesSort || ps.pool ||
                         options.tpp || lookup(env, kTpp);
    const std::string *omp = lookup(env, kOmpNumThreads);
    if (options.tpp) {
        auto threads = parseThreadsPerProcess(*options.tpp, "--tpp");
        if (!threads)
            return threads.error();
        ps.threadsPerProcess = threads.value();
        ps.sources.threadsPerProcess = "--tpp";
        if (lookup(env, kTpp))
            notes.push_back(kTpp + " is ignored: --tpp is given");
    } else if (const std::string *value = lookup(env, kTpp)) {
        auto threads = parseThreadsPerProcess(*value, kTpp);
        if (!threads)
            return threads.error();
        ps.threadsPerProcess = threads.value();
        ps.sources.threadsPerProcess = kTpp;
    } else if (engaged && omp && !omp->empty()) {
        auto threads = parseOmpNumThreads(*omp);
        if (!threads)
            return threads.error();
        ps.threadsPerProcess = threads.value();
        ps.sources.threadsPerProcess = kOmpNumThreads;
    }
    return notes;
}

} // namespace stepmap::plugin
