#pragma once

// The step's published names (PMIx_Publish, _Lookup, _Unpublish; MPI's
// MPI_Publish_name and the ports MPI_Comm_accept/connect meet through), as
// the hub keeps them: a store with PMIx's visibility, first-read deletion
// and waiting lookups. Pure: values are opaque bytes (the node servers pack
// them with PMIx), time comes in as a number, and the hub sends what the
// calls return.
//
// Scope of a name: every rank of the step sees it, unless it was published
// for its node (PMIX_RANGE_LOCAL) or for the publisher alone
// (PMIX_RANGE_PROC_LOCAL); a lookup restricted to its node sees only names
// published there. Names live until unpublished or the step ends, a
// first-read one until a lookup returns it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace stepmap::hub {

enum class NameScope : std::uint8_t { Step = 0, Node = 1, Publisher = 2 };

enum class NameStatus : std::uint8_t {
    Ok = 0,
    Exists = 1,   // publish: a key is already published (nothing was)
    NotFound = 2, // lookup: none of the keys is visible
    TimedOut = 3, // a waiting lookup's time ran out
    TooMany = 4,  // a limit below was reached (nothing was done)
    Invalid = 5,  // an empty key, or a lookup with no key
};

struct NameEntry {
    std::string key;
    std::uint32_t rank = 0; // the publisher
    std::uint32_t node = 0;
    NameScope scope = NameScope::Step;
    bool firstRead = false;
    std::string value;
};

struct NameLookup {
    std::uint64_t id = 0; // the asking node's request id
    std::uint32_t node = 0;
    std::uint32_t rank = 0;
    std::vector<std::string> keys;
    bool nodeOnly = false;        // PMIX_RANGE_LOCAL (or PROC_LOCAL) on the lookup
    bool wait = false;            // until every key is visible (PMIX_WAIT)
    std::uint64_t deadlineMs = 0; // for a waiting lookup; 0: none
};

struct NameAnswer {
    std::uint64_t id = 0;
    std::uint32_t node = 0; // where the answer goes
    NameStatus status = NameStatus::Ok;
    std::vector<NameEntry> entries;
};

class NameService {
public:
    struct Limits {
        std::size_t maxNames = 65536;
        std::size_t maxBytes = 64u << 20;     // keys and values of every name
        std::size_t maxWaitingPerNode = 1024; // lookups left waiting
    };
    NameService() = default;
    explicit NameService(Limits limits) : limits_(limits) {}

    // All of entries or none. Returns the status and the waiting lookups
    // the new names completed.
    struct Published {
        NameStatus status = NameStatus::Ok;
        std::vector<NameAnswer> completed;
    };
    Published publish(std::vector<NameEntry> entries);
    // The answer now, or nothing when the lookup waits (it comes back from
    // publish or expire).
    std::vector<NameAnswer> lookup(NameLookup request);
    // Removes the keys rank published (all of them when keys is empty);
    // Ok even if none was there, as PMIx's stores answer.
    NameStatus unpublish(std::uint32_t rank, const std::vector<std::string> &keys);
    // Waiting lookups whose deadline is at or before nowMs, answered TimedOut.
    std::vector<NameAnswer> expire(std::uint64_t nowMs);
    // A node's server left: its waiting lookups go (nobody to answer).
    void forgetNode(std::uint32_t node);

    std::size_t size() const { return names_.size(); }
    std::size_t waiting() const { return waiting_.size(); }

private:
    bool visible(const NameEntry &entry, const NameLookup &request) const;
    // Every key visible: the entries (first-read ones removed); else nothing.
    bool answer(const NameLookup &request, bool partialOk, NameAnswer &out);

    Limits limits_;
    std::map<std::string, NameEntry> names_;
    std::size_t bytes_ = 0;
    std::vector<NameLookup> waiting_; // in arrival order
};

} // namespace stepmap::hub
