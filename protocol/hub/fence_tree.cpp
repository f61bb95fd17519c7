#include "protocol/hub/fence_tree.hpp"

#include "protocol/uv/listen_beside.hpp"
#include "protocol/wire/payloads.hpp"

#include <algorithm>

namespace stepmap::hub {

using wire::MessageType;

namespace {

std::string nodeText(std::uint32_t node) {
    return "node index " + std::to_string(node);
}

} // namespace

FenceTree::FenceTree(uv_loop_t *loop, Settings settings)
    : loop_(loop), settings_(std::move(settings)),
      children_(settings_.shape.childrenOf(settings_.nodeIndex)) {}

FenceTree::~FenceTree() {
    failAll("server is stopping");
    links_.clear();
    parent_.reset();
}

Expected<int> FenceTree::listen(uv_tcp_t *near) {
    auto listening = uvnet::listenBeside(loop_, near, this, [](uv_stream_t *server, int status) {
        if (status == 0)
            static_cast<FenceTree *>(server->data)->admit(server);
    });
    if (!listening)
        return UserError{"cannot listen for the fence tree's children: " +
                         listening.error().message};
    listener_ = std::move(listening->handle);
    // Room for every child mid-handshake several times over, and for all of
    // them on one address (several node servers on one host).
    HandshakeGate::Settings gs;
    gs.maxWaiting = 4 * children_.size() + 8;
    gs.maxWaitingPerSource = children_.size() + 4;
    gs.deadlineMs = settings_.handshakeDeadlineMs;
    gs.where = "fence tree listener";
    gs.log = settings_.log;
    gate_ = std::make_unique<HandshakeGate>(std::move(gs));
    sweep_ = uvnet::makeTimer(loop_);
    sweep_->data = this;
    const auto every = static_cast<std::uint64_t>(std::max(50, settings_.handshakeDeadlineMs / 4));
    uv_timer_start(
        sweep_.get(), [](uv_timer_t *t) { static_cast<FenceTree *>(t->data)->gate_->sweep(); },
        every, every);
    return listening->port;
}

void FenceTree::admit(uv_stream_t *server) {
    uvnet::FrameConnection::Callbacks cb;
    cb.onFrames = [this](uvnet::FrameConnection &c, std::vector<wire::Frame> &f) {
        onChildFrames(c, f);
    };
    cb.onClosed = [this](uvnet::FrameConnection &c, const std::string &why) {
        onChildClosed(c, why);
    };
    auto c = uvnet::FrameConnection::accept(server, settings_.secret, cb);
    if (!c || c->closing() || broken_ || !gate_->admit(*c))
        return; // c goes: closed quietly
    auto *raw = c.get();
    links_.emplace(raw, Child{std::move(c), false, 0});
}

void FenceTree::onChildFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        auto it = links_.find(&c);
        if (it == links_.end() || c.closing())
            return;
        if (!it->second.joined) {
            joinChild(it->second); // the first authenticated frame is the Hello
            continue;
        }
        // Anything after the Hello counts: a link that misbehaves breaks
        // the tree, as one that carried a part does when it goes.
        it->second.contributed = true;
        if (f.type != MessageType::TreeUp)
            c.close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
        else if (auto taken = contribute(it->second.node, f.payload); !taken)
            c.close(taken.error().message);
    }
}

void FenceTree::joinChild(Child &child) {
    auto &c = *child.conn;
    gate_->leave(c);
    const std::uint32_t node = c.channel().peerNode();
    // A child that gave up on an earlier link before its Welcome came may
    // be back before that link's end reached this node.
    if (auto old = joined_.find(node);
        old != joined_.end() && old->second != &c && !links_.at(old->second).contributed)
        forgetSilentChild(node);
    if (!isChild(node) || joined_.count(node) || detoured_.count(node)) {
        c.close("unexpected or duplicate fence tree child " + nodeText(node));
        return;
    }
    child.joined = true;
    child.node = node;
    joined_[node] = &c;
    c.send(MessageType::Welcome, std::string());
}

void FenceTree::onChildClosed(uvnet::FrameConnection &c, const std::string &why) {
    auto it = links_.find(&c);
    if (it == links_.end())
        return;
    const bool joined = it->second.joined;
    const std::uint32_t node = it->second.node;
    if (gate_)
        gate_->leave(c);
    const bool contributed = it->second.contributed;
    links_.erase(it);
    if (joined && !contributed && !c.peerWentSilent()) {
        // It never sent its part: it gave up waiting for the Welcome (lost
        // on a lossy link) and tries again, directly or through the hub.
        joined_.erase(node);
        settings_.log("fence tree child " + nodeText(node) +
                      " closed its link before sending anything (" + why + "); it may join again");
        return;
    }
    if (joined) {
        joined_.erase(node);
        if (c.peerWentSilent() && settings_.onLinkFailed)
            settings_.onLinkFailed(node, why);
        breakTree("lost the fence tree link to child " + nodeText(node) + ": " + why);
    }
}

void FenceTree::forgetSilentChild(std::uint32_t node) {
    auto it = joined_.find(node);
    if (it == joined_.end())
        return;
    uvnet::FrameConnection *old = it->second;
    joined_.erase(it);
    settings_.log("fence tree child " + nodeText(node) +
                  " joined again; its earlier link carried nothing and is closed");
    links_.erase(old); // letting go closes it without calling back
}

bool FenceTree::isChild(std::uint32_t node) const {
    return std::find(children_.begin(), children_.end(), node) != children_.end();
}

Expected<void> FenceTree::contribute(std::uint32_t child, const std::string &payload) {
    auto m = wire::decodeTreeUp(payload);
    if (!m || m->count != settings_.shape.subtreeSize(child) || m->sequence == 0)
        return UserError{"malformed fence tree contribution"};
    auto it = pending_.find(m->sequence);
    if (it == pending_.end() && m->sequence <= sequence_)
        return UserError{"a contribution to fence " + std::to_string(m->sequence) +
                         ", which is over"};
    // A child ahead of this node holds fences here (PMIx lets a process
    // have several non-blocking fences out), but only so many, and bytes.
    Load &load = load_[child];
    if (load.fences >= settings_.maxFencesPerChild)
        return UserError{"more than " + std::to_string(settings_.maxFencesPerChild) +
                         " fences ahead of this node"};
    if (m->records.size() > settings_.maxBytesPerChild - load.bytes)
        return UserError{"more than " + std::to_string(settings_.maxBytesPerChild) +
                         " bytes of fences ahead of this node"};
    Pending &p = pending_[m->sequence];
    const bool again = std::any_of(p.childrenIn.begin(), p.childrenIn.end(),
                                   [child](const In &in) { return in.node == child; });
    const bool started = p.local || !p.childrenIn.empty();
    if (again || p.sentUp || (started && p.collect != m->collect))
        return UserError{"inconsistent fence tree contribution for fence " +
                         std::to_string(m->sequence)};
    p.collect = m->collect;
    p.childrenIn.push_back({child, m->records.size()});
    ++load.fences;
    load.bytes += m->records.size();
    p.count += m->count;
    p.records += m->records;
    advance(m->sequence);
    return {};
}

void FenceTree::fence(bool collect, std::string data, DataReply done) {
    const std::uint64_t sequence = ++sequence_;
    if (broken_) {
        settings_.log("fence " + std::to_string(sequence) + " failed: " + *broken_);
        done(settings_.statuses.lostConnection, {});
        return;
    }
    Pending &p = pending_[sequence];
    if (!p.childrenIn.empty() && p.collect != collect) {
        pending_.erase(sequence);
        breakTree("the nodes disagree whether fence " + std::to_string(sequence) +
                  " collects data");
        done(settings_.statuses.lostConnection, {});
        return;
    }
    p.local = true;
    p.collect = collect;
    p.done = std::move(done);
    p.count += 1;
    if (collect)
        wire::appendRecord(p.records, {settings_.nodeIndex, std::move(data)});
    advance(sequence);
}

void FenceTree::advance(std::uint64_t sequence) {
    auto it = pending_.find(sequence);
    if (it == pending_.end())
        return;
    Pending &p = it->second;
    if (!p.local || p.sentUp || p.childrenIn.size() < children_.size())
        return;
    release(p);
    if (settings_.shape.isRoot(settings_.nodeIndex)) {
        finishAtRoot(sequence, p);
        return;
    }
    p.sentUp = true;
    std::string payload =
        wire::encode(wire::TreeUpMsg{sequence, p.collect, p.count, std::move(p.records)});
    p.records.clear();
    // Last: through the hub the result may come back before this returns.
    sendUp(std::move(payload));
}

void FenceTree::release(Pending &p) {
    for (const In &in : p.childrenIn) {
        Load &load = load_[in.node];
        load.fences -= 1;
        load.bytes -= in.bytes;
    }
}

void FenceTree::finishAtRoot(std::uint64_t sequence, Pending &p) {
    // Every node's data in node order: the same bytes the hub's star gives.
    const std::uint32_t nodes = settings_.shape.nodeCount();
    std::string all;
    bool whole = p.count == nodes;
    if (whole && p.collect) {
        auto records = wire::decodeRecords(p.records, p.count, nodes);
        whole = records.has_value();
        if (whole) {
            std::sort(records->begin(), records->end(),
                      [](const auto &a, const auto &b) { return a.node < b.node; });
            for (std::uint32_t i = 0; i < records->size() && whole; ++i)
                whole = (*records)[i].node == i;
            for (auto &r : *records)
                all += r.data;
        }
    }
    if (!whole) {
        breakTree("fence " + std::to_string(sequence) + " did not get each node's part once");
        return;
    }
    finishDown(sequence, settings_.statuses.success, all);
}

void FenceTree::finishDown(std::uint64_t sequence, int status, const std::string &data) {
    auto it = pending_.find(sequence);
    if (it == pending_.end())
        return;
    auto done = std::move(it->second.done);
    pending_.erase(it);
    const std::string payload = wire::encode(wire::TreeDownMsg{sequence, status, data});
    for (auto &[node, c] : joined_)
        c->send(MessageType::TreeDown, payload);
    if (settings_.viaHub)
        for (auto node : detoured_)
            settings_.viaHub(node, payload);
    ++fencesDone_;
    if (done)
        done(status, data);
}

void FenceTree::connectParent(const std::string &host, int port) {
    if (parent_ || parentEverJoined_ || detourUp_ || broken_)
        return;
    parentHost_ = host;
    parentPort_ = port;
    parentDeadline_ = uv_now(loop_) + static_cast<std::uint64_t>(settings_.joinRetryMs);
    retry_ = uvnet::makeTimer(loop_);
    retry_->data = this;
    attempt_ = uvnet::makeTimer(loop_);
    attempt_->data = this;
    openParent();
}

void FenceTree::openParent() {
    parent_ = uvnet::FrameConnection::connect(
        loop_, parentHost_, parentPort_, settings_.secret,
        {[this](auto &, std::vector<wire::Frame> &frames) { onParentFrames(frames); },
         [this](auto &c, const std::string &why) { onParentClosed(why, c.peerWentSilent()); }});
    // A failure to connect was reported (onParentClosed) already.
    if (parent_ && parent_->closing()) {
        parent_.reset();
        return;
    }
    // A connection request the parent's host drops (its queue full, a
    // firewall) would wait for TCP's own retries, minutes: each attempt
    // gets as long as the parent gives a stranger to authenticate.
    uv_timer_start(
        attempt_.get(),
        [](uv_timer_t *t) {
            auto *tree = static_cast<FenceTree *>(t->data);
            if (tree->parent_ && !tree->parentReady_)
                tree->parent_->close("no welcome within " +
                                     std::to_string(tree->settings_.handshakeDeadlineMs) + " ms");
        },
        static_cast<std::uint64_t>(settings_.handshakeDeadlineMs), 0);
}

void FenceTree::onParentFrames(std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        if (!parent_ || parent_->closing())
            return;
        switch (f.type) {
        case MessageType::Challenge:
            parent_->send(parent_->channel().makeHello(settings_.nodeIndex));
            break;
        case MessageType::Welcome:
            parentReady_ = parentEverJoined_ = true;
            uv_timer_stop(attempt_.get());
            for (auto &payload : queuedUp_)
                parent_->send(MessageType::TreeUp, payload);
            queuedUp_.clear();
            break;
        case MessageType::TreeDown:
            if (!takeResult(f.payload)) {
                parent_->close("malformed or unexpected fence tree result");
                return;
            }
            break;
        default:
            parent_->close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
            return;
        }
    }
}

bool FenceTree::takeResult(const std::string &payload) {
    auto m = wire::decodeTreeDown(payload);
    auto it = m ? pending_.find(m->sequence) : pending_.end();
    if (it == pending_.end() || !it->second.sentUp)
        return false;
    finishDown(m->sequence, m->status, m->data);
    return true;
}

void FenceTree::relayed(std::uint32_t from, const std::string &payload) {
    if (broken_)
        return; // its fences failed already
    const bool fromParent = !settings_.shape.isRoot(settings_.nodeIndex) &&
                            from == settings_.shape.parentOf(settings_.nodeIndex);
    if (fromParent) {
        if (!detourUp_ || !takeResult(payload))
            breakTree("malformed or unexpected fence tree result from parent " + nodeText(from) +
                      " through srun's hub");
        return;
    }
    // A child whose direct link this node welcomed, but who never got the
    // Welcome and came through the hub instead: its link carried nothing.
    if (auto direct = joined_.find(from);
        direct != joined_.end() && !links_.at(direct->second).contributed)
        forgetSilentChild(from);
    if (!isChild(from) || joined_.count(from)) {
        breakTree("a fence tree message through srun's hub from " + nodeText(from) +
                  ", which is no child of this node or joined it directly");
        return;
    }
    if (detoured_.insert(from).second)
        settings_.log("fence tree child " + nodeText(from) + " comes through srun's hub");
    if (auto taken = contribute(from, payload); !taken) {
        detoured_.erase(from);
        breakTree("fence tree child " + nodeText(from) +
                  " (through srun's hub): " + taken.error().message);
    }
}

void FenceTree::onParentClosed(const std::string &why, bool silent) {
    parent_.reset();
    parentReady_ = false;
    const std::uint32_t parent = settings_.shape.parentOf(settings_.nodeIndex);
    if (!parentEverJoined_ && !broken_ && uv_now(loop_) + 250 < parentDeadline_) {
        settings_.log("could not join the fence tree parent " + nodeText(parent) + " (" + why +
                      "); trying again");
        uv_timer_start(
            retry_.get(), [](uv_timer_t *t) { static_cast<FenceTree *>(t->data)->openParent(); },
            250, 0);
        return;
    }
    if (!parentEverJoined_ && !broken_ && settings_.viaHub) {
        // The parent waits for this subtree: it gets it through srun's hub.
        detourUp_ = true;
        settings_.log("could not join the fence tree parent " + nodeText(parent) + " within " +
                      std::to_string(settings_.joinRetryMs) + " ms (" + why +
                      "); this node's fences reach it through srun's hub");
        auto queued = std::move(queuedUp_);
        queuedUp_.clear();
        for (auto &payload : queued)
            settings_.viaHub(parent, std::move(payload));
        return;
    }
    if (parentEverJoined_ && silent && settings_.onLinkFailed)
        settings_.onLinkFailed(parent, why);
    breakTree((parentEverJoined_ ? "lost the fence tree link to parent "
                                 : "could not join the fence tree parent ") +
              nodeText(parent) + ": " + why);
}

void FenceTree::sendUp(std::string payload) {
    if (detourUp_)
        settings_.viaHub(settings_.shape.parentOf(settings_.nodeIndex), std::move(payload));
    else if (parentReady_ && parent_)
        parent_->send(MessageType::TreeUp, payload);
    else
        queuedUp_.push_back(std::move(payload));
}

void FenceTree::breakTree(const std::string &why) {
    if (broken_)
        return;
    broken_ = why; // later fences fail with it
    settings_.log("the fence tree no longer works: " + why);
    failAll(why);
    // Letting go closes without calling back: the neighbours see their
    // link end and break in turn.
    links_.clear();
    joined_.clear();
    detoured_.clear();
    parent_.reset();
    parentReady_ = false;
    queuedUp_.clear();
    listener_.reset();
    sweep_.reset();
    gate_.reset();
    if (retry_)
        uv_timer_stop(retry_.get());
    if (attempt_)
        uv_timer_stop(attempt_.get());
}

void FenceTree::failAll(const std::string &why) {
    auto pending = std::move(pending_);
    pending_.clear();
    load_.clear();
    for (auto &[sequence, p] : pending)
        if (p.done) {
            settings_.log("fence " + std::to_string(sequence) + " failed: " + why);
            p.done(settings_.statuses.lostConnection, {});
        }
}

} // namespace stepmap::hub
