#pragma once

// A TCP connection carrying authenticated frames, on a libuv loop. All
// member functions run on the loop's thread.
//
// Lifetime: the object deletes itself once its handle is closed. Owners keep
// a raw pointer and drop it in onClosed, which is called exactly once.

#include "wire/frame_channel.hpp"

#include <uv.h>

#include <functional>
#include <string>
#include <vector>

namespace stepmap::uvnet {

class FrameConnection {
public:
    struct Callbacks {
        // The frames that arrived and passed authentication.
        std::function<void(FrameConnection &, std::vector<wire::Frame> &)> onFrames;
        // Called once, with the reason, when the connection is gone.
        std::function<void(FrameConnection &, const std::string &)> onClosed;
    };

    // Accepts a pending connection on server; nullptr (and the pending
    // connection dropped) if that fails.
    static FrameConnection *accept(uv_stream_t *server, std::string secret, Callbacks cb);
    // Starts connecting to host:port; failures are reported through onClosed.
    static FrameConnection *connect(uv_loop_t *loop, const std::string &host, int port,
                                    std::string secret, Callbacks cb);

    FrameConnection(const FrameConnection &) = delete;
    FrameConnection &operator=(const FrameConnection &) = delete;

    void send(std::vector<std::uint8_t> bytes);
    void send(wire::MessageType type, const std::string &payload) {
        send(channel_.seal(type, payload));
    }
    void close(const std::string &why);
    // Closes once everything sent so far has been written.
    void closeAfterFlush(const std::string &why);

    wire::FrameChannel &channel() { return channel_; }
    uv_tcp_t *tcp() { return &tcp_; }
    bool closing() const { return closing_; }
    // Free slot for the owner (e.g. the peer's node index).
    long tag = -1;

private:
    FrameConnection(uv_loop_t *loop, std::string secret, wire::FrameChannel::Role role,
                    Callbacks cb);
    ~FrameConnection() = default;
    void startReading();

    static void onConnect(uv_connect_t *req, int status);
    static void onAlloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf);
    static void onRead(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);
    static void onWrite(uv_write_t *req, int status);
    static void onClose(uv_handle_t *h);

    uv_tcp_t tcp_{};
    uv_connect_t connectReq_{};
    uv_shutdown_t shutdownReq_{};
    bool flushing_ = false;
    wire::FrameChannel channel_;
    Callbacks cb_;
    bool closing_ = false;
    std::vector<char> readBuf_;
};

} // namespace stepmap::uvnet
