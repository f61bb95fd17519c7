#include "request/allocation_shape.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "base/input_limits.hpp"

namespace stepmap {

namespace {

class NamedNodes {
public:
    explicit NamedNodes(AllocationShape &shape) : shape_(shape) {}

    // `count` processes on the node, adding up within one input.
    Expected<void> add(const std::string &name, const std::string &input, int count = 1) {
        if (!name.empty() && name[0] == '+')
            return UserError{input + " names node " + name +
                             " relative to an allocation, and srun has none yet; name the "
                             "node, or run inside salloc/sbatch"};
        if (seen_.insert(name).second)
            shape_.namedNodes.push_back(name);
        if (input != input_) {
            perNode_.clear();
            input_ = input;
        }
        int &here = perNode_[name];
        here = std::min(here + count, kMaxCpusPerNode);
        shape_.processesPerNamedNode = std::max(shape_.processesPerNamedNode, here);
        if (shape_.namedBy.empty())
            shape_.namedBy = input;
        return {};
    }

private:
    AllocationShape &shape_;
    std::set<std::string> seen_;
    std::string input_;
    std::map<std::string, int> perNode_;
};

} // namespace

Expected<AllocationShape> allocationShapeFor(const PlanRequest &request) {
    AllocationShape shape;
    NamedNodes named(shape);

    if (!request.apps.empty()) {
        int total = 0;
        for (const AppRequest &app : request.apps)
            total += app.np.value_or(0);
        if (total > 0)
            shape.tasks = total;
    } else if (request.np) {
        shape.tasks = *request.np;
    }

    const MapPolicy &map = request.map;
    if (map.by == MapBy::Node || request.parastation.loopNodesFirst)
        shape.spread = true;
    if (map.by == MapBy::Ppr && map.pprObject == MapBy::Node && map.pprCount > 0) {
        shape.tasksPerNode = map.pprCount;
        if (shape.tasks)
            shape.nodes = (*shape.tasks + map.pprCount - 1) / map.pprCount;
    }
    if (map.pe)
        shape.cpusPerTask = *map.pe;
    if (request.parastation.threads() > 1)
        shape.cpusPerTask = request.parastation.threads();
    if (map.oversubscribe.value_or(false) || request.overbook)
        shape.overcommit = true;

    auto addEntries = [&](const std::optional<HostSpec> &spec,
                          const std::string &input) -> Expected<void> {
        if (!spec)
            return {};
        if (spec->exclude) {
            for (const HostEntry &entry : spec->entries)
                if (entry.name.empty() || entry.name[0] != '+')
                    shape.excludedNodes.push_back(entry.name);
            return {};
        }
        for (const HostEntry &entry : spec->entries)
            if (auto ok = named.add(entry.name, input, entry.slots.value_or(1)); !ok)
                return ok;
        return {};
    };
    if (auto ok = addEntries(request.hostfile, "--hostfile"); !ok)
        return ok.error();
    if (auto ok = addEntries(request.host, "--host"); !ok)
        return ok.error();
    for (const SequenceEntry &entry : request.sequence)
        if (auto ok = named.add(entry.host, "the --map-by seq file"); !ok)
            return ok.error();
    if (request.rankfile)
        for (const RankfileEntry &entry : request.rankfile->entries)
            if (auto ok = named.add(entry.host, "rankfile " + request.rankfile->fileName); !ok)
                return ok.error();
    if (const auto &pool = request.parastation.pool) {
        if (pool->kind == NodePool::Kind::Nodes)
            return UserError{"PSI_NODES indexes the nodes of an allocation, and srun has none "
                             "yet; name the nodes with PSI_HOSTS, or run inside salloc/sbatch"};
        for (const std::string &name : pool->names)
            if (auto ok = named.add(name, pool->describe()); !ok)
                return ok.error();
    }
    return shape;
}

} // namespace stepmap
