#pragma once

// The step's collective operations (PmixHost's StepCollective) over the
// link to srun's hub, and the link's view of this node's PMIx server.
// Loop thread only.

#include "pmix_host.hpp"
#include "protocol/hub/hub_link.hpp"
#include "step_config.hpp"

#include <functional>
#include <memory>
#include <string>

namespace stepmap::server {

class HubCollective : public StepCollective, private hub::LinkHost {
public:
    // onLost: the hub went away or the step is ending; the server must stop.
    // marks: the server's start-up so far (srun -v's breakdown).
    HubCollective(uv_loop_t *loop, const StepConfig &config, PmixHost &host,
                  timeline::Recorder marks, std::function<void(const std::string &)> onLost);

    ~HubCollective() override;
    void connect();
    void leave();
    void rankExited(std::uint32_t rank, int status) { link_.rankExited(rank, status); }
    void askProfileVerdict(bool usable, std::string reason, hub::HubLink::ProfileVerdict done) {
        link_.askProfileVerdict(usable, std::move(reason), std::move(done));
    }
    void mark(timeline::Mark mark) { link_.mark(mark); }
    void mark(timeline::Mark mark, std::int64_t usec) { link_.mark(mark, usec); }

    void fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
               DataReply done) override;
    void directModex(std::uint32_t rank, DataReply done) override;
    void abort(std::uint32_t rank, int status, std::string message) override;
    void barrier(const std::string &label, std::vector<std::uint32_t> nodes,
                 DataReply done) override {
        link_.barrier(label, std::move(nodes), std::move(done));
    }
    void notice(std::uint32_t rank, std::string text) override {
        link_.notice(rank, std::move(text));
    }
    void names(wire::NameRequestMsg request, NameDone done) override {
        jobLink().names(std::move(request), std::move(done));
    }
    void spawn(wire::SpawnRequestMsg request, SpawnDone done) override {
        jobLink().spawn(std::move(request), std::move(done));
    }
    void jobBarrier(wire::JobBarrierMsg barrier, JobBarrierDone done) override {
        jobLink().jobBarrier(std::move(barrier), std::move(done));
    }
    void ranksStarted() override;
    void otherStepModex(std::uint32_t jobWideRank, DataReply done) override {
        jobLink().directModex(jobWideRank, std::move(done));
    }

private:
    void localModex(std::uint32_t rank, hub::DataReply done) override;
    bool ownsRank(std::uint32_t rank) const override;
    std::optional<std::uint32_t> ownerOf(std::uint32_t rank) const override;
    hub::LinkStatuses statuses() const override;
    std::string statusText(int status) const override;
    void log(const std::string &line) override;
    void rankFailed(std::uint32_t rank, int status) override { host_.rankFailed(rank, status); }
    timeline::ExchangeCounters exchangeCounters() const override;

    // A spawned step's link to the job's hub (its first step's), where the
    // job-wide operations go; the first step's own link serves them too.
    class GuestHost;
    hub::HubLink &jobLink() { return jobLink_ ? *jobLink_ : link_; }

    const StepConfig &config_;
    PmixHost &host_;
    hub::HubLink link_;
    std::unique_ptr<GuestHost> guestHost_;
    std::unique_ptr<hub::HubLink> jobLink_;
};

} // namespace stepmap::server
