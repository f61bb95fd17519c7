#pragma once

// A node server's authenticated connection to the step's rendezvous hub
// (in srun), and the collective operations built on it. Loop thread only.
//
// The link knows nothing of PMIx: statuses travel opaque on the wire, and
// what it needs of its node server (this node's data of a rank, the
// library's status codes and their text, the log) comes through LinkHost.

#include "protocol/hub/data_reply.hpp"
#include "protocol/hub/fence_tree.hpp"
#include "protocol/hub/hub_relay.hpp"
#include "protocol/hub/link_host.hpp"
#include "protocol/hub/peer_modex.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "protocol/timeline/step_timeline.hpp"
#include "protocol/uv/frame_connection.hpp"
#include "protocol/uv/uv_handle.hpp"
#include "protocol/wire/name_payloads.hpp"
#include "protocol/wire/spawn_payloads.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::hub {

class HubLink {
public:
    struct Settings {
        std::string hubHost;
        int hubPort = 0;
        std::string secret; // raw bytes
        std::uint32_t nodeIndex = 0;
        std::uint32_t nodeCount = 1; // the plan's
        int dmodexTimeoutSec = 60;
        // A fence that has not completed this long after this node entered
        // it is reported to the hub, which names the nodes that never
        // entered it and ends the step; 0: fences wait as long as the step.
        int fenceTimeoutSec = 0;
        // Until the first join, a connection the hub drops before the
        // handshake (it makes room when flooded) is tried again this long.
        int joinRetryMs = 30000;
        // The same for the fence tree parent; then this node's fences reach
        // it through the hub (hub/fence_tree.hpp).
        int treeJoinRetryMs = 5000;
        // Joining through the tree (hub/hub_relay.hpp): the fan-out srun's
        // hub will welcome with (0: no tree, no relays), and where this
        // node's tree parent takes its children (port 0: join srun
        // directly). A parent that does not answer within relayWaitMs is
        // passed by.
        std::uint32_t relayFanOut = 0;
        std::string relayHost;
        int relayPort = 0;
        int relayWaitMs = 1500;
        // Where this node takes its own relayed children (0: nowhere).
        int relayListenPort = 0;
        // The server's marks so far; the link adds its own (joined, fences,
        // leaving) and sends them all to the hub as it leaves.
        timeline::Recorder timeline;
    };

    // onLost: the hub went away or the step is ending; the server must stop.
    HubLink(uv_loop_t *loop, Settings settings, LinkHost &host,
            std::function<void(const std::string &)> onLost);
    ~HubLink();
    HubLink(const HubLink &) = delete;
    HubLink &operator=(const HubLink &) = delete;

    void connect();
    // Tells the hub this server leaves normally, then closes.
    void leave();

    // nodes: sorted participating node indices. A fence of every node runs
    // over the fence tree when the hub's welcome asks for one; others, and
    // all without a tree, through the hub. Until the welcome, fences wait
    // (every node must choose the same way).
    void fence(std::vector<std::uint32_t> nodes, bool collect, std::string data, DataReply done);
    // A barrier of nodes through the hub, told apart from fences and from
    // other barriers over the same nodes by label (e.g. the processes a
    // PMIx_Connect joins): two operations over one node set that nodes
    // enter in different orders still meet their own partners.
    void barrier(const std::string &label, std::vector<std::uint32_t> nodes, DataReply done);
    // Asks the owner's server directly once the step's address book is in
    // (hub/peer_modex.hpp), else, or if that fails, through the hub.
    void directModex(std::uint32_t rank, DataReply done);
    void abort(std::uint32_t rank, int status, std::string message);
    // A line for srun's terminal about rank (what it asked for that the
    // step does not serve, and why).
    void notice(std::uint32_t rank, std::string text);
    // A rank of this node ended with a non-zero status (slurmstepd says so):
    // srun exits with the first such status, as mpirun does.
    void rankExited(std::uint32_t rank, int status);
    // The profile rendezvous (wire/profile_payloads.hpp): says whether this
    // node's interconnect profile entry may be served (sent once joined);
    // onVerdict gets the nodes whose entries nobody serves, once every
    // server has said so.
    using ProfileVerdict = std::function<void(std::vector<std::uint32_t> withheld)>;
    void askProfileVerdict(bool usable, std::string reason, ProfileVerdict onVerdict);
    // The step's name service (hub/name_service.hpp): a publish, lookup or
    // unpublish for one of this node's ranks; done gets the hub's reply, or
    // nothing if the link went first. request.id is the link's to set.
    using NameDone = std::function<void(std::optional<wire::NameReplyMsg>)>;
    void names(wire::NameRequestMsg request, NameDone done);
    // Job-wide operations (hub_link_job.cpp; hub/job_ids.hpp): a rank's
    // spawn (done gets srun's answer, or nothing if the link went first),
    // a spawned step's servers saying which step they serve (first, on
    // their link to the job's hub), and collectives over several steps.
    using SpawnDone = std::function<void(std::optional<wire::SpawnReplyMsg>)>;
    void spawn(wire::SpawnRequestMsg request, SpawnDone done);
    void guestStep(const wire::GuestStepMsg &step);
    using JobBarrierDone = std::function<void(std::optional<wire::JobBarrierDoneMsg>)>;
    void jobBarrier(wire::JobBarrierMsg barrier, JobBarrierDone done);
    // A mark of the server's, made after the link took its marks.
    void mark(timeline::Mark mark) { timeline_.record(mark); }
    void mark(timeline::Mark mark, std::int64_t usec) { timeline_.record(mark, 0, usec); }

private:
    // A direct modex this node asked for; PMIx sets no deadline, so the
    // host must (the timer's data points at this entry).
    struct PendingModex {
        HubLink *link = nullptr;
        std::uint64_t id = 0;
        std::uint32_t rank = 0;
        DataReply done;
        uvnet::UvHandlePtr<uv_timer_t> timer;
    };

    void open();
    // Where the link goes now: srun's hub, or the tree parent's relay.
    const std::string &linkHost() const {
        return viaRelay_ ? settings_.relayHost : settings_.hubHost;
    }
    int linkPort() const { return viaRelay_ ? settings_.relayPort : settings_.hubPort; }
    std::string linkName() const;
    void startRelay();
    // After a relayed link failed: srun's hub directly.
    void joinDirectly(const std::string &why);
    void onClosed(const std::string &why);
    void onFrames(std::vector<wire::Frame> &frames);
    // Handles one frame; false once the connection is gone.
    bool handle(wire::Frame &f);
    void onWelcome(const wire::Frame &f);
    // Joins the fence tree the hub's welcome asked for; false once the
    // connection is gone (no port to take the children on).
    bool startTree(std::uint32_t fanOut);
    // Every server's part of the address book, over the tree (its first
    // fence on every node); then the requests that waited for it go.
    void gatherAddressBook();
    // Sends pending request id directly if it can, else through the hub.
    void routeModex(std::uint64_t id);
    void modexThroughHub(std::uint64_t id);
    // Requests wait for the address book at most kBookWaitMs, then go
    // through the hub.
    void waitForBookAtMost();
    // The book came, or cannot come: the requests that waited for it go,
    // directly if it came.
    void settleAddressBook();
    static constexpr unsigned kBookWaitMs = 1000;
    bool onTreeParent(const wire::Frame &f);
    bool onTreeRelay(const wire::Frame &f);
    void dispatchFence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                       DataReply done);
    void fenceThroughHub(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                         DataReply done);
    bool onFenceDone(const wire::Frame &f);
    bool onDmodexRequest(const wire::Frame &f);
    bool onProfileVerdict(const wire::Frame &f);
    bool onFenceQuery(const wire::Frame &f);
    // Names the fence the way every node of it does (FenceProbeMsg) and
    // watches it for the fence deadline; done cancels the watch.
    DataReply watchFence(const std::vector<std::uint32_t> &nodes, DataReply done);
    bool onNameReply(const wire::Frame &f);
    bool onSpawnReply(const wire::Frame &f);
    bool onJobBarrierDone(const wire::Frame &f);
    bool onRankFailed(const wire::Frame &f);
    void failJobOperations();
    void send(wire::MessageType type, std::string payload);
    void failAll(const std::string &why);
    // Completes a direct-modex request; a failure is logged with its reason.
    void finishModex(std::uint64_t id, int status, std::string data, const std::string &reason);

    uv_loop_t *loop_;
    Settings settings_;
    LinkHost &host_;
    LinkStatuses statuses_;
    ProfileVerdict onProfileVerdict_;
    std::function<void(const std::string &)> onLost_;
    uvnet::FrameConnection::Ptr conn_;
    bool ready_ = false;
    bool lost_ = false; // the hub went: requests fail at once
    bool everJoined_ = false;
    bool viaRelay_ = false;  // the link goes through the tree parent
    bool rejoining_ = false; // joined before, through a relay that went
    std::uint64_t relayDeadline_ = 0;
    std::uint64_t relayWait_ = 0;
    uvnet::UvHandlePtr<uv_timer_t> relayTimer_;
    std::uint64_t relayRetryMs_ = 5;  // doubling to 250 while its parent's relay is not up
    std::unique_ptr<HubRelay> relay_; // this node's children's way to srun
    bool relayDrained_ = false;
    // leave() came before the Welcome: it finishes when that arrives, or
    // after kWelcomeWaitOnLeaveMs (the plugin's stop allows 2 s).
    bool leaveWhenWelcomed_ = false;
    bool waitedForWelcome_ = false; // that wait happens once
    static constexpr unsigned kWelcomeWaitOnLeaveMs = 1000;
    static constexpr unsigned kRelayDrainMs = 800;
    static constexpr unsigned kRejoinWindowMs = 3000;
    uvnet::UvHandlePtr<uv_timer_t> retry_;
    std::uint64_t joinDeadline_ = 0;
    std::vector<std::pair<wire::MessageType, std::string>> queued_;
    std::map<std::string, std::uint64_t> fenceCounters_;
    std::map<std::string, DataReply> fences_;
    std::unique_ptr<FenceTree> tree_;
    std::unique_ptr<PeerModex> peers_;
    bool bookSettled_ = false; // the address book came, or cannot come
    bool addressBookFenced_ = false;
    bool destroying_ = false;
    std::vector<std::uint64_t> awaitingBook_;
    uvnet::UvHandlePtr<uv_timer_t> bookWait_;
    struct HeldFence {
        std::vector<std::uint32_t> nodes;
        bool collect;
        std::string data;
        DataReply done;
    };
    std::vector<HeldFence> held_; // until the welcome
    std::uint64_t nextModexId_ = 1;
    std::map<std::uint64_t, PendingModex> modex_;
    // Fences entered per node set (FenceProbeMsg's names), and the
    // deadline timers of those not complete.
    std::map<std::string, std::uint64_t> fencesEntered_;
    struct FenceWatch {
        HubLink *link = nullptr;
        std::string id;
        uvnet::UvHandlePtr<uv_timer_t> timer;
    };
    std::uint64_t nextWatch_ = 1;
    std::map<std::uint64_t, FenceWatch> fenceWatches_;
    std::uint64_t nextNameId_ = 1;
    std::map<std::uint64_t, NameDone> names_;
    std::uint64_t nextSpawnId_ = 1;
    std::map<std::uint64_t, SpawnDone> spawns_;
    std::map<std::string, JobBarrierDone> jobBarriers_;
    // For the per-step log at exit.
    unsigned fencesDone_ = 0, modexAsked_ = 0;
    // The link's part of the exchange counters: network bytes, requests answered.
    timeline::ExchangeCounters counted_;
    std::uint32_t fencesStarted_ = 0;
    timeline::Recorder timeline_;
};

} // namespace stepmap::hub
