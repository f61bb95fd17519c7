// FrameChannel::feed (protocol/wire/frame_channel.hpp): the bytes a hub
// or a node server receives. The input is a script of steps, each starting
// with a byte: bit 0 picks the receiver (0: a server, 1: the hub), bits 1-2
// the step:
//   0 raw     N, N bytes: fed as they are
//   1 sealed  TYPE, N, N payload bytes, CHUNK: a frame sealed by a peer
//             with the right secret, fed CHUNK bytes at a time (0: at once)
//   2 opening the server's challenge (the nonce the peers sealed with), or
//             the hub's hello: NODE (4 bytes)
// Peers are made without random nonces (all zero), so runs are repeatable.
// While a receiver saw only well-formed traffic, every sealed frame must
// come out exactly as sealed; after an error, feed must keep failing.
// Received payloads go through the decoder for their type, as the hub and
// the servers do.

#include "fuzz_check.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "protocol/timeline/step_timeline.hpp"
#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/frame_channel.hpp"
#include "protocol/wire/payloads.hpp"

#include <algorithm>

using namespace stepmap;
using wire::FrameChannel;
using wire::MessageType;

namespace {

const std::string kSecret(32, 's');

class Script {
public:
    Script(const std::uint8_t *data, std::size_t size) : data_(data), size_(size) {}
    bool atEnd() const { return pos_ == size_; }
    std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    std::string bytes(std::size_t n) {
        n = std::min(n, size_ - pos_);
        std::string out(reinterpret_cast<const char *>(data_ + pos_), n);
        pos_ += n;
        return out;
    }

private:
    const std::uint8_t *data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

void decodeAs(const wire::Frame &frame) {
    switch (frame.type) {
    case MessageType::Fence:
        wire::decodeFence(frame.payload);
        break;
    case MessageType::FenceDone:
        wire::decodeFenceDone(frame.payload);
        break;
    case MessageType::DmodexRequest:
        wire::decodeDmodexRequest(frame.payload);
        break;
    case MessageType::DmodexResponse:
        wire::decodeDmodexResponse(frame.payload);
        break;
    case MessageType::Abort:
        wire::decodeAbort(frame.payload);
        break;
    case MessageType::Shutdown:
        wire::decodeShutdown(frame.payload);
        break;
    case MessageType::Timeline:
        timeline::decodeEvents(frame.payload);
        break;
    case MessageType::Exchange:
        timeline::decodeCounters(frame.payload);
        break;
    default:
        break;
    }
}

// One receiving end, the peer that seals what it receives, and what the
// script has done to it.
struct End {
    FrameChannel receiver;
    FrameChannel peer;
    bool clean = true;   // only well-formed frames so far: results are predictable
    bool opened = false; // the challenge (server) or hello (hub) went through
    bool failed = false;

    End(FrameChannel::Role role, FrameChannel::Role peerRole)
        : receiver(kSecret, role), peer(kSecret, peerRole) {}

    std::vector<wire::Frame> deliver(const std::vector<std::uint8_t> &bytes, std::size_t chunk) {
        if (chunk == 0)
            chunk = std::max<std::size_t>(bytes.size(), 1);
        bool ok = true;
        for (std::size_t at = 0; at < bytes.size() && ok; at += chunk) {
            const std::size_t n = std::min(chunk, bytes.size() - at);
            ok = receiver.feed(reinterpret_cast<const char *>(bytes.data() + at), n);
        }
        if (bytes.empty())
            ok = receiver.feed("", 0);
        fuzz::check(ok || !receiver.error().empty(), "feed failed without an error");
        if (failed)
            fuzz::check(!ok, "feed succeeded after an error");
        failed = failed || !ok;
        auto frames = receiver.takeFrames();
        for (const wire::Frame &frame : frames)
            decodeAs(frame);
        return frames;
    }
};

std::vector<std::uint8_t> asBytes(const std::string &s) {
    return std::vector<std::uint8_t>(s.begin(), s.end());
}

// The unauthenticated challenge, carrying the all-zero nonce the peers use.
std::vector<std::uint8_t> challenge() {
    wire::ByteWriter w;
    w.u32(1 + wire::kNonceSize + wire::kMacSize);
    w.u8(static_cast<std::uint8_t>(MessageType::Challenge));
    const std::string zeros(wire::kNonceSize + wire::kMacSize, '\0');
    w.raw(zeros.data(), zeros.size());
    return w.take();
}

// Returns true when this frame opened the channel (the hub's hello).
bool sealed(End &end, bool isHub, MessageType type, const std::string &payload, std::size_t chunk) {
    const auto frames = end.deliver(end.peer.seal(type, payload), chunk);
    if (!end.clean)
        return false;
    const bool opening = !end.opened;
    if (opening) {
        // A sealed frame cannot open the channel: the peer's sequence
        // number moved, or (hub) only a hello with the peer's nonce opens it.
        const bool hello =
            isHub && type == MessageType::Hello && payload.size() == 4 + wire::kNonceSize &&
            std::all_of(payload.begin() + 4, payload.end(), [](char c) { return c == '\0'; });
        if (!hello) {
            end.clean = false;
            return false;
        }
        end.opened = true;
    }
    fuzz::check(!end.failed, "a well-formed sealed frame was refused");
    fuzz::check(frames.size() == 1 && frames[0].type == type && frames[0].payload == payload,
                "a sealed frame did not come out as sealed");
    return opening;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    Script script(data, size);
    End server(FrameChannel::Role::Server, FrameChannel::Role::Hub);
    End hub(FrameChannel::Role::Hub, FrameChannel::Role::Server);

    while (!script.atEnd()) {
        const std::uint8_t step = script.byte();
        const bool isHub = step & 1;
        End &end = isHub ? hub : server;
        switch ((step >> 1) & 3) {
        case 0:
            end.deliver(asBytes(script.bytes(script.byte())), 0);
            end.clean = false;
            break;
        case 1: {
            const auto type = static_cast<MessageType>(script.byte());
            const std::string payload = script.bytes(script.byte());
            sealed(end, isHub, type, payload, script.byte());
            break;
        }
        default:
            if (isHub) {
                wire::ByteWriter hello;
                const std::string node = script.bytes(4);
                hello.raw(node.data(), node.size());
                const std::string nonce(wire::kNonceSize, '\0');
                hello.raw(nonce.data(), nonce.size());
                const std::string payload(hello.bytes().begin(), hello.bytes().end());
                if (sealed(end, true, MessageType::Hello, payload, 0)) {
                    wire::ByteReader r(hello.bytes().data(), 4);
                    fuzz::check(hub.receiver.peerNode() == *r.u32(), "hello's node index lost");
                }
            } else {
                const auto frames = end.deliver(challenge(), 0);
                if (end.clean && !end.opened) {
                    fuzz::check(frames.size() == 1 && !end.failed, "the challenge was refused");
                    end.opened = true;
                } else {
                    end.clean = false; // a second challenge is a frame with a bad MAC
                }
            }
            break;
        }
    }
    return 0;
}
