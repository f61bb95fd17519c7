#pragma once

// What a node server's links (to srun's hub, to the other servers) need of
// the node server they serve. Loop thread.

#include "protocol/hub/data_reply.hpp"
#include "protocol/timeline/exchange_counters.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace stepmap::hub {

// What the link needs of the node server it serves. Loop thread.
class LinkHost {
public:
    virtual ~LinkHost() = default;
    // This node's data of one of its ranks, asked for by another node.
    virtual void localModex(std::uint32_t rank, DataReply done) = 0;
    // Whether rank runs on this node: a request for another node's rank is
    // refused. (The server holds the plan; the link keeps no per-rank table.)
    virtual bool ownsRank(std::uint32_t rank) const = 0;
    virtual LinkStatuses statuses() const = 0;
    virtual std::string statusText(int status) const = 0;
    virtual void log(const std::string &line) = 0;
    // What the server counted of the step's exchange (fences, its clients'
    // direct modex); the link adds the bytes and the requests it answered.
    virtual timeline::ExchangeCounters exchangeCounters() const { return {}; }
    // The node of one of the step's ranks, for asking its server directly;
    // none: the request goes through srun's hub.
    virtual std::optional<std::uint32_t> ownerOf(std::uint32_t rank) const {
        (void)rank;
        return std::nullopt;
    }
    // Another node's rank failed (its exit status: 1-255).
    virtual void rankFailed(std::uint32_t rank, int status) { (void)rank, (void)status; }
};

} // namespace stepmap::hub
