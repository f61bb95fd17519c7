#include "protocol/uv/frame_connection.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <cstdlib>
#include <cstring>
#include <memory>

namespace stepmap::uvnet {

namespace {

// One write in flight: libuv holds it from uv_write until onWrite.
struct WriteRequest {
    uv_write_t req{};
    std::vector<std::uint8_t> bytes;
};

// A peer whose host died, or whose link went down or was cut off, sends no
// FIN or RST: without this the connection would wait for the kernel's
// retransmissions (about 15 minutes) while its step hangs. Probes after
// kIdleSeconds of silence, and data or probes unacknowledged for
// kDeadLinkSeconds, close it with ETIMEDOUT (onClosed names the peer).
constexpr int kIdleSeconds = 5;
constexpr int kProbeSeconds = 2;
constexpr int kProbes = 3;
constexpr unsigned kDeadLinkMilliseconds = kDeadLinkSeconds * 1000u;

void watchForDeadPeer(uv_tcp_t *tcp) {
    uv_tcp_keepalive(tcp, 1, kIdleSeconds);
    uv_os_fd_t fd;
    if (uv_fileno(reinterpret_cast<uv_handle_t *>(tcp), &fd) != 0)
        return;
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &kProbeSeconds, sizeof kProbeSeconds);
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &kProbes, sizeof kProbes);
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &kDeadLinkMilliseconds,
               sizeof kDeadLinkMilliseconds);
}

} // namespace

unsigned benchmarkLinkDelayMs() {
    static const unsigned delay = [] {
        const char *v = std::getenv("STEPMAP_BENCH_LINK_DELAY_MS");
        const unsigned long ms = v ? std::strtoul(v, nullptr, 10) : 0;
        return ms <= 1000 ? static_cast<unsigned>(ms) : 0u;
    }();
    return delay;
}

void FrameConnection::hold(std::vector<wire::Frame> frames, unsigned delayMs) {
    if (!holdTimer_) {
        holdTimer_ = makeTimer(tcp_.loop);
        if (!holdTimer_) {
            close("cannot hold frames: no timer");
            return;
        }
        holdTimer_->data = this;
    }
    held_.push_back({uv_now(tcp_.loop) + delayMs, std::move(frames)});
    if (!uv_is_active(reinterpret_cast<uv_handle_t *>(holdTimer_.get())))
        uv_timer_start(
            holdTimer_.get(),
            [](uv_timer_t *t) { static_cast<FrameConnection *>(t->data)->releaseHeld(); }, delayMs,
            0);
}

void FrameConnection::releaseHeld() {
    while (!held_.empty() && !closing() && held_.front().due <= uv_now(tcp_.loop)) {
        auto frames = std::move(held_.front().frames);
        held_.pop_front();
        if (cb_.onFrames)
            cb_.onFrames(*this, frames);
    }
    if (closing()) {
        held_.clear();
        return;
    }
    if (held_.empty() && eofAfterHeld_) {
        close("peer closed the connection");
        return;
    }
    if (!held_.empty())
        uv_timer_start(
            holdTimer_.get(),
            [](uv_timer_t *t) { static_cast<FrameConnection *>(t->data)->releaseHeld(); },
            held_.front().due - uv_now(tcp_.loop), 0);
}

void FrameConnection::Release::operator()(FrameConnection *c) const {
    c->released_ = true;
    c->cb_ = {};
    c->close("released by its owner");
    c->freeIfUnused();
}

void FrameConnection::freeIfUnused() {
    if (released_ && handleClosed_)
        delete this;
}

FrameConnection::FrameConnection(uv_loop_t *loop, std::string secret, wire::FrameChannel::Role role,
                                 Callbacks cb)
    : channel_(std::move(secret), role), cb_(std::move(cb)) {
    uv_tcp_init(loop, &tcp_);
    tcp_.data = this;
    // Small until the peer has authenticated: a flood of connections must
    // not cost srun 64 KiB each.
    readBuf_.resize(512);
}

FrameConnection::Ptr FrameConnection::accept(uv_stream_t *server, std::string secret, Callbacks cb,
                                             wire::FrameChannel::KeyForNode keyFor) {
    Ptr c(new FrameConnection(server->loop, std::move(secret), wire::FrameChannel::Role::Hub,
                              std::move(cb)));
    if (keyFor)
        c->channel_.setKeyForNode(std::move(keyFor));
    if (uv_accept(server, reinterpret_cast<uv_stream_t *>(&c->tcp_)) != 0)
        return nullptr; // released: closed quietly
    uv_tcp_nodelay(&c->tcp_, 1);
    watchForDeadPeer(&c->tcp_);
    c->startReading();
    try {
        c->send(c->channel_.makeChallenge());
    } catch (const std::exception &e) {
        c->close(e.what());
    }
    return c;
}

FrameConnection::Ptr FrameConnection::connect(uv_loop_t *loop, const std::string &host, int port,
                                              std::string secret, Callbacks cb) {
    Ptr c(new FrameConnection(loop, std::move(secret), wire::FrameChannel::Role::Server,
                              std::move(cb)));
    c->state_ = State::Connecting;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo *res = nullptr;
    std::string service = std::to_string(port);
    int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0 || !res) {
        c->close("cannot resolve " + host + ": " + gai_strerror(rc));
        return c;
    }
    std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owner(res, freeaddrinfo);
    c->connectReq_.data = c.get();
    rc = uv_tcp_connect(&c->connectReq_, &c->tcp_, res->ai_addr, onConnect);
    if (rc == 0)
        watchForDeadPeer(&c->tcp_); // the SYN's retransmissions too
    if (rc != 0)
        c->close("cannot connect to " + host + ":" + service + ": " + uv_strerror(rc));
    return c;
}

void FrameConnection::onConnect(uv_connect_t *req, int status) {
    auto *c = static_cast<FrameConnection *>(req->data);
    if (c->state_ != State::Connecting)
        return;
    if (status != 0) {
        c->fail("connection failed", status);
        return;
    }
    c->state_ = State::Open;
    uv_tcp_nodelay(&c->tcp_, 1);
    c->startReading();
}

void FrameConnection::startReading() {
    uv_read_start(reinterpret_cast<uv_stream_t *>(&tcp_), onAlloc, onRead);
}

void FrameConnection::onAlloc(uv_handle_t *h, size_t, uv_buf_t *buf) {
    auto *c = static_cast<FrameConnection *>(h->data);
    *buf = uv_buf_init(c->readBuf_.data(), static_cast<unsigned>(c->readBuf_.size()));
}

void FrameConnection::onRead(uv_stream_t *s, ssize_t n, const uv_buf_t *buf) {
    auto *c = static_cast<FrameConnection *>(s->data);
    if (c->closing() || n == 0)
        return;
    if (n < 0) {
        if (n == UV_EOF && !c->held_.empty()) {
            // A delayed link delivers what came before the close first.
            c->eofAfterHeld_ = true;
            uv_read_stop(reinterpret_cast<uv_stream_t *>(&c->tcp_));
        } else if (n == UV_EOF)
            c->close("peer closed the connection");
        else
            c->fail("read failed", static_cast<int>(n));
        return;
    }
    try {
        if (!c->channel_.feed(buf->base, static_cast<std::size_t>(n))) {
            c->close("bad frame: " + c->channel_.error());
            return;
        }
        if (c->channel_.established() && c->readBuf_.size() < 64 * 1024)
            c->readBuf_.resize(64 * 1024);
        auto frames = c->channel_.takeFrames();
        if (frames.empty())
            return;
        if (const unsigned delay = benchmarkLinkDelayMs(); delay > 0)
            c->hold(std::move(frames), delay);
        else if (c->cb_.onFrames)
            c->cb_.onFrames(*c, frames);
    } catch (const std::exception &e) {
        c->close(e.what());
    }
}

void FrameConnection::send(std::vector<std::uint8_t> bytes) {
    if (closing())
        return;
    auto w = std::make_unique<WriteRequest>();
    w->bytes = std::move(bytes);
    w->req.data = w.get();
    uv_buf_t buf = uv_buf_init(reinterpret_cast<char *>(w->bytes.data()),
                               static_cast<unsigned>(w->bytes.size()));
    int rc = uv_write(&w->req, reinterpret_cast<uv_stream_t *>(&tcp_), &buf, 1, onWrite);
    if (rc != 0) {
        fail("write failed", rc);
        return;
    }
    w.release(); // onWrite takes it back
}

void FrameConnection::onWrite(uv_write_t *req, int status) {
    std::unique_ptr<WriteRequest> w(static_cast<WriteRequest *>(req->data));
    auto *c = static_cast<FrameConnection *>(req->handle->data);
    if (status != 0 && status != UV_ECANCELED && !c->closing())
        c->fail("write failed", status);
}

void FrameConnection::fail(const char *what, int code) {
    if (closing())
        return;
    peerWentSilent_ = code == UV_ETIMEDOUT || code == UV_EHOSTUNREACH || code == UV_ENETUNREACH;
    close(std::string(what) + ": " + uv_strerror(code) +
          (code == UV_ETIMEDOUT ? " (no answer for " + std::to_string(kDeadLinkSeconds) + " s)"
                                : std::string()));
}

void FrameConnection::close(const std::string &why) {
    if (closing())
        return;
    state_ = State::Closed;
    auto cb = std::move(cb_.onClosed);
    cb_.onFrames = nullptr;
    if (cb)
        cb(*this, why);
    uv_close(reinterpret_cast<uv_handle_t *>(&tcp_), onClose);
}

void FrameConnection::closeAfterFlush(const std::string &why) {
    if (state_ == State::Closed || state_ == State::Flushing)
        return;
    state_ = State::Flushing;
    flushReason_ = why;
    shutdownReq_.data = this;
    // uv_shutdown completes after the queued writes; then close.
    int rc = uv_shutdown(&shutdownReq_, reinterpret_cast<uv_stream_t *>(&tcp_),
                         [](uv_shutdown_t *req, int) {
                             auto *c = static_cast<FrameConnection *>(req->data);
                             c->close(c->flushReason_);
                         });
    if (rc != 0)
        close(why);
}

void FrameConnection::onClose(uv_handle_t *h) {
    auto *c = static_cast<FrameConnection *>(h->data);
    c->handleClosed_ = true;
    c->freeIfUnused();
}

} // namespace stepmap::uvnet
