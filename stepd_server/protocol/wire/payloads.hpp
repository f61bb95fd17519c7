#pragma once

// Typed payloads of the messages in message.hpp, with strict decoders: a
// payload that does not decode exactly is rejected, never half-read.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::wire {

struct FenceMsg {
    std::string fenceId;              // same on every participating node
    std::vector<std::uint32_t> nodes; // participating node indices, sorted
    bool collect = false;
    std::string data;
};

struct FenceDoneMsg {
    std::string fenceId;
    std::int32_t status = 0;
    std::string data;
};

struct DmodexRequestMsg {
    std::uint64_t requestId = 0;
    std::uint32_t originNode = 0;
    std::uint32_t rank = 0;
};

struct DmodexResponseMsg {
    std::uint64_t requestId = 0;
    std::uint32_t originNode = 0;
    std::int32_t status = 0;
    std::string data;
};

struct AbortMsg {
    std::uint32_t rank = 0;
    std::int32_t status = 0;
    std::string message;
};

struct ShutdownMsg {
    std::int32_t status = 0;
    std::string reason;
};

std::string encode(const FenceMsg &);
std::string encode(const FenceDoneMsg &);
std::string encode(const DmodexRequestMsg &);
std::string encode(const DmodexResponseMsg &);
std::string encode(const AbortMsg &);
std::string encode(const ShutdownMsg &);

std::optional<FenceMsg> decodeFence(const std::string &);
std::optional<FenceDoneMsg> decodeFenceDone(const std::string &);
std::optional<DmodexRequestMsg> decodeDmodexRequest(const std::string &);
std::optional<DmodexResponseMsg> decodeDmodexResponse(const std::string &);
std::optional<AbortMsg> decodeAbort(const std::string &);
std::optional<ShutdownMsg> decodeShutdown(const std::string &);

} // namespace stepmap::wire
