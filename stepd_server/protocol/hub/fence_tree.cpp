#include "fence_tree.hpp"

#include "wire/payloads.hpp"

#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>

namespace stepmap::hub {

using wire::MessageType;

namespace {

// Fences a child may start ahead of this node: PMIx lets a process have
// several non-blocking fences out, but not without bound.
constexpr std::size_t kMaxPendingFences = 1024;

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

int FenceTree::listen(uv_tcp_t *near, std::string &error) {
    sockaddr_storage addr{};
    int len = sizeof addr;
    int rc = uv_tcp_getsockname(near, reinterpret_cast<sockaddr *>(&addr), &len);
    if (rc == 0) {
        // The same address, any port.
        if (addr.ss_family == AF_INET6)
            reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = 0;
        else
            reinterpret_cast<sockaddr_in *>(&addr)->sin_port = 0;
        listener_ = uvnet::makeHandle(uv_tcp_init, loop_);
        rc = listener_ ? uv_tcp_bind(listener_.get(), reinterpret_cast<sockaddr *>(&addr), 0)
                       : UV_ENOMEM;
    }
    if (rc == 0) {
        listener_->data = this;
        rc = uv_listen(reinterpret_cast<uv_stream_t *>(listener_.get()), 128,
                       [](uv_stream_t *server, int status) {
                           if (status == 0)
                               static_cast<FenceTree *>(server->data)->admit(server);
                       });
    }
    if (rc == 0)
        rc = uv_tcp_getsockname(listener_.get(), reinterpret_cast<sockaddr *>(&addr), &len);
    if (rc != 0) {
        error = std::string("cannot listen for the fence tree's children: ") + uv_strerror(rc);
        listener_.reset();
        return 0;
    }
    sweep_ = uvnet::makeTimer(loop_);
    sweep_->data = this;
    const auto every = static_cast<std::uint64_t>(std::max(50, settings_.handshakeDeadlineMs / 4));
    uv_timer_start(
        sweep_.get(),
        [](uv_timer_t *t) { static_cast<FenceTree *>(t->data)->closeStaleChildren(); }, every,
        every);
    return addr.ss_family == AF_INET6 ? ntohs(reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port)
                                      : ntohs(reinterpret_cast<sockaddr_in *>(&addr)->sin_port);
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
    if (!c || c->closing() || broken_)
        return;
    // Room for every child mid-handshake several times over; beyond that the
    // oldest stranger gives way, so idle connections cannot lock them out.
    const std::size_t strangers = links_.size() - joined_.size();
    if (strangers >= 4 * children_.size() + 8) {
        auto oldest = links_.end();
        for (auto it = links_.begin(); it != links_.end(); ++it)
            if (!it->second.joined &&
                (oldest == links_.end() || it->second.since < oldest->second.since))
                oldest = it;
        oldest->first->close("too many unauthenticated connections");
    }
    auto *raw = c.get();
    links_.emplace(raw, Child{std::move(c), false, 0, std::chrono::steady_clock::now()});
}

void FenceTree::closeStaleChildren() {
    const auto limit =
        std::chrono::steady_clock::now() - std::chrono::milliseconds(settings_.handshakeDeadlineMs);
    std::vector<uvnet::FrameConnection *> stale;
    for (auto &[c, child] : links_)
        if (!child.joined && child.since < limit)
            stale.push_back(c);
    for (auto *c : stale)
        c->close("no authentication in time");
}

void FenceTree::onChildFrames(uvnet::FrameConnection &c, std::vector<wire::Frame> &frames) {
    for (auto &f : frames) {
        auto it = links_.find(&c);
        if (it == links_.end() || c.closing())
            return;
        if (!it->second.joined)
            joinChild(it->second); // the first authenticated frame is the Hello
        else if (f.type == MessageType::TreeUp)
            onChildUp(it->second, f);
        else
            c.close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
    }
}

void FenceTree::joinChild(Child &child) {
    auto &c = *child.conn;
    const std::uint32_t node = c.channel().peerNode();
    if (std::find(children_.begin(), children_.end(), node) == children_.end() ||
        joined_.count(node)) {
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
    links_.erase(it);
    if (joined) {
        joined_.erase(node);
        breakTree("lost the fence tree link to child " + nodeText(node) + ": " + why);
    }
}

void FenceTree::onChildUp(Child &child, const wire::Frame &f) {
    auto &c = *child.conn;
    auto m = wire::decodeTreeUp(f.payload);
    if (!m || m->count != settings_.shape.subtreeSize(child.node)) {
        c.close("malformed fence tree contribution");
        return;
    }
    auto it = pending_.find(m->sequence);
    if (it == pending_.end() && pending_.size() >= kMaxPendingFences) {
        c.close("too many fences ahead of this node");
        return;
    }
    Pending &p = pending_[m->sequence];
    const bool again =
        std::find(p.childrenIn.begin(), p.childrenIn.end(), child.node) != p.childrenIn.end();
    const bool started = p.local || !p.childrenIn.empty();
    if (again || p.sentUp || (started && p.collect != m->collect)) {
        c.close("inconsistent fence tree contribution for fence " + std::to_string(m->sequence));
        return;
    }
    p.collect = m->collect;
    p.childrenIn.push_back(child.node);
    p.count += m->count;
    p.records += m->records;
    advance(m->sequence);
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
    if (settings_.shape.isRoot(settings_.nodeIndex)) {
        finishAtRoot(sequence, p);
        return;
    }
    p.sentUp = true;
    sendUp(wire::encode(wire::TreeUpMsg{sequence, p.collect, p.count, std::move(p.records)}));
    p.records.clear();
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
    ++fencesDone_;
    if (done)
        done(status, data);
}

void FenceTree::connectParent(const std::string &host, int port) {
    if (parent_ || parentEverJoined_ || broken_)
        return;
    parentHost_ = host;
    parentPort_ = port;
    parentDeadline_ = uv_now(loop_) + static_cast<std::uint64_t>(settings_.joinRetryMs);
    retry_ = uvnet::makeTimer(loop_);
    retry_->data = this;
    openParent();
}

void FenceTree::openParent() {
    parent_ = uvnet::FrameConnection::connect(
        loop_, parentHost_, parentPort_, settings_.secret,
        {[this](auto &, std::vector<wire::Frame> &frames) { onParentFrames(frames); },
         [this](auto &, const std::string &why) { onParentClosed(why); }});
    // A failure to connect was reported (onParentClosed) already.
    if (parent_ && parent_->closing())
        parent_.reset();
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
            for (auto &payload : queuedUp_)
                parent_->send(MessageType::TreeUp, payload);
            queuedUp_.clear();
            break;
        case MessageType::TreeDown: {
            auto m = wire::decodeTreeDown(f.payload);
            auto it = m ? pending_.find(m->sequence) : pending_.end();
            if (it == pending_.end() || !it->second.sentUp) {
                parent_->close("malformed or unexpected fence tree result");
                return;
            }
            finishDown(m->sequence, m->status, m->data);
            break;
        }
        default:
            parent_->close("unexpected message type " + std::to_string(static_cast<int>(f.type)));
            return;
        }
    }
}

void FenceTree::onParentClosed(const std::string &why) {
    parent_.reset();
    parentReady_ = false;
    if (!parentEverJoined_ && !broken_ && uv_now(loop_) + 250 < parentDeadline_) {
        settings_.log("could not join the fence tree parent " +
                      nodeText(settings_.shape.parentOf(settings_.nodeIndex)) + " (" + why +
                      "); trying again");
        uv_timer_start(
            retry_.get(), [](uv_timer_t *t) { static_cast<FenceTree *>(t->data)->openParent(); },
            250, 0);
        return;
    }
    const std::string lost = (parentEverJoined_ ? "lost the fence tree link to parent "
                                                : "could not join the fence tree parent ") +
                             nodeText(settings_.shape.parentOf(settings_.nodeIndex)) + ": " + why;
    const bool never = !parentEverJoined_ && !broken_;
    breakTree(lost);
    // The parent waits for this subtree and has no link to see it gone:
    // the server must go, so that srun's hub reports it and ends the step.
    if (never && settings_.onUnreachableParent)
        settings_.onUnreachableParent(lost);
}

void FenceTree::sendUp(std::string payload) {
    if (parentReady_ && parent_)
        parent_->send(MessageType::TreeUp, payload);
    else
        queuedUp_.push_back(std::move(payload));
}

void FenceTree::breakTree(const std::string &why) {
    if (broken_)
        return;
    broken_ = why; // later fences fail with it
    failAll(why);
    // Letting go closes without calling back: the neighbours see their
    // link end and break in turn.
    links_.clear();
    joined_.clear();
    parent_.reset();
    parentReady_ = false;
    queuedUp_.clear();
    listener_.reset();
    sweep_.reset();
    if (retry_)
        uv_timer_stop(retry_.get());
}

void FenceTree::failAll(const std::string &why) {
    auto pending = std::move(pending_);
    pending_.clear();
    for (auto &[sequence, p] : pending)
        if (p.done) {
            settings_.log("fence " + std::to_string(sequence) + " failed: " + why);
            p.done(settings_.statuses.lostConnection, {});
        }
}

} // namespace stepmap::hub
