#include "hub_collective.hpp"

#include "plan/launch_plan.hpp"
#include "protocol/hub/job_ids.hpp"
#include "server_log.hpp"

#include <pmix.h>

#include <cstdlib>

namespace stepmap::server {

namespace {

hub::HubLink::Settings linkSettings(const StepConfig &c, timeline::Recorder marks) {
    hub::HubLink::Settings s;
    s.hubHost = c.hubHost;
    s.hubPort = c.hubPort;
    s.secret = c.secret;
    s.nodeIndex = c.nodeIndex;
    s.nodeCount = static_cast<std::uint32_t>(c.plan.nodes.size());
    s.dmodexTimeoutSec = c.dmodexTimeoutSec;
    s.fenceTimeoutSec = c.fenceTimeoutSec;
    s.timeline = std::move(marks);
    if (c.relayFanOut > 0 && c.jobStep == 0) {
        // Every node derives every relay's port alone (hub/hub_relay.hpp).
        const std::uint64_t seed = hub::relaySeed(c.stepTag);
        const auto portOf = [&](std::uint32_t node) {
            return hub::relayPort(c.relayPorts.first, c.relayPorts.last, seed, node);
        };
        const hub::TreeShape shape(s.nodeCount, c.relayFanOut);
        s.relayFanOut = c.relayFanOut;
        s.relayListenPort = portOf(c.nodeIndex);
        // The scale benchmark starts srun's hub only once every server is
        // up, to see it admit them arriving together as on a cluster (its
        // few cores start them one by one): children wait that long for
        // their parent's welcome.
        if (const char *v = std::getenv("STEPMAP_BENCH_RELAY_WAIT_MS")) {
            const unsigned long ms = std::strtoul(v, nullptr, 10);
            if (ms >= 1 && ms <= 600000)
                s.relayWaitMs = static_cast<int>(ms);
        }
        if (shape.joinsThroughParent(c.nodeIndex)) {
            const std::uint32_t parent = shape.parentOf(c.nodeIndex);
            s.relayHost = c.relayHost.empty() ? c.plan.nodes[parent].name : c.relayHost;
            s.relayPort = portOf(parent);
        }
    }
    return s;
}

hub::HubLink::Settings guestSettings(const StepConfig &c) {
    hub::HubLink::Settings s;
    s.hubHost = c.jobHubHost;
    s.hubPort = c.jobHubPort;
    s.secret = c.jobSecret;
    s.nodeIndex = hub::jobWide(c.jobStep, c.nodeIndex);
    s.nodeCount = 1; // no fence tree with the job's hub
    s.dmodexTimeoutSec = c.dmodexTimeoutSec;
    return s;
}

} // namespace

// What the job's hub asks of a guest: its ranks' data, by job-wide id.
class HubCollective::GuestHost : public hub::LinkHost {
public:
    explicit GuestHost(HubCollective &c) : c_(c) {}
    void localModex(std::uint32_t rank, hub::DataReply done) override {
        c_.host_.localModex(hub::localOf(rank), std::move(done));
    }
    bool ownsRank(std::uint32_t rank) const override {
        return hub::stepOf(rank) == c_.config_.jobStep && c_.ownsRank(hub::localOf(rank));
    }
    hub::LinkStatuses statuses() const override { return c_.statuses(); }
    std::string statusText(int status) const override { return c_.statusText(status); }
    void log(const std::string &line) override { logLine("job's hub: " + line); }

private:
    HubCollective &c_;
};

HubCollective::HubCollective(uv_loop_t *loop, const StepConfig &config, PmixHost &host,
                             timeline::Recorder marks,
                             std::function<void(const std::string &)> onLost)
    : config_(config), host_(host),
      link_(loop, linkSettings(config, std::move(marks)), *this, onLost) {
    if (config.jobStep == 0)
        return;
    guestHost_ = std::make_unique<GuestHost>(*this);
    // The job's hub may end before this step (another srun's, or the
    // spawner's ending): job-wide operations then fail, the step goes on.
    jobLink_ = std::make_unique<hub::HubLink>(
        loop, guestSettings(config), *guestHost_, [](const std::string &why) {
            logLine("the job's hub is gone (" + why +
                    "); names, connects and spawns with other steps fail from now on");
        });
}

HubCollective::~HubCollective() = default;

void HubCollective::connect() {
    link_.connect();
    if (!jobLink_)
        return;
    // First on the link: which step this server is of, and its plan.
    jobLink_->guestStep(
        wire::GuestStepMsg{config_.nspace, config_.stepTag, encodePlan(config_.plan)});
    jobLink_->connect();
}

// A spawned step's processes all started on this node: with every node's,
// the spawn is done.
void HubCollective::ranksStarted() {
    if (jobLink_)
        jobLink_->guestStep(wire::GuestStepMsg{config_.nspace, config_.stepTag, {}, true});
}

void HubCollective::leave() {
    link_.leave();
    if (jobLink_)
        jobLink_->leave();
}

void HubCollective::fence(std::vector<std::uint32_t> nodes, bool collect, std::string data,
                          DataReply done) {
    link_.fence(std::move(nodes), collect, std::move(data), std::move(done));
}

void HubCollective::directModex(std::uint32_t rank, DataReply done) {
    link_.directModex(rank, std::move(done));
}

void HubCollective::abort(std::uint32_t rank, int status, std::string message) {
    link_.abort(rank, status, std::move(message));
}

std::optional<std::uint32_t> HubCollective::ownerOf(std::uint32_t rank) const {
    if (rank >= config_.plan.ranks.size())
        return std::nullopt;
    return config_.plan.ranks[rank].node;
}

bool HubCollective::ownsRank(std::uint32_t rank) const {
    return rank < config_.plan.ranks.size() && config_.plan.ranks[rank].node == config_.nodeIndex;
}

void HubCollective::localModex(std::uint32_t rank, hub::DataReply done) {
    host_.localModex(rank, std::move(done));
}

hub::LinkStatuses HubCollective::statuses() const {
    return {PMIX_SUCCESS, PMIX_ERR_TIMEOUT, PMIX_ERR_LOST_CONNECTION, PMIX_ERR_NOT_FOUND};
}

std::string HubCollective::statusText(int status) const {
    return PMIx_Error_string(status);
}

void HubCollective::log(const std::string &line) {
    logLine(line);
}

timeline::ExchangeCounters HubCollective::exchangeCounters() const {
    return host_.exchangeCounters();
}

} // namespace stepmap::server
