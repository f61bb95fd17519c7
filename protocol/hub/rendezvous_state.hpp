#pragma once

// Internal to the hub's files (rendezvous_hub.cpp, job_operations.cpp): the
// state of its loop thread.

#include "protocol/hub/fence_probes.hpp"
#include "protocol/hub/handshake_gate.hpp"
#include "protocol/hub/job_steps.hpp"
#include "protocol/hub/name_service.hpp"
#include "protocol/hub/rendezvous_hub.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"

#include <uv.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace stepmap::hub {

using wire::MessageType;

struct RendezvousHub::State {
    std::vector<std::uint32_t> nodeOfRank;
    std::set<std::uint32_t> serverNodes; // nodes that run a server
    std::string secret;
    Events events;
    Settings settings;

    uv_loop_t loop{};
    uvnet::UvHandlePtr<uv_tcp_t> listener;
    uvnet::UvHandlePtr<uv_async_t> wakeup;
    uvnet::UvHandlePtr<uv_timer_t> deadline;
    uvnet::UvHandlePtr<uv_timer_t> sweep; // closes peers that did not authenticate in time
    std::set<std::uint32_t> everConnected;
    int port = 0;
    std::string address; // numeric host, as bound
    std::thread thread;

    std::mutex mutex; // guards the shutdown request
    bool shutdownRequested = false;
    int shutdownStatus = 0;
    std::string shutdownReason;
    bool stopping = false;
    // Direct-modex requests the hub routed (RendezvousHub::modexRouted).
    std::atomic<std::uint64_t> modexRouted{0};
    std::atomic<std::uint64_t> directJoins{0}; // RendezvousHub::directJoins
    std::atomic<std::uint64_t> relayedJoinFrames{0};
    std::atomic<double> finalCpuMs{0};         // once the thread ended

    enum class PeerState {
        Unauthenticated, // may send only its Hello, within the handshake deadline
        Joined,          // the server of `node`
        Leaving,         // said goodbye, or flushed at the end: its close is no failure
    };
    struct Peer {
        uvnet::FrameConnection::Ptr conn;
        PeerState state = PeerState::Unauthenticated;
        std::uint32_t node = 0;
    };
    // Every connection, owned here until it is closed.
    std::map<uvnet::FrameConnection *, Peer> peers;
    // The joined ones, by node: their own link, or the link of the relay
    // they joined through (hub/hub_relay.hpp).
    std::map<std::uint32_t, uvnet::FrameConnection *> servers;
    std::map<std::uint32_t, std::string> addresses; // as their link or relay saw them
    std::set<std::uint32_t> orphans;                // their relay left first: may join again
    // Who may wait in PeerState::Unauthenticated, and who gives way.
    std::unique_ptr<HandshakeGate> gate;
    // At the end, connections that do not take their last frames in time
    // are cut, so a vanished node cannot keep srun from exiting.
    uvnet::UvHandlePtr<uv_timer_t> closeDeadline;

    struct Fence {
        std::set<std::uint32_t> expected;
        std::map<std::uint32_t, std::string> data;
    };
    std::map<std::string, Fence> fences;
    // What each server holds in fences not yet complete (Settings' caps).
    struct FenceLoad {
        std::size_t fences = 0;
        std::size_t bytes = 0;
    };
    std::map<std::uint32_t, FenceLoad> fenceLoad;
    // The fence tree: where each server with children takes them.
    std::uint32_t fanOut = 0;
    std::map<std::uint32_t, std::pair<std::string, std::uint32_t>> treeListeners;
    // Direct-modex requests for nodes whose server has not connected yet,
    // with the node that asked; sent on as soon as it does (each requester
    // has its own deadline). How many each server has waiting.
    std::map<std::uint32_t, std::vector<std::pair<std::uint32_t, std::string>>> waitingForServer;
    std::map<std::uint32_t, std::size_t> waitingFrom;
    // The profile rendezvous: each server's say on its own entry; the
    // verdict goes out once every server has said it, or a while after the
    // first did (a server that never says, an older one or one that got no
    // profile, is withheld rather than left to hold the others).
    std::map<std::uint32_t, bool> profileStates;
    std::optional<std::string> profileVerdict; // the payload, once sent
    uvnet::UvHandlePtr<uv_timer_t> profileDeadline;
    // The step's published names (MPI_Publish_name, the ports of
    // MPI_Comm_accept/connect); waiting lookups expire with the sweep.
    NameService names;
    std::map<std::uint32_t, unsigned> notices; // per server
    // Fences a server said outlived the deadline (hub/fence_probes.hpp).
    std::unique_ptr<FenceProbes> fenceProbes;
    // The job's steps (job_operations.cpp): this one, index 0, and those
    // its ranks spawned, whose servers join as guests; collectives over
    // several of them; spawns srun says failed (from its threads, under
    // `mutex`).
    std::unique_ptr<JobSteps> jobSteps;
    std::map<std::string, Fence> jobBarriers;
    std::map<std::string, std::vector<std::pair<std::string, std::uint32_t>>> jobBarrierProcs;
    std::map<std::string, std::uint64_t> jobBarrierStarted; // loop time, ms
    // Job-wide barriers a PMIx group construct asked a context id of, and
    // the next id to give: counting down from 2^32-1, as PRRTE does, so
    // that no id is 0 (what a reply without one carries).
    std::set<std::string> jobBarrierWantsContextId;
    std::uint64_t nextContextId = 0xffffffffu;
    std::vector<std::pair<std::uint32_t, std::string>> spawnFailures;
    std::vector<std::pair<std::uint32_t, std::string>> stepFailures;

    // Loop thread, after start.
    Expected<void> listen();
    void startTimers();
    void runLoop();
    void admit(uv_stream_t *server);
    std::vector<uvnet::FrameConnection *> peersIn(PeerState state) const;
    void onFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames);
    void onClosed(uvnet::FrameConnection &c, const std::string &why);
    void join(Peer &peer);
    // Takes node's server, on its own link (direct) or through the relays
    // on c; false if it may not join (not the step's, or already in).
    bool admitServer(std::uint32_t node, uvnet::FrameConnection &c, const std::string &seenAt,
                     bool direct);
    void onRelay(std::uint32_t from, uvnet::FrameConnection &c, wire::Frame &f);
    void onJoinedBelow(std::uint32_t from, uvnet::FrameConnection &c, const wire::Frame &f);
    void onRelayClosed(std::uint32_t from, uvnet::FrameConnection &c, const wire::Frame &f);
    // The servers reached through relay's link c are no longer (they may
    // join again directly); how many.
    std::size_t forgetRoutesThrough(uvnet::FrameConnection &c, std::uint32_t relay);
    void handle(std::uint32_t node, uvnet::FrameConnection &c, wire::Frame &f);
    void onFence(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onTreeListen(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onTreeRelay(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    // Tells child where its tree parent listens, once both are known.
    void sendTreeParent(std::uint32_t child);
    void onDmodexRequest(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onRankExit(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onProfileState(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onNameRequest(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void sendNameAnswer(const NameAnswer &answer);
    void onFenceStuck(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onNotice(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onLinkLost(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    // A node of this step by its plan name ("node index N" without one).
    std::string nodeName(std::uint32_t node) const;
    void onFenceEntered(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void expireNames();
    // Job-wide operations (job_operations.cpp).
    bool isServer(std::uint32_t node) const;
    std::optional<std::uint32_t> nodeOf(std::uint32_t rank) const;
    bool guestMaySend(MessageType type) const;
    void onSpawn(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onGuestStep(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void onJobBarrier(std::uint32_t node, uvnet::FrameConnection &c, const wire::Frame &f);
    void answerSpawn(std::uint32_t index, bool ok, const std::string &message);
    void takeSpawnFailures();
    // A server left: the job-wide barriers that wait for it cannot complete.
    void leaveJobBarriers(std::uint32_t node);
    bool leftJob(std::uint32_t node) const;
    // Job-wide barriers open longer than the fence deadline fail (the
    // processes that never entered are another step's: nobody else would
    // end them).
    void expireJobBarriers();
    void failJobBarrier(std::map<std::string, Fence>::iterator it, const std::string &why);
    void sendProfileVerdict();
    void sendTo(std::uint32_t node, MessageType type, const std::string &payload);
    void fail(const std::string &why);
    void onWakeup();
    void onConnectDeadline();
    void stopLoop();
};

} // namespace stepmap::hub
