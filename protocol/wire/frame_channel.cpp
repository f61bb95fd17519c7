#include "protocol/wire/frame_channel.hpp"

#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/secret.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cstring>
#include <stdexcept>

namespace stepmap::wire {

namespace {

constexpr std::uint8_t kHubToServer = 1;
constexpr std::uint8_t kServerToHub = 2;

std::vector<std::uint8_t> frameBytes(MessageType type, std::string_view payload,
                                     const std::uint8_t *mac) {
    ByteWriter w;
    w.u32(static_cast<std::uint32_t>(1 + payload.size() + kMacSize));
    w.u8(static_cast<std::uint8_t>(type));
    w.raw(payload.data(), payload.size());
    w.raw(mac, kMacSize);
    return w.take();
}

} // namespace

FrameChannel::FrameChannel(std::string secret, Role role)
    : secret_(std::move(secret)), role_(role) {}

std::array<std::uint8_t, kMacSize> FrameChannel::mac(std::uint8_t direction, std::uint64_t seq,
                                                     MessageType type,
                                                     std::string_view payload) const {
    ByteWriter ctx;
    ctx.raw("stepmap1", 8);
    ctx.raw(hubNonce_.data(), hubNonce_.size());
    ctx.raw(serverNonce_.data(), serverNonce_.size());
    ctx.u8(direction);
    ctx.u64(seq);
    ctx.u8(static_cast<std::uint8_t>(type));

    ctx.raw(payload.data(), payload.size());
    std::array<std::uint8_t, kMacSize> out{};
    unsigned int len = 0;
    if (!HMAC(EVP_sha256(), secret_.data(), static_cast<int>(secret_.size()), ctx.bytes().data(),
              ctx.bytes().size(), out.data(), &len) ||
        len != kMacSize)
        throw std::runtime_error("HMAC-SHA256 failed");
    return out;
}

std::vector<std::uint8_t> FrameChannel::makeChallenge() {
    if (!fillRandom(hubNonce_.data(), hubNonce_.size()))
        throw std::runtime_error("cannot read random bytes from the kernel");
    haveHubNonce_ = true;
    std::uint8_t zeros[kMacSize] = {};
    return frameBytes(
        MessageType::Challenge,
        std::string_view(reinterpret_cast<const char *>(hubNonce_.data()), hubNonce_.size()),
        zeros);
}

std::vector<std::uint8_t> FrameChannel::makeHello(std::uint32_t nodeIndex) {
    if (!fillRandom(serverNonce_.data(), serverNonce_.size()))
        throw std::runtime_error("cannot read random bytes from the kernel");
    ByteWriter w;
    w.u32(nodeIndex);
    w.raw(serverNonce_.data(), serverNonce_.size());
    std::string payload(w.bytes().begin(), w.bytes().end());
    established_ = true;
    return seal(MessageType::Hello, payload);
}

std::vector<std::uint8_t> FrameChannel::seal(MessageType type, std::string_view payload) {
    std::uint8_t dir = role_ == Role::Hub ? kHubToServer : kServerToHub;
    auto m = mac(dir, sendSeq_++, type, payload);
    return frameBytes(type, payload, m.data());
}

bool FrameChannel::accept(MessageType type, std::string payload, const std::uint8_t *macBytes) {
    if (role_ == Role::Server && !haveHubNonce_) {
        if (type != MessageType::Challenge || payload.size() != kNonceSize) {
            error_ = "expected a challenge as the first frame";
            return false;
        }
        std::memcpy(hubNonce_.data(), payload.data(), kNonceSize);
        haveHubNonce_ = true;
        ready_.push_back({type, std::move(payload)});
        return true;
    }
    if (role_ == Role::Hub && !established_) {
        // The Hello carries the server nonce that is part of its own MAC.
        if (type != MessageType::Hello || payload.size() != 4 + kNonceSize) {
            error_ = "expected a hello as the first frame";
            return false;
        }
        ByteReader r(reinterpret_cast<const std::uint8_t *>(payload.data()), payload.size());
        peerNode_ = *r.u32();
        std::memcpy(serverNonce_.data(), payload.data() + 4, kNonceSize);
        if (keyForNode_)
            secret_ = keyForNode_(peerNode_);
    }
    std::uint8_t dir = role_ == Role::Hub ? kServerToHub : kHubToServer;
    auto expected = mac(dir, recvSeq_, type, payload);
    if (CRYPTO_memcmp(expected.data(), macBytes, kMacSize) != 0) {
        error_ = "message authentication failed (wrong step secret?)";
        return false;
    }
    ++recvSeq_;
    established_ = true;
    ready_.push_back({type, std::move(payload)});
    return true;
}

bool FrameChannel::handshaking() const {
    return role_ == Role::Hub ? !established_ : !haveHubNonce_;
}

std::uint32_t FrameChannel::maxFrameLength() const {
    // Until the peer has authenticated, only its handshake frame may come:
    // nobody without the secret gets to make us buffer more than that.
    if (handshaking())
        return static_cast<std::uint32_t>(1 + (role_ == Role::Hub ? 4 : 0) + kNonceSize + kMacSize);
    return kMaxFrameSize;
}

bool FrameChannel::feed(const char *data, std::size_t size) {
    if (!error_.empty())
        return false;
    inbox_.insert(inbox_.end(), data, data + size);
    std::size_t pos = 0;
    while (inbox_.size() - pos >= 4) {
        ByteReader r(inbox_.data() + pos, 4);
        std::uint32_t len = *r.u32();
        if (len < 1 + kMacSize || len > maxFrameLength()) {
            error_ = "malformed frame length " + std::to_string(len) +
                     (handshaking() ? " before authentication" : "");
            return false;
        }
        if (inbox_.size() - pos - 4 < len)
            break;
        const std::uint8_t *body = inbox_.data() + pos + 4;
        auto type = static_cast<MessageType>(body[0]);
        std::string payload(reinterpret_cast<const char *>(body + 1), len - 1 - kMacSize);
        if (!accept(type, std::move(payload), body + len - kMacSize))
            return false;
        pos += 4 + len;
    }
    inbox_.erase(inbox_.begin(), inbox_.begin() + static_cast<std::ptrdiff_t>(pos));
    return true;
}

void initCryptoWithoutExitCleanup() {
    OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
}

} // namespace stepmap::wire
