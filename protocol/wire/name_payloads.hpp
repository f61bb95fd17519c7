#pragma once

// The payloads of the step's name service (hub/name_service.hpp) between a
// node server and the hub: NameRequest (publish, lookup, unpublish for one
// of the server's ranks) and NameReply. Strict decoders, bounded: a key is
// at most PMIx's 511 characters, a value 1 MiB, a request 4096 keys; a
// field that does not apply to the operation must be zero, and only a
// successful reply carries entries.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::wire {

constexpr std::size_t kMaxNameKey = 511;
constexpr std::size_t kMaxNameValue = 1u << 20;
constexpr std::uint32_t kMaxNamesPerRequest = 4096;

enum class NameOp : std::uint8_t { Publish = 1, Lookup = 2, Unpublish = 3 };

struct NameRequestMsg {
    std::uint64_t id = 0;
    NameOp op = NameOp::Lookup;
    std::uint32_t rank = 0;
    std::uint8_t scope = 0;       // hub::NameScope (publish), or 1 for a lookup of its node only
    bool firstRead = false;       // publish
    bool wait = false;            // lookup
    std::uint32_t timeoutSec = 0; // a waiting lookup's; 0: until the step ends
    std::uint32_t atLeast = 0;    // a waiting lookup's enough keys; 0: all
    std::vector<std::string> keys;
    std::vector<std::string> values; // publish: one per key
};

struct NameReplyMsg {
    std::uint64_t id = 0;
    std::uint8_t status = 0; // hub::NameStatus
    struct Entry {
        std::string key;
        std::uint32_t rank = 0; // the publisher, in its step
        std::string value;
        std::string nspace; // the publisher's step
    };
    std::vector<Entry> entries;
};

std::string encode(const NameRequestMsg &);
std::string encode(const NameReplyMsg &);
std::optional<NameRequestMsg> decodeNameRequest(const std::string &);
std::optional<NameReplyMsg> decodeNameReply(const std::string &);

} // namespace stepmap::wire
