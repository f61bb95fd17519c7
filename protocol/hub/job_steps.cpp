#include "protocol/hub/job_steps.hpp"

#include "plan/launch_plan.hpp"
#include "protocol/hub/job_ids.hpp"
#include "protocol/wire/message.hpp"

#include <algorithm>

namespace stepmap::hub {

JobSteps::JobSteps(std::string nspace, std::string plan, std::vector<std::uint32_t> nodeOfRank) {
    Step first;
    first.nspace = std::move(nspace);
    first.plan = std::move(plan);
    first.nodes.insert(nodeOfRank.begin(), nodeOfRank.end());
    first.nodeOfRank = std::move(nodeOfRank);
    first.answered = true;
    steps_.emplace(0, std::move(first));
}

std::optional<std::uint32_t> JobSteps::open(std::uint32_t requester, std::uint64_t requestId) {
    if (next_ > kMaxSpawned)
        return std::nullopt;
    Step step;
    step.requester = {requester, requestId};
    steps_.emplace(next_, std::move(step));
    return next_++;
}

bool JobSteps::mayJoin(std::uint32_t node) const {
    auto it = steps_.find(stepOf(node));
    if (it == steps_.end())
        return stepOf(node) >= kFirstAttached && stepOf(node) <= kLastStep;
    if (it->second.gone)
        return false;
    const Step &s = it->second;
    return (s.nodeOfRank.empty() && it->first != 0) || s.nodes.count(localOf(node)) > 0;
}

Expected<bool> JobSteps::guestJoined(std::uint32_t node, const wire::GuestStepMsg &msg) {
    const std::uint32_t index = stepOf(node);
    auto it = steps_.find(index);
    if (it == steps_.end() && index >= kFirstAttached && index <= kLastStep) {
        Step attached; // another srun's: nobody waits for it to start
        attached.answered = true;
        it = steps_.emplace(index, std::move(attached)).first;
    }
    if (index == 0 || it == steps_.end() || it->second.gone)
        return UserError{"a guest server of no spawned step"};
    Step &s = it->second;
    // The word that its ranks started names the step alone: its plan came
    // with the server's first word.
    if (msg.started && msg.plan.empty()) {
        if (s.nodeOfRank.empty() || msg.nspace != s.nspace || msg.stepTag != s.tag)
            return UserError{"a guest server's ranks started before it named its step"};
    } else if (s.nodeOfRank.empty()) {
        PlanLimits limits;
        limits.maxRanks = kLocalMask;
        limits.maxNodes = std::min<std::uint32_t>(limits.maxNodes, kLocalMask);
        limits.maxTextBytes = wire::kMaxFrameSize;
        auto plan = decodePlan(msg.plan, limits);
        if (!plan)
            return UserError{"the spawned step's plan: " + plan.error().message};
        if (indexOf(msg.nspace))
            return UserError{"namespace " + msg.nspace + " is another step's"};
        for (const auto &r : plan->ranks)
            s.nodeOfRank.push_back(r.node);
        s.nodes.insert(s.nodeOfRank.begin(), s.nodeOfRank.end());
        s.nspace = msg.nspace;
        s.tag = msg.stepTag;
        s.plan = msg.plan;
    } else if (msg.nspace != s.nspace || msg.plan != s.plan || msg.stepTag != s.tag) {
        return UserError{"a server of step index " + std::to_string(index) +
                         " names another namespace or plan than its first"};
    }
    if (!s.nodes.count(localOf(node)))
        return UserError{"a guest server of a node without ranks"};
    if (!msg.started) {
        if (!s.joined.insert(localOf(node)).second)
            return UserError{"a guest server joined twice"};
        return false;
    }
    if (!s.joined.count(localOf(node)) || !s.started.insert(localOf(node)).second)
        return UserError{"a guest server's ranks started twice, or before it joined"};
    return s.started.size() == s.nodes.size();
}

std::optional<JobSteps::Requester> JobSteps::answer(std::uint32_t index) {
    auto it = steps_.find(index);
    if (it == steps_.end() || it->second.answered)
        return std::nullopt;
    it->second.answered = true;
    return it->second.requester;
}

void JobSteps::forget(std::uint32_t index) {
    if (auto it = steps_.find(index); it != steps_.end() && index != 0)
        it->second.gone = true;
}

std::optional<std::uint32_t> JobSteps::nodeOf(std::uint32_t rank) const {
    auto it = steps_.find(stepOf(rank));
    if (it == steps_.end() || it->second.gone || localOf(rank) >= it->second.nodeOfRank.size())
        return std::nullopt;
    return jobWide(it->first, it->second.nodeOfRank[localOf(rank)]);
}

std::string JobSteps::nspaceOf(std::uint32_t index) const {
    auto it = steps_.find(index);
    return it == steps_.end() ? std::string() : it->second.nspace;
}

std::string JobSteps::tagOf(std::uint32_t index) const {
    auto it = steps_.find(index);
    return it == steps_.end() ? std::string() : it->second.tag;
}

std::optional<std::uint32_t> JobSteps::indexOf(const std::string &nspace) const {
    for (const auto &[index, s] : steps_)
        if (!s.gone && !s.nspace.empty() && s.nspace == nspace)
            return index;
    return std::nullopt;
}

Expected<std::set<std::uint32_t>>
JobSteps::nodesOf(const std::vector<std::pair<std::string, std::uint32_t>> &procs) const {
    std::set<std::uint32_t> nodes;
    for (const auto &[nspace, rank] : procs) {
        auto index = indexOf(nspace);
        if (!index)
            return UserError{"namespace " + nspace + " is no running step of this job"};
        const Step &s = steps_.at(*index);
        if (rank == kAllRanks) {
            for (auto n : s.nodes)
                nodes.insert(jobWide(*index, n));
            continue;
        }
        if (rank >= s.nodeOfRank.size())
            return UserError{"rank " + std::to_string(rank) + " of " + nspace +
                             " does not exist (the step has " +
                             std::to_string(s.nodeOfRank.size()) + ")"};
        nodes.insert(jobWide(*index, s.nodeOfRank[rank]));
    }
    return nodes;
}

void JobSteps::connect(const std::vector<wire::JobStepEntry> &steps, bool connected) {
    for (std::size_t a = 0; a < steps.size(); ++a)
        for (std::size_t b = a + 1; b < steps.size(); ++b) {
            const auto key = std::minmax(steps[a].index, steps[b].index);
            auto it = connections_.find(key);
            if (connected)
                ++connections_[key];
            else if (it != connections_.end() && --it->second == 0)
                connections_.erase(it);
        }
}

std::vector<std::uint32_t> JobSteps::connectedTo(std::uint32_t index) const {
    std::vector<std::uint32_t> out;
    for (const auto &[pair, count] : connections_)
        if (pair.first == index || pair.second == index)
            out.push_back(pair.first == index ? pair.second : pair.first);
    return out;
}

void JobSteps::disconnectAll(std::uint32_t index) {
    std::erase_if(connections_, [index](const auto &entry) {
        return entry.first.first == index || entry.first.second == index;
    });
}

std::vector<wire::JobStepEntry>
JobSteps::entriesOf(const std::vector<std::pair<std::string, std::uint32_t>> &procs) const {
    std::set<std::uint32_t> indices;
    for (const auto &[nspace, rank] : procs)
        if (auto index = indexOf(nspace))
            indices.insert(*index);
    std::vector<wire::JobStepEntry> out;
    for (auto index : indices) {
        const Step &s = steps_.at(index);
        out.push_back({s.nspace, index, s.plan});
    }
    return out;
}

} // namespace stepmap::hub
