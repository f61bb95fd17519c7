#include "planner/planner_stages.hpp"

#include <string>

#include "base/input_limits.hpp"

namespace stepmap::detail {

namespace {

// The job's sequence for --map-by seq: the sequence file, else the hosts of
// --host or --hostfile, each as often as its slots.
std::vector<SequenceEntry> jobSequence(const PlanRequest &request) {
    std::vector<SequenceEntry> sequence = request.sequence;
    if (!sequence.empty())
        return sequence;
    const std::optional<HostSpec> &spec =
        request.host && !request.host->exclude ? request.host : request.hostfile;
    if (spec && !spec->exclude) {
        for (const HostEntry &entry : spec->entries)
            sequence.insert(sequence.end(), static_cast<std::size_t>(entry.slots.value_or(1)),
                            SequenceEntry{entry.name, ""});
    }
    return sequence;
}

// The files seq and rankfile place by: the application's, else the job's.
std::optional<UserError> attachUserMap(MapOptions &options, const AppRequest &app,
                                       const PlanRequest &request,
                                       const std::vector<SequenceEntry> &sequence, bool perApp,
                                       const std::string &where) {
    if (options.map == MapBy::Seq) {
        options.sequence = app.sequence ? &*app.sequence : &sequence;
        options.sequenceShared = !app.sequence;
        if (options.sequence->empty())
            return UserError{where + "--map-by seq places rank i on the i-th host of a sequence, "
                                     "but none was given.\nGive the hosts in rank order with "
                                     "--map-by seq:FILE=path (one host per line), --hostfile or "
                                     "--host."};
    }
    if (options.map == MapBy::Rankfile) {
        options.rankfile = app.rankfile       ? &*app.rankfile
                           : request.rankfile ? &*request.rankfile
                                              : nullptr;
        options.rankfileGlobal = !perApp && !app.rankfile;
        if (options.rankfile == nullptr)
            return UserError{where + "--map-by rankfile needs the rankfile: give "
                                     "--map-by rankfile:FILE=path"};
    }
    return std::nullopt;
}

// Places (and binds) application `app`, then ranks it; returns how many
// processes it placed.
Expected<std::uint32_t> placeAndRank(Engine &engine, std::uint32_t app, std::uint32_t np,
                                     MapOptions &options, std::size_t appCount,
                                     const std::string &where) {
    const std::size_t before = engine.mappedCount();
    if (auto error = engine.mapApp(app, np, options))
        return UserError{
            (appCount > 1 && error->message.find("application context") == std::string::npos
                 ? where
                 : std::string()) +
            error->message};
    const auto placed = static_cast<std::uint32_t>(engine.mappedCount() - before);
    if (auto error = engine.rankApp(app, placed, options, before))
        return *error;
    return placed;
}

bool anyAppPolicy(const std::vector<AppPlan> &apps) {
    for (const AppPlan &app : apps) {
        if (app.request.map || app.request.rank || app.request.bind)
            return true;
    }
    return false;
}

} // namespace

Expected<PlacedJob> placeApps(const Allocation &allocation, const PlanRequest &request,
                              const NodeSelection &nodes, const JobPolicy &job,
                              const std::vector<AppPlan> &apps) {
    const std::vector<SequenceEntry> sequence = jobSequence(request);
    PlacedJob out;
    out.perApp = anyAppPolicy(apps);
    out.mapping = job.mapping;
    Engine engine(allocation, nodes.list);
    engine.jobBinding = job.binding;
    engine.noOversubscribe = !job.options.oversubscribe;
    // Without per-application policies the applications share one set of
    // options, each starting from what the one before left (PRRTE's
    // whole-job dispatch: e.g. a binding dropped for oversubscription stays
    // dropped).
    MapOptions carried = job.options;
    std::uint32_t next = 0;
    for (std::uint32_t a = 0; a < apps.size(); ++a) {
        const std::string where =
            apps.size() > 1 ? "application context " + std::to_string(a) + ": " : std::string();
        AppPolicy policy{carried};
        if (out.perApp) {
            auto own = resolveAppPolicy(allocation, nodes, job, apps[a], where);
            if (!own)
                return own.error();
            policy = std::move(own.value());
        }
        MapOptions &options = policy.options;
        options.app = static_cast<int>(a);
        options.startRank = next;
        if (auto error =
                attachUserMap(options, apps[a].request, request, sequence, out.perApp, where))
            return *error;
        auto placed = placeAndRank(engine, a, apps[a].np, options, apps.size(), where);
        if (!placed)
            return placed.error();
        next += placed.value();
        if (next > static_cast<std::uint32_t>(kMaxRanks))
            return UserError{"too many processes: more than " + std::to_string(kMaxRanks) +
                             " requested, stepmap places at most " + std::to_string(kMaxRanks)};
        out.apps.push_back(describeApp(options, job, policy.ownBinding));
        if (!out.perApp && options.map == MapBy::Ppr)
            out.mapping.policy = out.apps.back().mapping.policy;
        if (!out.perApp)
            carried = options;
    }
    out.binding = engine.jobBinding;
    out.result = engine.take();
    return out;
}

} // namespace stepmap::detail
