#include "protocol/hub/hub_link.hpp"

#include "protocol/wire/payloads.hpp"
#include "protocol/wire/profile_payloads.hpp"

#include <algorithm>
#include <charconv>

namespace stepmap::hub {

using wire::MessageType;

HubLink::HubLink(uv_loop_t *loop, Settings settings, LinkHost &host,
                 std::function<void(const std::string &)> onLost)
    : loop_(loop), settings_(std::move(settings)), host_(host), statuses_(host.statuses()),
      onLost_(std::move(onLost)), timeline_(settings_.timeline) {}

HubLink::~HubLink() {
    onLost_ = nullptr;
    // The tree's own fence (the address book) fails quietly here: the
    // server may be gone already.
    destroying_ = true;
    failAll("server is stopping");
    relay_.reset();
    conn_.reset();
}

void HubLink::connect() {
    retry_ = uvnet::makeTimer(loop_);
    retry_->data = this;
    joinDeadline_ = uv_now(loop_) + static_cast<std::uint64_t>(settings_.joinRetryMs);
    startRelay();
    viaRelay_ = settings_.relayPort > 0 && !settings_.relayHost.empty();
    // The parent's own join may take its wait too, and so on up: each
    // level below srun's waits one more.
    std::uint64_t wait = 0;
    if (viaRelay_) {
        const TreeShape shape(settings_.nodeCount, std::max(settings_.relayFanOut, 1u));
        for (std::uint32_t n = settings_.nodeIndex; shape.joinsThroughParent(n);
             n = shape.parentOf(n))
            wait += static_cast<std::uint64_t>(settings_.relayWaitMs);
    }
    relayWait_ = wait;
    relayDeadline_ = uv_now(loop_) + wait;
    if (viaRelay_) {
        // A parent that takes the connection but never welcomes this node
        // (its server hangs, or the port is someone else's) is passed by.
        relayTimer_ = uvnet::makeTimer(loop_);
        relayTimer_->data = this;
        uv_timer_start(
            relayTimer_.get(),
            [](uv_timer_t *t) {
                auto *self = static_cast<HubLink *>(t->data);
                if (self->viaRelay_ && !self->everJoined_ && self->conn_)
                    self->conn_->close("no welcome through it within " +
                                       std::to_string(self->relayWait_) + " ms");
            },
            wait, 0);
    }
    open();
}

std::string HubLink::linkName() const {
    return viaRelay_ ? "its tree parent's relay at " + settings_.relayHost + ":" +
                           std::to_string(settings_.relayPort)
                     : "srun's rendezvous at " + settings_.hubHost + ":" +
                           std::to_string(settings_.hubPort);
}

void HubLink::startRelay() {
    if (settings_.relayListenPort <= 0 || settings_.relayFanOut == 0)
        return;
    const TreeShape shape(settings_.nodeCount, settings_.relayFanOut);
    bool hasRelayed = false;
    for (auto child : shape.childrenOf(settings_.nodeIndex))
        hasRelayed = hasRelayed || shape.joinsThroughParent(child);
    if (!hasRelayed)
        return;
    HubRelay::Settings rs;
    rs.secret = settings_.secret;
    rs.nodeIndex = settings_.nodeIndex;
    rs.shape = shape;
    rs.log = [this](const std::string &line) {
        if (!destroying_)
            host_.log(line);
    };
    rs.sendUp = [this](MessageType type, std::string payload) { send(type, std::move(payload)); };
    relay_ = std::make_unique<HubRelay>(loop_, std::move(rs));
    if (auto listening = relay_->listen(settings_.relayListenPort); !listening) {
        // Its children find nobody there and join srun directly.
        host_.log(listening.error().message + "; its tree children join srun directly");
        relay_.reset();
        return;
    }
    host_.log("takes its tree children's joins on port " +
              std::to_string(settings_.relayListenPort));
}

void HubLink::joinDirectly(const std::string &why) {
    host_.log("could not go through " + linkName() + " (" + why + "); joins srun directly");
    viaRelay_ = false;
    relayTimer_.reset();
    // Rejoining, srun's rendezvous was up a moment ago: one that refuses
    // for kRejoinWindowMs has ended the step; no need to wait out the
    // join's whole window.
    const int window = rejoining_
                           ? std::min(settings_.joinRetryMs, static_cast<int>(kRejoinWindowMs))
                           : settings_.joinRetryMs;
    joinDeadline_ = uv_now(loop_) + static_cast<std::uint64_t>(window);
    open();
}

void HubLink::open() {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &, std::vector<wire::Frame> &frames) {
        onFrames(frames);
    };
    cb.onClosed = [this](uvnet::FrameConnection &, const std::string &why) { onClosed(why); };
    conn_ = uvnet::FrameConnection::connect(loop_, linkHost(), linkPort(), settings_.secret,
                                            std::move(cb));
    // A failure to resolve or connect was reported (onClosed) already.
    if (conn_ && conn_->closing())
        conn_.reset();
}

void HubLink::onClosed(const std::string &why) {
    conn_.reset();
    ready_ = false;
    if (leaveWhenWelcomed_) { // leaving anyway: no retry
        uv_timer_stop(retry_.get());
        leaveWhenWelcomed_ = false;
        leave();
        return;
    }
    if (viaRelay_ && onLost_ && !destroying_) {
        // The tree parent is not there yet (it starts as this node does),
        // or cannot take this node: a moment more, then srun directly. A
        // relay that went after this node joined (its server left first):
        // srun directly, at once.
        // Its parent usually starts within milliseconds of it: look again
        // soon, then less often.
        if (!everJoined_ && uv_now(loop_) + relayRetryMs_ < relayDeadline_) {
            uv_timer_start(
                retry_.get(), [](uv_timer_t *t) { static_cast<HubLink *>(t->data)->open(); },
                relayRetryMs_, 0);
            relayRetryMs_ = std::min<std::uint64_t>(relayRetryMs_ * 2, 250);
            return;
        }
        rejoining_ = everJoined_;
        if (everJoined_)
            host_.log("its tree parent's relay ended (" + why + "); joins srun directly");
        joinDirectly(why);
        return;
    }
    if ((!everJoined_ || rejoining_) && onLost_ && uv_now(loop_) + 250 < joinDeadline_) {
        host_.log("could not join srun's rendezvous (" + why + "); trying again");
        uv_timer_start(
            retry_.get(), [](uv_timer_t *t) { static_cast<HubLink *>(t->data)->open(); }, 250, 0);
        return;
    }
    lost_ = true;
    failAll("lost the connection to srun's rendezvous: " + why);
    // The servers below go too, told why: rejoining srun without this one
    // would only find the step ending.
    if (relay_ && everJoined_)
        relay_->shutdownAll(wire::encode(
            wire::ShutdownMsg{1, "their tree parent lost srun's rendezvous (" + why + ")"}));
    if (onLost_)
        onLost_("connection to " + linkName() + " ended: " + why);
}

void HubLink::leave() {
    onProfileVerdict_ = nullptr;
    relayTimer_.reset();
    if (retry_)
        uv_timer_stop(retry_.get());
    // Connected but not welcomed yet (a rank that failed at once stops the
    // server that early): srun counts this server in already, and a close
    // without goodbye would read as a lost server and end the step. Wait a
    // moment for the Welcome, then say what there is to say and go.
    // Once only: a hub that takes the connection and never answers must not
    // keep the server waiting past the plugin's stop.
    if (!ready_ && conn_ && !conn_->closing() && retry_ && !waitedForWelcome_) {
        waitedForWelcome_ = true;
        leaveWhenWelcomed_ = true;
        uv_timer_start(
            retry_.get(),
            [](uv_timer_t *t) {
                auto *self = static_cast<HubLink *>(t->data);
                self->leaveWhenWelcomed_ = false;
                self->leave();
            },
            kWelcomeWaitOnLeaveMs, 0);
        return;
    }
    leaveWhenWelcomed_ = false;
    // The children that joined through this node go first (they may still
    // have their goodbyes to pass on), a moment at most: the plugin's stop
    // allows 2 s in all. Without a link to srun (it ended the step, or is
    // lost) the relay still closes its port and waits for them: its
    // listener would otherwise keep the server running.
    if (relay_ && !relayDrained_) {
        relayDrained_ = true;
        relay_->drain(kRelayDrainMs, [this] { leave(); });
        return;
    }
    // The address book's tree fence is the link's own, not a rank's.
    const unsigned fences =
        fencesDone_ + (tree_ ? tree_->fencesDone() : 0) - (addressBookFenced_ ? 1 : 0);
    tree_.reset();
    if (peers_)
        peers_->leave();
    host_.log("served " + std::to_string(fences) + " fences, asked " + std::to_string(modexAsked_) +
              " and answered " + std::to_string(counted_.modexAnswered) + " direct-modex requests");
    timeline::ExchangeCounters exchange = host_.exchangeCounters();
    exchange += counted_;
    host_.log(timeline::describeNodeExchange(exchange));
    if (!conn_)
        return;
    onLost_ = nullptr;
    timeline_.record(timeline::Mark::Leaving);
    if (ready_) {
        // srun -v's breakdown of the step (timeline/critical_path.hpp) and
        // its exchange totals (timeline/exchange_counters.hpp).
        conn_->send(MessageType::Exchange, timeline::encodeCounters(exchange));
        conn_->send(MessageType::Timeline, timeline::encodeEvents(timeline_.events()));
        conn_->send(MessageType::Shutdown, wire::encode(wire::ShutdownMsg{0, "done"}));
    }
    conn_->closeAfterFlush("leaving");
}

void HubLink::send(MessageType type, std::string payload) {
    if (ready_ && conn_)
        conn_->send(type, payload);
    else
        queued_.emplace_back(type, std::move(payload));
}

void HubLink::onFrames(std::vector<wire::Frame> &frames) {
    for (auto &f : frames)
        if (!handle(f))
            return;
}

bool HubLink::handle(wire::Frame &f) {
    switch (f.type) {
    case MessageType::Challenge:
        conn_->send(conn_->channel().makeHello(settings_.nodeIndex));
        return true;
    case MessageType::Welcome:
        onWelcome(f);
        return conn_ != nullptr;
    case MessageType::TreeParent:
        return onTreeParent(f);
    case MessageType::TreeRelay:
        return onTreeRelay(f);
    case MessageType::FenceDone:
        return onFenceDone(f);
    case MessageType::DmodexRequest:
        return onDmodexRequest(f);
    case MessageType::ProfileVerdict:
        return onProfileVerdict(f);
    case MessageType::NameReply:
        return onNameReply(f);
    case MessageType::SpawnReply:
        return onSpawnReply(f);
    case MessageType::JobBarrierDone:
        return onJobBarrierDone(f);
    case MessageType::RankFailed:
        return onRankFailed(f);
    case MessageType::FenceQuery:
        return onFenceQuery(f);
    case MessageType::DmodexResponse: {
        auto m = wire::decodeDmodexResponse(f.payload);
        if (!m) {
            conn_->close("malformed direct modex response");
            return false;
        }
        if (m->status == kHubRankGone)
            finishModex(m->requestId, statuses_.notFound, {},
                        "the rank's step has ended or its node's server left");
        else
            finishModex(m->requestId, m->status, std::move(m->data), "the owning node answered so");
        return true;
    }
    case MessageType::Relay: {
        auto m = wire::decodeRelay(f.payload);
        if (!m || !relay_ || !relay_->down(std::move(*m))) {
            conn_->close("unexpected relay");
            return false;
        }
        return true;
    }
    case MessageType::Shutdown: {
        if (relay_)
            relay_->shutdownAll(f.payload);
        auto m = wire::decodeShutdown(f.payload);
        std::string why = m ? m->reason : "shutdown";
        auto lost = std::move(onLost_);
        conn_->close("hub ends the step");
        if (lost)
            lost("srun ends the step: " + why);
        return false;
    }
    default:
        conn_->close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
        return false;
    }
}

void HubLink::onWelcome(const wire::Frame &f) {
    auto m = wire::decodeWelcome(f.payload);
    if (!m || (everJoined_ && !rejoining_)) {
        conn_->close("malformed welcome");
        return;
    }
    if (rejoining_) {
        // Back in, directly: what waited goes; the tree stands as it was.
        rejoining_ = false;
        ready_ = true;
        host_.log("joined srun's rendezvous again, directly");
        for (auto &[type, payload] : queued_)
            conn_->send(type, payload);
        queued_.clear();
        if (leaveWhenWelcomed_) {
            leaveWhenWelcomed_ = false;
            leave();
        }
        return;
    }
    // Only now is this server in the step: until then the hub may drop the
    // connection (it makes room when flooded) and we retry.
    ready_ = true;
    relayTimer_.reset(); // welcomed: nothing to pass by (and it would hold the loop)
    if (!everJoined_)
        timeline_.record(timeline::Mark::Joined);
    everJoined_ = true;
    host_.log(viaRelay_ ? "joined srun's rendezvous through its tree parent"
                        : "joined srun's rendezvous");
    for (auto &[type, payload] : queued_)
        conn_->send(type, payload);
    queued_.clear();
    if (leaveWhenWelcomed_) {
        leaveWhenWelcomed_ = false;
        leave();
        return;
    }
    if (m->fanOut > 0 && settings_.nodeCount > 1 && !startTree(m->fanOut))
        return;
    if (!peers_)
        settleAddressBook(); // no tree, no book: what waited goes to the hub
    auto held = std::move(held_);
    held_.clear();
    for (auto &h : held)
        dispatchFence(std::move(h.nodes), h.collect, std::move(h.data), std::move(h.done));
}

bool HubLink::startTree(std::uint32_t fanOut) {
    FenceTree::Settings ts{settings_.secret, settings_.nodeIndex,
                           TreeShape(settings_.nodeCount, fanOut), statuses_};
    ts.joinRetryMs = settings_.treeJoinRetryMs;
    ts.log = [this](const std::string &line) {
        if (!destroying_)
            host_.log(line);
    };
    // A neighbour this node cannot reach directly, through the hub.
    ts.viaHub = [this](std::uint32_t node, std::string payload) {
        send(MessageType::TreeRelay, wire::encode(wire::TreeRelayMsg{node, std::move(payload)}));
    };
    ts.onLinkFailed = [this](std::uint32_t node, const std::string &why) {
        send(MessageType::LinkLost, wire::encode(wire::NoticeMsg{node, why}));
    };
    tree_ = std::make_unique<FenceTree>(loop_, std::move(ts));
    gatherAddressBook();
    if (!tree_->hasChildren())
        return true;
    const auto port = tree_->listen(conn_->tcp());
    if (!port) {
        conn_->close(port.error().message);
        return false;
    }
    host_.log("taking its fence tree children on port " + std::to_string(*port));
    if (relay_)
        relay_->welcomed(fanOut, static_cast<std::uint32_t>(*port));
    conn_->send(MessageType::TreeListen,
                wire::encode(wire::TreeListenMsg{static_cast<std::uint32_t>(*port)}));
    return true;
}

void HubLink::gatherAddressBook() {
    PeerModex::Settings ps;
    ps.secret = settings_.secret;
    ps.nodeIndex = settings_.nodeIndex;
    ps.nodeCount = settings_.nodeCount;
    ps.onAnswer = [this](std::uint64_t id, int status, std::string data) {
        if (status == kHubRankGone)
            finishModex(id, statuses_.notFound, {}, "the rank's node's server left");
        else
            finishModex(id, status, std::move(data), "the owning node answered so");
    };
    ps.onDetour = [this](std::uint64_t id) { modexThroughHub(id); };
    peers_ = std::make_unique<PeerModex>(loop_, std::move(ps), host_, counted_);
    std::string entry = peers_->listen(conn_->tcp());
    // Every node's first tree fence: the sequences stay the same on all.
    tree_->fence(true, std::move(entry), [this](int status, std::string data) {
        if (destroying_)
            return;
        auto book = status == statuses_.success ? decodeAddressBook(data, settings_.nodeCount)
                                                : std::nullopt;
        addressBookFenced_ = status == statuses_.success;
        if (book)
            peers_->setAddressBook(std::move(*book));
        else
            host_.log("no address book of the step's servers (" +
                      (status == statuses_.success ? std::string("malformed")
                                                   : host_.statusText(status)) +
                      "); direct modex goes through srun's hub");
        settleAddressBook();
    });
}

bool HubLink::onTreeParent(const wire::Frame &f) {
    auto m = wire::decodeTreeParent(f.payload);
    if (!m || !tree_ || settings_.nodeIndex == 0 ||
        m->parentNode != tree_->shape().parentOf(settings_.nodeIndex)) {
        conn_->close("malformed fence tree parent");
        return false;
    }
    tree_->connectParent(m->host, static_cast<int>(m->port));
    return true;
}

bool HubLink::onTreeRelay(const wire::Frame &f) {
    auto m = wire::decodeTreeRelay(f.payload);
    if (!m || !tree_) {
        conn_->close("malformed fence tree relay");
        return false;
    }
    tree_->relayed(m->node, m->payload);
    return true;
}

bool HubLink::onFenceDone(const wire::Frame &f) {
    auto m = wire::decodeFenceDone(f.payload);
    if (!m) {
        conn_->close("malformed fence result");
        return false;
    }
    auto it = fences_.find(m->fenceId);
    if (it == fences_.end())
        return true;
    auto done = std::move(it->second);
    fences_.erase(it);
    ++fencesDone_;
    if (m->status != statuses_.success)
        host_.log("fence " + m->fenceId + " ended with " + host_.statusText(m->status));
    done(m->status, std::move(m->data));
    return true;
}

bool HubLink::onDmodexRequest(const wire::Frame &f) {
    auto m = wire::decodeDmodexRequest(f.payload);
    if (!m || !host_.ownsRank(m->rank)) {
        conn_->close("malformed direct modex request");
        return false;
    }
    auto req = *m;
    ++counted_.modexAnswered;
    host_.localModex(req.rank, [this, req](int st, std::string data) {
        counted_.bytesSent += data.size();
        if (st != statuses_.success)
            host_.log("answering node index " + std::to_string(req.originNode) +
                      "'s direct-modex request for rank " + std::to_string(req.rank) + " with " +
                      host_.statusText(st) +
                      " (this node's PMIx library could not give the rank's data)");
        send(MessageType::DmodexResponse, wire::encode(wire::DmodexResponseMsg{
                                              req.requestId, req.originNode, st, std::move(data)}));
    });
    return true;
}

bool HubLink::onProfileVerdict(const wire::Frame &f) {
    auto m = wire::decodeProfileVerdict(f.payload, settings_.nodeCount);
    if (!m || !onProfileVerdict_) {
        conn_->close("malformed or unexpected profile verdict");
        return false;
    }
    // Once: the verdict decides what this server registers.
    auto verdict = std::move(onProfileVerdict_);
    onProfileVerdict_ = nullptr;
    verdict(std::move(m->withheld));
    return conn_ != nullptr;
}

void HubLink::askProfileVerdict(bool usable, std::string reason, ProfileVerdict onVerdict) {
    onProfileVerdict_ = std::move(onVerdict);
    send(MessageType::ProfileState, wire::encode(wire::ProfileStateMsg{usable, std::move(reason)}));
}

void HubLink::fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                    DataReply reply) {
    const std::uint32_t seq = fencesStarted_++;
    timeline_.record(timeline::Mark::FenceEntered, seq);
    // What leaves the node: its part of a fence with other nodes.
    const bool overNetwork = !(nodes.size() == 1 && nodes[0] == settings_.nodeIndex);
    if (overNetwork && collect)
        counted_.bytesSent += data.size();
    if (overNetwork)
        reply = watchFence(nodes, std::move(reply));
    DataReply done = [this, seq, overNetwork, collect,
                      reply = std::move(reply)](int status, std::string bytes) {
        timeline_.record(timeline::Mark::FenceDone, seq);
        if (overNetwork)
            counted_.bytesReceived += bytes.size();
        if (collect)
            counted_.fenceBytes += bytes.size();
        reply(status, std::move(bytes));
    };
    dispatchFence(std::move(nodes), collect, std::move(data), std::move(done));
}

// A fence, once marked: held until joined, over the tree when it is a
// whole-step fence, else through the hub.
void HubLink::dispatchFence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                            DataReply done) {
    if (nodes.size() == 1 && nodes[0] == settings_.nodeIndex) {
        done(statuses_.success, collect ? std::move(data) : std::string());
        return;
    }
    if (!everJoined_) {
        held_.push_back({std::move(nodes), collect, std::move(data), std::move(done)});
        return;
    }
    if (tree_ && nodes.size() == settings_.nodeCount) {
        tree_->fence(collect, std::move(data), std::move(done));
        return;
    }
    fenceThroughHub(std::move(nodes), collect, std::move(data), std::move(done));
}

namespace {

// A node set as fence names write it ("0,1,3,").
std::string nodesKey(const std::vector<std::uint32_t> &nodes) {
    std::string key;
    for (auto n : nodes)
        key += std::to_string(n) + ",";
    return key;
}

} // namespace

void HubLink::fenceThroughHub(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                              DataReply done) {
    // Every participant sees the same sequence of fences over the same node
    // set, so (set, count) names a fence identically on all of them.
    const std::string key = nodesKey(nodes);
    std::string id = key + "#" + std::to_string(fenceCounters_[key]++);
    fences_[id] = std::move(done);
    send(MessageType::Fence,
         wire::encode(wire::FenceMsg{id, std::move(nodes), collect,
                                     collect ? std::move(data) : std::string()}));
}

DataReply HubLink::watchFence(const std::vector<std::uint32_t> &nodes, DataReply done) {
    if (settings_.fenceTimeoutSec <= 0)
        return done;
    // A whole-step fence is "all": no list of every node built per fence.
    const std::string key = nodes.size() == settings_.nodeCount ? "all" : nodesKey(nodes);
    const std::string id = key + "#" + std::to_string(fencesEntered_[key]++);
    const std::uint64_t watch = nextWatch_++;
    FenceWatch &w = fenceWatches_[watch];
    w.link = this;
    w.id = id;
    w.timer = uvnet::makeTimer(loop_);
    w.timer->data = &w; // a map entry stays where it is until erased
    uv_timer_start(
        w.timer.get(),
        [](uv_timer_t *t) {
            auto *fw = static_cast<FenceWatch *>(t->data);
            fw->link->host_.log("fence " + fw->id + " has not completed in " +
                                std::to_string(fw->link->settings_.fenceTimeoutSec) +
                                " s; asking srun which nodes never entered it");
            fw->link->send(MessageType::FenceStuck, wire::encode(wire::FenceProbeMsg{fw->id}));
        },
        static_cast<std::uint64_t>(settings_.fenceTimeoutSec) * 1000, 0);
    return [this, watch, done = std::move(done)](int status, std::string bytes) {
        fenceWatches_.erase(watch);
        done(status, std::move(bytes));
    };
}

bool HubLink::onFenceQuery(const wire::Frame &f) {
    auto m = wire::decodeFenceProbe(f.payload);
    const std::size_t hash = m ? m->fenceId.rfind('#') : std::string::npos;
    std::uint64_t count = 0;
    if (hash == std::string::npos ||
        std::from_chars(m->fenceId.data() + hash + 1, m->fenceId.data() + m->fenceId.size(), count)
                .ptr != m->fenceId.data() + m->fenceId.size()) {
        conn_->close("malformed fence query");
        return false;
    }
    auto it = fencesEntered_.find(m->fenceId.substr(0, hash));
    const bool entered = it != fencesEntered_.end() && it->second > count;
    const bool waiting =
        entered && std::any_of(fenceWatches_.begin(), fenceWatches_.end(),
                               [&](const auto &watch) { return watch.second.id == m->fenceId; });
    send(MessageType::FenceEntered,
         wire::encode(wire::FenceProbeMsg{m->fenceId, entered, waiting}));
    return true;
}

void HubLink::notice(std::uint32_t rank, std::string text) {
    send(MessageType::Notice, wire::encode(wire::NoticeMsg{rank, std::move(text)}));
}

void HubLink::barrier(const std::string &label, std::vector<std::uint32_t> nodes, DataReply done) {
    if (nodes.size() == 1 && nodes[0] == settings_.nodeIndex) {
        done(statuses_.success, {});
        return;
    }
    const std::string key = label + "@" + nodesKey(nodes);
    std::string id = "barrier:" + key + "#" + std::to_string(fenceCounters_[key]++);
    fences_[id] = std::move(done);
    send(MessageType::Fence, wire::encode(wire::FenceMsg{id, std::move(nodes), false, {}}));
}

void HubLink::directModex(std::uint32_t rank, DataReply done) {
    if (lost_) {
        done(statuses_.lostConnection, {});
        return;
    }
    std::uint64_t id = nextModexId_++;
    ++modexAsked_;
    auto &pending = modex_[id];
    pending = PendingModex{this, id, rank, std::move(done), uvnet::makeTimer(loop_)};
    pending.timer->data = &pending; // a map entry stays where it is until erased
    uv_timer_start(
        pending.timer.get(),
        [](uv_timer_t *h) {
            auto *p = static_cast<PendingModex *>(h->data);
            p->link->finishModex(p->id, p->link->statuses_.timeout, {},
                                 "no answer within " +
                                     std::to_string(p->link->settings_.dmodexTimeoutSec) + " s");
        },
        static_cast<std::uint64_t>(settings_.dmodexTimeoutSec) * 1000, 0);
    routeModex(id);
}

void HubLink::routeModex(std::uint64_t id) {
    auto it = modex_.find(id);
    if (it == modex_.end())
        return; // answered or timed out meanwhile
    const std::uint32_t rank = it->second.rank;
    const auto owner = host_.ownerOf(rank);
    if (owner && *owner != settings_.nodeIndex && !lost_) {
        // Until the welcome says whether there is a tree, and then until
        // its address book came: it comes once every server joined the
        // tree, as the owner's server must have before it can answer.
        if (!everJoined_ || (peers_ && !bookSettled_)) {
            awaitingBook_.push_back(id);
            if (everJoined_)
                waitForBookAtMost();
            return;
        }
        if (peers_ && peers_->ask(*owner, id, rank))
            return;
    }
    modexThroughHub(id);
}

void HubLink::settleAddressBook() {
    bookSettled_ = true;
    if (bookWait_)
        uv_timer_stop(bookWait_.get());
    auto waiting = std::move(awaitingBook_);
    awaitingBook_.clear();
    for (auto id : waiting)
        routeModex(id);
}

void HubLink::waitForBookAtMost() {
    // The book needs every server's part; one the tree cannot deliver (a
    // parent broken meanwhile) must not hold the requests: srun's hub
    // routes them as before.
    if (!bookWait_) {
        bookWait_ = uvnet::makeTimer(loop_);
        bookWait_->data = this;
    }
    if (uv_is_active(reinterpret_cast<uv_handle_t *>(bookWait_.get())))
        return;
    uv_timer_start(
        bookWait_.get(),
        [](uv_timer_t *t) {
            auto *self = static_cast<HubLink *>(t->data);
            auto waiting = std::move(self->awaitingBook_);
            self->awaitingBook_.clear();
            if (!waiting.empty())
                self->host_.log("the address book of the step's servers has not come in " +
                                std::to_string(kBookWaitMs) + " ms; " +
                                std::to_string(waiting.size()) +
                                " direct-modex request(s) go through srun's hub");
            for (auto id : waiting)
                self->modexThroughHub(id);
        },
        kBookWaitMs, 0);
}

void HubLink::modexThroughHub(std::uint64_t id) {
    auto it = modex_.find(id);
    if (it == modex_.end())
        return;
    if (lost_) {
        finishModex(id, statuses_.lostConnection, {}, "srun's rendezvous is gone");
        return;
    }
    send(MessageType::DmodexRequest,
         wire::encode(wire::DmodexRequestMsg{id, settings_.nodeIndex, it->second.rank}));
}

void HubLink::finishModex(std::uint64_t id, int status, std::string data,
                          const std::string &reason) {
    auto it = modex_.find(id);
    if (it == modex_.end())
        return;
    auto pending = std::move(it->second);
    modex_.erase(it);
    if (status != statuses_.success)
        host_.log("direct modex for rank " + std::to_string(pending.rank) +
                  " failed: " + host_.statusText(status) + " (" + reason + ")");
    pending.timer.reset();
    counted_.bytesReceived += data.size();
    pending.done(status, std::move(data));
}

bool HubLink::onRankFailed(const wire::Frame &f) {
    auto m = wire::decodeAbort(f.payload);
    if (!m || m->status <= 0 || m->status > 255) {
        conn_->close("malformed failed-rank notice");
        return false;
    }
    host_.rankFailed(m->rank, m->status);
    return true;
}

void HubLink::rankExited(std::uint32_t rank, int status) {
    send(MessageType::RankExit, wire::encode(wire::AbortMsg{rank, status, ""}));
}

void HubLink::abort(std::uint32_t rank, int status, std::string message) {
    send(MessageType::Abort, wire::encode(wire::AbortMsg{rank, status, std::move(message)}));
}

void HubLink::names(wire::NameRequestMsg request, NameDone done) {
    if (lost_) {
        done(std::nullopt);
        return;
    }
    request.id = nextNameId_++;
    names_.emplace(request.id, std::move(done));
    send(MessageType::NameRequest, wire::encode(request));
}

bool HubLink::onNameReply(const wire::Frame &f) {
    auto m = wire::decodeNameReply(f.payload);
    if (!m) {
        conn_->close("malformed name reply");
        return false;
    }
    auto it = names_.find(m->id);
    if (it == names_.end())
        return true; // nothing asked under that id: ignored
    auto done = std::move(it->second);
    names_.erase(it);
    done(std::move(*m));
    return true;
}

void HubLink::failAll(const std::string &why) {
    auto held = std::move(held_);
    held_.clear();
    for (auto &h : held) {
        host_.log("a fence failed before joining srun's rendezvous: " + why);
        h.done(statuses_.lostConnection, {});
    }
    if (tree_)
        tree_->failAll(why);
    auto fences = std::move(fences_);
    fences_.clear();
    for (auto &[id, done] : fences) {
        host_.log("fence " + id + " failed: " + why);
        done(statuses_.lostConnection, {});
    }
    std::vector<std::uint64_t> ids;
    for (auto &[id, p] : modex_)
        ids.push_back(id);
    for (auto id : ids)
        finishModex(id, statuses_.lostConnection, {}, why);
    auto names = std::move(names_);
    names_.clear();
    for (auto &[id, done] : names)
        done(std::nullopt);
    failJobOperations();
}

} // namespace stepmap::hub
