#pragma once

// One authenticated, ordered stream of frames between a node server and the
// hub. Wire format of a frame:
//   u32 length | u8 type | payload | 32-byte HMAC-SHA256
// where length counts type + payload + MAC. The MAC covers a per-connection
// context (both nonces), the direction and a sequence number, so a frame
// cannot be forged, replayed, reordered or reflected without the secret.
// Only the hub's first frame (Challenge, carrying its nonce) has no MAC.

#include "protocol/wire/message.hpp"

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace stepmap::wire {

struct Frame {
    MessageType type;
    std::string payload;
};

class FrameChannel {
public:
    enum class Role { Hub, Server };

    FrameChannel(std::string secret, Role role);
    // Hub: the key a Hello from `node` must carry, when not every peer
    // shares the secret (the job's hub: each guest step has its own key).
    using KeyForNode = std::function<std::string(std::uint32_t node)>;
    void setKeyForNode(KeyForNode keyFor) { keyForNode_ = std::move(keyFor); }

    // Hub: the challenge frame to send first (creates the hub nonce).
    std::vector<std::uint8_t> makeChallenge();
    // Server: builds the Hello frame once the challenge arrived.
    std::vector<std::uint8_t> makeHello(std::uint32_t nodeIndex);

    std::vector<std::uint8_t> seal(MessageType type, std::string_view payload);

    // Appends received bytes. Returns false, with error() set, on a frame
    // that is malformed, too large, or fails authentication; the connection
    // must then be dropped.
    bool feed(const char *data, std::size_t size);
    // Frames fully received and verified since the last call.
    std::vector<Frame> takeFrames() { return std::move(ready_); }
    const std::string &error() const { return error_; }
    bool established() const { return established_; }
    // Hub: the node index the server announced in its Hello.
    std::uint32_t peerNode() const { return peerNode_; }

private:
    std::array<std::uint8_t, kMacSize> mac(std::uint8_t direction, std::uint64_t seq,
                                           MessageType type, std::string_view payload) const;
    bool accept(MessageType type, std::string payload, const std::uint8_t *macBytes);
    bool handshaking() const;
    std::uint32_t maxFrameLength() const;

    std::string secret_;
    KeyForNode keyForNode_;
    Role role_;
    std::array<std::uint8_t, kNonceSize> hubNonce_{};
    std::array<std::uint8_t, kNonceSize> serverNonce_{};
    bool haveHubNonce_ = false;
    bool established_ = false;
    std::uint32_t peerNode_ = 0;
    std::uint64_t sendSeq_ = 0;
    std::uint64_t recvSeq_ = 0;
    std::vector<std::uint8_t> inbox_;
    std::vector<Frame> ready_;
    std::string error_;
};

// Initialises OpenSSL without its exit-time clean-up. srun runs the plugin's
// exit hook from an atexit handler, after OpenSSL's own handler would have
// torn down the HMAC the hub still needs to say goodbye to the nodes (a
// crash in srun). Call before any other OpenSSL use in the process.
void initCryptoWithoutExitCleanup();

} // namespace stepmap::wire
