#pragma once

// The fence deadline as srun's hub sees it (the servers' side is
// HubLink's fence watch): a server says a fence outlived the deadline; the
// hub asks every node of that fence whether it entered it, and once all
// have answered (or had no server to ask) names those that did not. Pure:
// the hub sends the queries and ends the step with the verdict.
//
// A fence is named as every node of it names it: its nodes and its count
// among the fences over them ("0,1,3,#2"; "all#2" for a fence of every
// node; wire::FenceProbeMsg).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace stepmap::hub {

// The nodes of a fence from its name, sorted and each below nodeCount;
// nothing if the name is not one.
std::optional<std::vector<std::uint32_t>> fenceNodes(const std::string &fenceId,
                                                     std::uint32_t nodeCount);

class FenceProbes {
public:
    // Why the step ends, for srun's terminal; nodeNames: the plan's (else
    // "node index N"), timeoutSec: the deadline, for the message.
    FenceProbes(std::vector<std::string> nodeNames, int timeoutSec, std::size_t maxProbes)
        : nodeNames_(std::move(nodeNames)), timeoutSec_(timeoutSec), maxProbes_(maxProbes) {}

    struct Start {
        std::vector<std::uint32_t> ask;     // the nodes to ask (their servers are joined)
        std::optional<std::string> verdict; // already: no node could be asked
    };
    // A server said fenceId (over nodes) outlived the deadline. Nothing to
    // do if it is probed already or too many are.
    Start stuck(const std::string &fenceId, const std::vector<std::uint32_t> &nodes,
                const std::set<std::uint32_t> &joined);
    // node's answer; the verdict once every asked node has answered. A
    // node where the fence completed (entered, no longer waiting) ends the
    // probe: it finished after the deadline, which is no failure.
    std::optional<std::string> answer(const std::string &fenceId, std::uint32_t node, bool entered,
                                      bool waiting);

private:
    struct Probe {
        std::set<std::uint32_t> waiting;
        std::vector<std::uint32_t> absent;
        std::size_t nodes = 0;
    };
    std::string verdict(Probe &probe) const;
    std::string nodeName(std::uint32_t node) const;

    std::vector<std::string> nodeNames_;
    int timeoutSec_;
    std::size_t maxProbes_;
    std::map<std::string, Probe> probes_;
};

} // namespace stepmap::hub
