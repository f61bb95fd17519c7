#pragma once

// What a step exchanged between its nodes at run time: counted by each
// node server, logged as it leaves and sent to srun's hub (an Exchange
// frame); srun -v prints the step's totals. (A modex-less launch shows 0
// data fences and 0 direct modex.)

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace stepmap::timeline {

struct ExchangeCounters {
    // Fences of this node's clients that reached the node servers (PMIx calls
    // the host once per node and fence): collecting data, or not (barriers).
    std::uint32_t dataFences = 0, barriers = 0;
    // The data the collecting fences handed back here (every node's).
    std::uint64_t fenceBytes = 0;
    // Direct-modex requests of this node's clients (PMIx's store missed):
    // for a rank of this node, or of another node (asked over the hub).
    std::uint32_t modexLocal = 0, modexRemote = 0;
    // Other nodes' direct-modex requests this node answered.
    std::uint32_t modexAnswered = 0;
    // Over the network, by this node: its fence contributions and the
    // direct-modex replies it sent; the fence results and direct-modex
    // replies it received (not what it relays for its fence-tree children).
    std::uint64_t bytesSent = 0, bytesReceived = 0;

    // Field by field, saturating.
    ExchangeCounters &operator+=(const ExchangeCounters &other);
    bool operator==(const ExchangeCounters &) const = default;
};

// The wire form (an Exchange frame's payload) and its strict inverse
// (exact size, nothing trailing).
std::string encodeCounters(const ExchangeCounters &counters);
std::optional<ExchangeCounters> decodeCounters(const std::string &payload);

// A node server's log line as it leaves: "exchange: 1 data fence (162
// bytes), 2 barriers, 0 direct modex (0 local, 0 remote), 0 answered for
// other nodes; network: 81 bytes sent, 162 received".
std::string describeNodeExchange(const ExchangeCounters &counters);

// The step's totals from every node's counters. A whole-step fence reaches
// every node server once, so fences, barriers and fence bytes are the most
// any node saw (a sum would count one fence once per node); direct-modex
// requests and network bytes belong to one node each and are summed.
ExchangeCounters stepExchange(const std::map<std::uint32_t, ExchangeCounters> &nodes);

// srun -v's line: "  exchange (2 of 2 node servers reported; fences per
// step, direct modex and bytes summed over the nodes): 1 data fence ...".
std::string describeStepExchange(const std::map<std::uint32_t, ExchangeCounters> &nodes,
                                 std::size_t servers);

} // namespace stepmap::timeline
