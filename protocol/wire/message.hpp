#pragma once

// The messages node servers and the srun-side rendezvous hub exchange.

#include <cstdint>

namespace stepmap::wire {

enum class MessageType : std::uint8_t {
    Challenge = 1,      // hub -> server: hub nonce (the only unauthenticated frame)
    Hello = 2,          // server -> hub: node index, server nonce
    Fence = 3,          // server -> hub: fence id, participant nodes, collect flag, data
    FenceDone = 4,      // hub -> server: fence id, status, all nodes' data
    DmodexRequest = 5,  // server -> hub -> owner: request id, origin node, rank
    DmodexResponse = 6, // owner -> hub -> origin: request id, origin node, status, data
    Abort = 7,          // server -> hub: rank, status, message
    Shutdown = 8,       // hub -> server: the step is ending, status
    Welcome = 9,        // hub -> server: the Hello was accepted; the fence tree's fan-out
    RankExit = 10,      // server -> hub: a rank of its node failed: rank, exit status (AbortMsg)
    // The fence tree (whole-step fences; see hub/fence_tree.hpp):
    TreeListen = 11, // server -> hub: the port it takes its tree children on
    TreeParent = 12, // hub -> server: where its tree parent listens
    TreeUp = 13,     // child -> parent: a fence's contributions of the child's subtree
    TreeDown = 14,   // parent -> child: the fence's result
    Timeline = 15,   // server -> hub, as it leaves: its marks (timeline/step_timeline.hpp)
    Exchange = 16,   // server -> hub, as it leaves: its counters (timeline/exchange_counters.hpp)
    // The profile rendezvous (wire/profile_payloads.hpp):
    ProfileState = 17,   // server -> hub: whether its profile entry may be served
    ProfileVerdict = 18, // hub -> server: the nodes whose entries are withheld
    // server -> hub -> server: a fence tree message between neighbours that
    // have no direct link (the child could not join its parent):
    // TreeRelayMsg, the node the hub hands it to, then the one it came from.
    TreeRelay = 19,
    // The step's name service (wire/name_payloads.hpp, hub/name_service.hpp):
    NameRequest = 20, // server -> hub: publish, lookup or unpublish for one of its ranks
    NameReply = 21,   // hub -> server: the request's status and what a lookup found
    // server -> hub: what a rank asked for and why it was refused, for
    // srun's terminal (NoticeMsg; e.g. PMIx_Spawn, not served yet).
    Notice = 22,
    // The fence deadline (FenceProbeMsg): a server whose fence outlived it
    // tells the hub (FenceStuck); the hub asks every node of that fence
    // whether it entered it (FenceQuery) and names those that did not
    // (FenceEntered answers).
    FenceStuck = 23,
    FenceQuery = 24,
    FenceEntered = 25,
    // Job-wide operations (wire/spawn_payloads.hpp, hub/job_ids.hpp):
    Spawn = 26,          // server -> hub: a rank's PMIx_Spawn (SpawnRequestMsg)
    SpawnReply = 27,     // hub -> server: the children's namespace, or why not
    GuestStep = 28,      // a spawned step's server -> the job's hub: its step
    JobBarrier = 29,     // server -> hub: a collective over several steps
    JobBarrierDone = 30, // hub -> server: its result and the steps it joined
    // hub -> every other server of the step: a rank failed (AbortMsg, as
    // RankExit); a server serving recovery (--with-ft=ulfm) tells its ranks.
    RankFailed = 31,
    // server -> hub: a neighbour on a direct link (the fence tree) stopped
    // answering, its link or host failed (NoticeMsg: rank = that node's
    // index, text = what the connection said); srun ends the step.
    LinkLost = 32,
    // Servers join through their tree parent (hub/hub_relay.hpp): a frame of
    // a node below the relaying server, either way (RelayMsg); and, relay ->
    // hub, that a child's link ended before it said goodbye (NoticeMsg:
    // rank = the child's node index, text = what the connection said).
    Relay = 33,
    RelayClosed = 34,
    // relay -> hub: servers below the relaying server joined it (it
    // answered their Welcome and TreeParent itself), one frame for as many
    // of its subtree as came together (JoinedBelowMsg).
    JoinedBelow = 35,
};

constexpr std::size_t kNonceSize = 16;
constexpr std::size_t kMacSize = 32;
// Upper bound for one frame; a modex of a large node stays far below it.
constexpr std::uint32_t kMaxFrameSize = 256u << 20;

} // namespace stepmap::wire
