#include "hub_collective.hpp"

#include "server_log.hpp"

#include <pmix.h>

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
    return s;
}

} // namespace

HubCollective::HubCollective(uv_loop_t *loop, const StepConfig &config, PmixHost &host,
                             timeline::Recorder marks,
                             std::function<void(const std::string &)> onLost)
    : config_(config), host_(host),
      link_(loop, linkSettings(config, std::move(marks)), *this, std::move(onLost)) {}

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

bool HubCollective::ownsRank(std::uint32_t rank) const {
    return rank < config_.plan.ranks.size() && config_.plan.ranks[rank].node == config_.nodeIndex;
}

void HubCollective::localModex(std::uint32_t rank, hub::DataReply done) {
    host_.localModex(rank, std::move(done));
}

hub::LinkStatuses HubCollective::statuses() const {
    return {PMIX_SUCCESS, PMIX_ERR_TIMEOUT, PMIX_ERR_LOST_CONNECTION};
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
