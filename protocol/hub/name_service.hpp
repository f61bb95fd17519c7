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
// published there. A key is unique where its names would be seen: two
// nodes may each publish it for their node, two ranks each for
// themselves, and a rank sees at most one name under a key. Names live
// until unpublished or the step ends, a first-read one until a lookup
// returns it.

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
    Invalid = 5,  // an empty key, a key named twice, or a lookup with no key
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
    bool nodeOnly = false; // PMIX_RANGE_LOCAL (or PROC_LOCAL) on the lookup
    bool wait = false;     // until enough keys are visible (PMIX_WAIT)
    // A waiting lookup's "enough": 0 (or more than the keys) means all.
    std::size_t atLeast = 0;
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
        std::size_t maxBytes = 64u << 20;              // keys and values of every name
        std::size_t maxWaitingPerNode = 1024;          // lookups left waiting
        std::size_t maxWaitingBytesPerNode = 4u << 20; // and their keys
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
    // NotFound when the keys named are none of rank's (MPI_ERR_SERVICE).
    NameStatus unpublish(std::uint32_t rank, const std::vector<std::string> &keys);
    // Waiting lookups whose deadline is at or before nowMs, answered TimedOut.
    std::vector<NameAnswer> expire(std::uint64_t nowMs);
    // A node's server left: its waiting lookups go (nobody to answer).
    void forgetNode(std::uint32_t node);

    std::size_t size() const { return names_.size(); }
    std::size_t waiting() const { return waiting_.size(); }

private:
    using Names = std::multimap<std::string, NameEntry>;
    bool visible(const NameEntry &entry, const NameLookup &request) const;
    // The name under key that request sees, if any (at most one: publish
    // refuses names some rank would see together).
    Names::iterator find(const std::string &key, const NameLookup &request);
    // Enough keys visible (one, for a lookup that does not wait): the
    // entries (first-read ones removed); else nothing.
    bool answer(const NameLookup &request, NameAnswer &out);
    std::size_t waitingBytes(std::uint32_t node) const;

    Limits limits_;
    Names names_;
    std::size_t bytes_ = 0;
    std::vector<NameLookup> waiting_; // in arrival order
};

} // namespace stepmap::hub
