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

// A line for srun's terminal about one of the sender's ranks.
constexpr std::size_t kMaxNoticeText = 1024;
struct NoticeMsg {
    std::uint32_t rank = 0;
    std::string text;
};

// A fence as every node names it: its nodes ("0,1,3,") and its count
// among the fences over them ("0,1,3,#2").
struct FenceProbeMsg {
    std::string fenceId;
    bool entered = false; // FenceEntered only: the node entered the fence
    bool waiting = false; // FenceEntered only: and it has not completed there
};

struct ShutdownMsg {
    std::int32_t status = 0;
    std::string reason;
};

// The hub's answer to a Hello. fanOut 0: fences go through the hub (star);
// else whole-step fences run over a tree of that fan-out. An empty payload
// decodes as the star.
struct WelcomeMsg {
    std::uint32_t fanOut = 0;
};

struct TreeListenMsg {
    std::uint32_t port = 0; // 1..65535
};

struct TreeParentMsg {
    std::uint32_t parentNode = 0;
    std::string host; // numeric, as the hub saw the parent
    std::uint32_t port = 0;
};

// One node's contribution to a collecting tree fence.
struct FenceRecord {
    std::uint32_t node = 0;
    std::string data;
};

struct TreeUpMsg {
    std::uint64_t sequence = 0; // the step's n-th whole-step fence
    bool collect = false;
    std::uint32_t count = 0; // nodes contributing (the sender's subtree)
    std::string records;     // collect: count encoded FenceRecords, any order
};

struct TreeDownMsg {
    std::uint64_t sequence = 0;
    std::int32_t status = 0;
    std::string data; // every node's data in node order
};

// A TreeUp or TreeDown payload through the hub: to the hub, node is where
// it goes; from the hub, where it came from.
struct TreeRelayMsg {
    std::uint32_t node = 0;
    std::string payload;
};

// A frame of node carried by the relays between it and srun's hub. A
// relayed Hello (the node joined its parent) carries the node's address as
// its parent saw it.
struct RelayMsg {
    std::uint32_t node = 0;
    std::uint32_t type = 0; // a MessageType
    std::string payload;
};

// Servers that joined srun through the relays below the sender (in
// arrival order), each with its address as its parent saw it.
struct JoinedNode {
    std::uint32_t node = 0;
    std::string address;
};
struct JoinedBelowMsg {
    std::vector<JoinedNode> nodes;
};

std::string encode(const WelcomeMsg &);
std::string encode(const TreeListenMsg &);
std::string encode(const TreeParentMsg &);
std::string encode(const TreeUpMsg &);
std::string encode(const TreeDownMsg &);
std::string encode(const TreeRelayMsg &);
// Appends one record to a TreeUpMsg's records.
void appendRecord(std::string &records, const FenceRecord &record);

std::optional<WelcomeMsg> decodeWelcome(const std::string &);
std::optional<TreeListenMsg> decodeTreeListen(const std::string &);
std::optional<TreeParentMsg> decodeTreeParent(const std::string &);
std::optional<TreeUpMsg> decodeTreeUp(const std::string &);
std::optional<TreeDownMsg> decodeTreeDown(const std::string &);
std::optional<TreeRelayMsg> decodeTreeRelay(const std::string &);
std::string encode(const RelayMsg &);
std::optional<RelayMsg> decodeRelay(const std::string &);
std::string encode(const JoinedBelowMsg &);
std::optional<JoinedBelowMsg> decodeJoinedBelow(const std::string &);
// Exactly count records, each of a node below nodeCount; nullopt otherwise.
std::optional<std::vector<FenceRecord>> decodeRecords(const std::string &records,
                                                      std::uint32_t count, std::uint32_t nodeCount);

std::string encode(const FenceMsg &);
std::string encode(const FenceDoneMsg &);
std::string encode(const DmodexRequestMsg &);
std::string encode(const DmodexResponseMsg &);
std::string encode(const AbortMsg &);
std::string encode(const ShutdownMsg &);
std::string encode(const NoticeMsg &);
std::string encode(const FenceProbeMsg &);

std::optional<FenceMsg> decodeFence(const std::string &);
std::optional<FenceDoneMsg> decodeFenceDone(const std::string &);
std::optional<DmodexRequestMsg> decodeDmodexRequest(const std::string &);
std::optional<DmodexResponseMsg> decodeDmodexResponse(const std::string &);
std::optional<AbortMsg> decodeAbort(const std::string &);
std::optional<ShutdownMsg> decodeShutdown(const std::string &);
std::optional<NoticeMsg> decodeNotice(const std::string &);
std::optional<FenceProbeMsg> decodeFenceProbe(const std::string &);

} // namespace stepmap::wire
