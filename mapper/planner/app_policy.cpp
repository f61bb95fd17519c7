#include "planner/planner_stages.hpp"

#include "planner/policy_rules.hpp"

namespace stepmap::detail {

namespace {

// The application's mapping, ranking and binding over the job's.
void applyAppRequest(MapOptions &options, const AppPlan &app, bool modeled,
                     std::optional<BindingWord> &ownBinding) {
    const AppRequest &request = app.request;
    if (request.map) {
        const MapBy by = request.map->by == MapBy::Default ? options.map : request.map->by;
        applyMapPolicy(options, *request.map, by);
        if (by == MapBy::Hwthread)
            options.useHwthreads = true;
    }
    if (request.rank)
        options.rank = *request.rank;
    else if (request.map)
        options.rank = defaultRanking(options.map, options.span);
    if (request.bind && request.bind->to != BindTo::Default) {
        ownBinding = bindingWordOf(*request.bind);
        options.bind = request.bind->to;
        options.overload = request.bind->overload.value_or(false);
        options.limit = request.bind->limit.value_or(0);
    } else if (request.map) {
        options.bind =
            modeled && !options.oversubscribe ? defaultBinding(options, app.np) : BindTo::None;
        if (request.bind)
            options.overload = request.bind->overload.value_or(options.overload);
    }
}

} // namespace

Expected<AppPolicy> resolveAppPolicy(const Allocation &allocation, const NodeSelection &nodes,
                                     const JobPolicy &job, const AppPlan &app,
                                     const std::string &where) {
    AppPolicy out{job.options};
    MapOptions &options = out.options;
    applyAppRequest(options, app, nodes.modeled, out.ownBinding);
    bindHwthreadForCore(options, nodes.coresAreHwthreads);
    if (out.ownBinding)
        out.ownBinding->policy = options.bind;
    if (auto error = checkBindAbove(options, where))
        return *error;
    if (auto error = checkRankNeedsObject(options, where))
        return *error;
    BindingWord word = out.ownBinding.value_or(BindingWord{options.bind});
    if (auto error = checkCpuBinding(options, word, where))
        return *error;
    if (nodes.modeled)
        if (auto error = checkPeList(options, nodes.list, allocation, where))
            return *error;
    if (!nodes.modeled)
        options.bind = BindTo::None;
    options.ranksInPlacementOrder = ranksInPlacementOrder(options.map, options.rank);
    return out;
}

AppWords describeApp(const MapOptions &options, const JobPolicy &job,
                     const std::optional<BindingWord> &ownBinding) {
    AppWords out;
    out.mapping = job.mapping;
    // ppr shows the object it places on.
    out.mapping.policy = options.map != MapBy::Ppr ? options.map
                         : options.mapNode         ? MapBy::Node
                         : options.mapDevice       ? MapBy::Device
                                                   : mapByOf(*options.mapLevel);
    out.mapping.span = options.span;
    out.mapping.ordered = options.ordered;
    out.ranking = job.ranking;
    out.ranking.byUser = options.userRanked;
    if (options.userRanked)
        out.ranking.policy.reset();
    else
        out.ranking.policy = options.rank;
    out.binding = ownBinding.value_or(job.binding);
    out.binding.policy = options.bind;
    out.binding.overloadAllowed = options.overload;
    out.mapper = options.map == MapBy::Ppr        ? "ppr"
                 : options.map == MapBy::Seq      ? "seq"
                 : options.map == MapBy::Rankfile ? "rank_file"
                                                  : "round_robin";
    return out;
}

} // namespace stepmap::detail
