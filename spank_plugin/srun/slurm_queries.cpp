#include "srun/slurm_queries.hpp"

#include "os/user_file.hpp"
#include "request/allocation_shape.hpp"
#include "srun/job_allocation.hpp"
#include "srun/slurm_release.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <map>
#include <string_view>

namespace stepmap::plugin {

void NodeTableFree::operator()(node_info_msg_t *table) const {
    slurm_free_node_info_msg(table);
}

namespace {

// Slurm's node table: one RPC to slurmctld.
Expected<NodeTable> loadNodeTable() {
    node_info_msg_t *nodes = nullptr;
    if (slurm_load_node(0, &nodes, SHOW_ALL) != SLURM_SUCCESS || !nodes)
        return UserError{std::string("cannot read Slurm's node table: ") +
                         slurm_strerror(slurm_release::lastError())};
    return NodeTable(nodes);
}

// Loads the node table into table unless it holds it already.
Expected<void> loadNodeTableOnce(NodeTable &table) {
    if (table)
        return {};
    auto loaded = loadNodeTable();
    if (!loaded)
        return loaded.error();
    table = std::move(loaded.value());
    return {};
}

// --nodes-sort's figures for the allocated nodes: Slurm's CPUTot, its
// 1-minute CPULoad (Slurm keeps no 5- or 15-minute load) and AllocCPUs less
// this job's own CPUs there (`ownAllocation`: srun runs inside the job), so
// that PROC counts what other jobs hold.
std::vector<NodeFigures> nodeFigures(const node_info_msg_t &table, const Allocation &alloc,
                                     bool ownAllocation) {
    std::map<std::string, int, std::less<>> ownCpus;
    for (const AllocatedNode &node : alloc.nodes)
        ownCpus[node.name] = ownAllocation ? node.slots : 0;
    std::vector<NodeFigures> figures;
    for (uint32_t i = 0; i < table.record_count; ++i) {
        const node_info_t &n = table.node_array[i];
        if (!n.name)
            continue;
        const auto own = ownCpus.find(std::string_view(n.name));
        if (own == ownCpus.end())
            continue;
        const std::uint16_t allocated = slurm_release::allocatedCpus(n);
        NodeFigures f;
        f.name = n.name;
        f.hardwareThreads = n.cpus;
        f.assignedThreads = std::max(0, static_cast<int>(allocated) - own->second);
        if (n.cpu_load != NO_VAL)
            f.load1 = n.cpu_load / 100.0;
        figures.push_back(std::move(f));
    }
    return figures;
}

// PSI_NODES without an allocation indexes the usable nodes of the cluster
// in Slurm's order (ParaStation's node ids); as names, they are nodes the
// user named, which the allocation request may pass to Slurm.
Expected<NodePool> poolIndicesAsNames(const NodePool &pool, const node_info_msg_t &table) {
    std::vector<std::string> usable;
    for (uint32_t i = 0; i < table.record_count; ++i) {
        const node_info_t &n = table.node_array[i];
        if (!n.name)
            continue;
        uint32_t base = n.node_state & NODE_STATE_BASE;
        if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE ||
            (n.node_state & NODE_STATE_DRAIN))
            continue;
        usable.push_back(n.name);
    }
    NodePool named;
    named.kind = NodePool::Kind::Hosts;
    for (std::uint32_t index : pool.indices) {
        if (index >= usable.size())
            return UserError{"PSI_NODES: node " + std::to_string(index) +
                             " does not exist; Slurm has " + std::to_string(usable.size()) +
                             " usable nodes, numbered from 0"};
        named.names.push_back(usable[index]);
    }
    return named;
}

// The usable nodes a request may get when srun asks Slurm for the job: in
// its partition (any, when it names none), not excluded, and only the
// named ones when it names some.
std::vector<const node_info_t *> usableNodes(const node_info_msg_t &table,
                                             const AllocationRequest &request) {
    auto listed = [](const std::vector<std::string> &names, const char *name) {
        return std::find(names.begin(), names.end(), name) != names.end();
    };
    std::vector<const node_info_t *> pool;
    for (uint32_t i = 0; i < table.record_count; ++i) {
        const node_info_t &n = table.node_array[i];
        if (!n.name)
            continue;
        const uint32_t base = n.node_state & NODE_STATE_BASE;
        if (base == NODE_STATE_DOWN || base == NODE_STATE_FUTURE ||
            (n.node_state & NODE_STATE_DRAIN))
            continue;
        if (!request.partition.empty()) {
            const std::string partitions =
                std::string(",") + (n.partitions ? n.partitions : "") + ",";
            if (partitions.find("," + request.partition + ",") == std::string::npos)
                continue;
        }
        if (listed(request.excludedNodes, n.name) ||
            (!request.requiredNodes.empty() && !listed(request.requiredNodes, n.name)))
            continue;
        pool.push_back(&n);
    }
    return pool;
}

// The nodes --overbook may spread over, with their CPUs.
std::vector<std::pair<std::string, int>> overbookPool(const node_info_msg_t &table,
                                                      const AllocationRequest &request) {
    std::vector<std::pair<std::string, int>> pool;
    for (const node_info_t *n : usableNodes(table, request))
        pool.emplace_back(n->name, static_cast<int>(n->cpus));
    return pool;
}

// Why a request that had to start at once could not: the usable nodes
// other jobs hold CPUs of ("n2 (2 of 2 CPUs in use), ..."), the first few.
std::string busyNodesText(const node_info_msg_t &table, const AllocationRequest &request) {
    std::string text;
    unsigned shown = 0, more = 0;
    for (const node_info_t *n : usableNodes(table, request)) {
        const unsigned used = slurm_release::allocatedCpus(*n);
        if (used == 0)
            continue;
        if (shown++ >= 8) {
            ++more;
            continue;
        }
        text += (text.empty() ? "" : ", ") + std::string(n->name) + " (" + std::to_string(used) +
                " of " + std::to_string(n->cpus) + " CPUs in use)";
    }
    if (more)
        text += " and " + std::to_string(more) + " more";
    return text.empty() ? "no node it may use has CPUs in use (Slurm's limits or its queue)"
                        : "busy: " + text;
}

// Each allocated node's model from Slurm: its shape (sockets, cores,
// threads) and the CPUs this job holds there (all of them when srun makes
// its own allocation). Nodes alike share one model.
Expected<void> attachNodeModels(Allocation &alloc, const node_info_msg_t &table,
                                const std::string &job) {
    const auto jobId = static_cast<std::uint32_t>(std::strtoul(job.c_str(), nullptr, 10));
    auto cpuIds = slurm_release::jobCpuIds(jobId);
    if (!cpuIds)
        return UserError{"cannot read job " + job +
                         "'s CPUs from Slurm: " + cpuIds.error().message};
    std::map<std::string, const node_info_t *, std::less<>> byName;
    for (uint32_t i = 0; i < table.record_count; ++i)
        if (table.node_array[i].name)
            byName[table.node_array[i].name] = &table.node_array[i];
    std::map<std::string, std::shared_ptr<const NodeModel>> shared;
    for (AllocatedNode &node : alloc.nodes) {
        auto it = byName.find(node.name);
        if (it == byName.end())
            return UserError{"Slurm's node table has no node " + node.name};
        const node_info_t &n = *it->second;
        SlurmNodeShape shape;
        shape.sockets = std::max<int>(1, n.sockets);
        shape.coresPerSocket = std::max<int>(1, n.cores);
        shape.threadsPerCore = std::max<int>(1, n.threads);
        auto held = cpuIds->find(node.name);
        if (held == cpuIds->end())
            return UserError{"Slurm names no CPUs of job " + job + " on " + node.name};
        const std::string &ids = held->second;
        std::string key = std::to_string(shape.sockets) + "/" +
                          std::to_string(shape.coresPerSocket) + "/" +
                          std::to_string(shape.threadsPerCore) + "/" + ids;
        auto &model = shared[key];
        if (!model) {
            std::vector<std::uint32_t> idList;
            if (!ids.empty()) {
                auto parsed = parseCpuIdList(ids);
                if (!parsed)
                    return UserError{"Slurm's CPU ids of " + node.name + ": " +
                                     parsed.error().message};
                idList = std::move(parsed.value());
            }
            auto built = buildSlurmNodeModel(shape, idList);
            if (!built)
                return UserError{"node " + node.name + ": " + built.error().message};
            model = std::move(built.value());
        }
        node.model = model;
    }
    return {};
}

} // namespace

hub::RendezvousHub::Settings hubSettings(const SiteConfig &site) {
    hub::RendezvousHub::Settings s;
    s.host = site.hubAddress;
    s.connectDeadlineSec = site.serverStartTimeoutSec;
    s.fenceFanOut = static_cast<std::uint32_t>(site.fenceFanOut);
    s.fenceTimeoutSec = site.fenceTimeoutSec;
    if (slurm_conf_t *conf = slurm_release::loadControllerConf()) {
        if (conf->srun_port_range && conf->srun_port_range[0] > 0 &&
            conf->srun_port_range[1] >= conf->srun_port_range[0]) {
            s.portMin = conf->srun_port_range[0];
            s.portMax = conf->srun_port_range[1];
        }
        if (conf->control_cnt > 0 && conf->control_addr && conf->control_addr[0])
            s.toward = conf->control_addr[0];
        slurm_release::freeControllerConf(conf);
    }
    return s;
}

Expected<JobFromSlurm> jobAllocation(const JobToRunIn &job) {
    if (job.nodeList && job.cpusPerNode) {
        auto a = allocationOfJobVariables(job);
        if (!a)
            return a.error();
        return JobFromSlurm{std::move(a.value()), {}};
    }
    const std::string &jobId = *job.jobId;
    const uint32_t id = static_cast<uint32_t>(std::strtoul(jobId.c_str(), nullptr, 10));
    auto granted = JobAllocation::lookup(id);
    if (!granted)
        return UserError{"job " + jobId + " (SLURM_JOB_ID or --jobid) is not one Slurm knows: " +
                         granted.error().message};
    return allocationOfLookedUpJob(jobId, granted->nodeList, granted->cpusPerNode);
}

Expected<GrantedJob> requestJob(PlanRequest request, const SrunCommandLine &cmd,
                                const SrunEnvironment &environment, NodeTable &table) {
    // PSI_NODES indexes the cluster's nodes when srun has no allocation:
    // the allocation request names them.
    if (request.parastation.pool && request.parastation.pool->kind == NodePool::Kind::Nodes) {
        if (auto loaded = loadNodeTableOnce(table); !loaded)
            return loaded.error();
        auto named = poolIndicesAsNames(*request.parastation.pool, *table);
        if (!named)
            return named.error();
        request.parastation.pool = std::move(named.value());
    }
    auto shape = allocationShapeFor(request);
    if (!shape)
        return shape.error();
    // srun's input variables that shape an allocation, as set.
    std::map<std::string, std::string> variables;
    for (const std::string &name : allocationVariables())
        if (auto it = environment.find(name);
            it != environment.end() && name != slurm_release::ignoredCpusPerTaskVariable())
            variables[name] = it->second;
    auto areq = allocationRequestFor(cmd, variables, shape.value(), cmd.program.value_or("srun"),
                                     [](const std::string &path) { return readBoundedFile(path); });
    if (!areq)
        return areq.error();
    std::vector<std::string> notes;
    if (request.overbook) {
        if (auto loaded = loadNodeTableOnce(table); !loaded)
            return loaded.error();
        auto pool = overbookPool(*table, areq.value());
        auto ask = overbookOverPool(std::move(areq.value()), pool);
        areq = std::move(ask.request);
        if (!ask.note.empty())
            notes.push_back(std::move(ask.note));
    }
    auto queued = parastationQueueRules(std::move(areq.value()), request.parastation);
    if (!queued)
        return queued.error();
    notes.insert(notes.end(), queued->notes.begin(), queued->notes.end());
    const auto asked = std::chrono::steady_clock::now();
    auto granted = JobAllocation::request(queued->request);
    const double allocationMs =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - asked).count();
    if (!granted && queued->immediateForPsi) {
        // ParaStation's rule: without PSI_WAIT a request that cannot start
        // now fails at once, saying what is in the way.
        std::string busy;
        if (loadNodeTableOnce(table))
            busy = "; " + busyNodesText(*table, queued->request);
        return UserError{"the job cannot start now and PSI_WAIT is not set, so it does not wait "
                         "in Slurm's queue (" +
                         granted.error().message + busy +
                         "); set PSI_WAIT to wait until Slurm can start it"};
    }
    if (!granted)
        return granted.error();
    GrantedJob job{std::move(granted.value()), allocationMs, std::move(request), UserError{""},
                   std::move(notes)};
    auto a = allocationFromSlurm(job.job->nodeList(), job.job->cpusPerNode());
    if (!a)
        job.allocation = UserError{"cannot read job " + std::to_string(job.job->jobId()) +
                                   "'s allocation: " + a.error().message};
    else
        job.allocation = std::move(a.value());
    return job;
}

Expected<void> describeNodes(PlanRequest &request, Allocation &allocation, const std::string &job,
                             NodeTable &table) {
    // Sorting by load or processes needs Slurm's node table; nothing else
    // does, so only then does srun ask slurmctld.
    if (needsNodeFigures(request.parastation.nodesSort)) {
        if (auto loaded = loadNodeTableOnce(table); !loaded)
            return loaded.error();
        request.parastation.figures = nodeFigures(*table, allocation, true);
    }
    if (needsHardware(request)) {
        if (auto loaded = loadNodeTableOnce(table); !loaded)
            return loaded.error();
        if (auto attached = attachNodeModels(allocation, *table, job); !attached)
            return attached.error();
    }
    return {};
}

Expected<std::vector<std::string>> nodesSharedWithOtherJobs(const Allocation &allocation,
                                                            const std::vector<std::string> &used,
                                                            NodeTable &table) {
    if (auto loaded = loadNodeTableOnce(table); !loaded)
        return loaded.error();
    std::vector<std::string> shared;
    for (const NodeFigures &f : nodeFigures(*table, allocation, true)) {
        if (f.assignedThreads <= 0 || std::find(used.begin(), used.end(), f.name) == used.end())
            continue;
        shared.push_back(f.name + " (other jobs hold " + std::to_string(f.assignedThreads) +
                         " of its " + std::to_string(f.hardwareThreads) + " CPUs)");
    }
    return shared;
}

Expected<Allocation> allocationWithModels(Allocation allocation, const std::string &job) {
    NodeTable table;
    if (auto loaded = loadNodeTableOnce(table); !loaded)
        return loaded.error();
    if (auto attached = attachNodeModels(allocation, *table, job); !attached)
        return attached.error();
    return allocation;
}

} // namespace stepmap::plugin
