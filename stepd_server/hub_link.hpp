#pragma once

// This node server's authenticated connection to the step's rendezvous hub
// (in srun), and the collective operations built on it. Loop thread only.

#include "pmix_host.hpp"
#include "step_config.hpp"
#include "uv/frame_connection.hpp"
#include "uv/uv_handle.hpp"

#include <functional>
#include <map>
#include <memory>

namespace stepmap::server {

class HubLink : public StepCollective {
public:
    // onLost: the hub went away or the step is ending; the server must stop.
    HubLink(uv_loop_t *loop, const StepConfig &config, PmixHost &host,
            std::function<void(const std::string &)> onLost);
    ~HubLink() override;

    void connect();
    // Tells the hub this server leaves normally, then closes.
    void leave();

    void fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
               DataReply done) override;
    void directModex(std::uint32_t rank, DataReply done) override;
    void abort(std::uint32_t rank, int status, std::string message) override;
    // A rank of this node ended with a non-zero status (slurmstepd says so):
    // srun exits with the first such status, as mpirun does.
    void rankExited(std::uint32_t rank, int status);

private:
    struct PendingModex {
        DataReply done;
        uv_timer_t *timer;
        std::uint32_t rank;
    };

    void open();
    void onFrames(std::vector<wire::Frame> &frames);
    void send(wire::MessageType type, std::string payload);
    void failAll(const std::string &why);
    // Completes a direct-modex request; a failure is logged with its reason.
    void finishModex(std::uint64_t id, pmix_status_t status, std::string data,
                     const std::string &reason);

    uv_loop_t *loop_;
    const StepConfig &config_;
    PmixHost &host_;
    std::function<void(const std::string &)> onLost_;
    uvnet::FrameConnection *conn_ = nullptr;
    bool ready_ = false;
    bool everJoined_ = false;
    // Until the first join, a connection the hub drops before the handshake
    // (it makes room when flooded) is tried again, up to this time.
    uv_timer_t *retry_ = nullptr; // owned by retryOwner_
    uvnet::UvHandlePtr<uv_timer_t> retryOwner_;
    std::uint64_t joinDeadline_ = 0;
    std::vector<std::pair<wire::MessageType, std::string>> queued_;
    std::map<std::string, std::uint64_t> fenceCounters_;
    std::map<std::string, DataReply> fences_;
    std::uint64_t nextModexId_ = 1;
    std::map<std::uint64_t, PendingModex> modex_;
    // For the per-step log at exit.
    unsigned fencesDone_ = 0, modexAsked_ = 0, modexServed_ = 0;
};

} // namespace stepmap::server
