#include "protocol/wire/payloads.hpp"

#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/field_codec.hpp"
#include "protocol/wire/message.hpp"

namespace stepmap::wire {

using namespace fields;

namespace {

constexpr std::size_t kMaxId = 4096;
constexpr std::size_t kMaxText = 64 * 1024;
constexpr std::uint32_t kMaxNodes = 1u << 20;
constexpr std::size_t kMaxHost = 256;
constexpr std::uint32_t kMaxFanOut = 1024;

bool isPort(std::uint32_t port) {
    return port >= 1 && port <= 65535;
}

} // namespace

std::string encode(const FenceMsg &m) {
    ByteWriter w;
    w.blob(m.fenceId);
    w.u32(static_cast<std::uint32_t>(m.nodes.size()));
    for (auto n : m.nodes)
        w.u32(n);
    w.u8(m.collect ? 1 : 0);
    w.blob(m.data);
    return text(w);
}

std::optional<FenceMsg> decodeFence(const std::string &s) {
    auto r = reader(s);
    FenceMsg m;
    auto id = r.blob(kMaxId);
    auto count = r.u32();
    if (!id || !count || *count > kMaxNodes)
        return std::nullopt;
    m.fenceId = std::move(*id);
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto n = r.u32();
        if (!n)
            return std::nullopt;
        m.nodes.push_back(*n);
    }
    auto collect = r.u8();
    auto data = r.blob(kMaxFrameSize);
    if (!collect || *collect > 1 || !data || !r.atEnd())
        return std::nullopt;
    m.collect = *collect == 1;
    m.data = std::move(*data);
    return m;
}

std::string encode(const FenceDoneMsg &m) {
    ByteWriter w;
    w.blob(m.fenceId);
    w.i32(m.status);
    w.blob(m.data);
    return text(w);
}

std::optional<FenceDoneMsg> decodeFenceDone(const std::string &s) {
    auto r = reader(s);
    auto id = r.blob(kMaxId);
    auto status = r.i32();
    auto data = r.blob(kMaxFrameSize);
    if (!id || !status || !data || !r.atEnd())
        return std::nullopt;
    return FenceDoneMsg{std::move(*id), *status, std::move(*data)};
}

std::string encode(const DmodexRequestMsg &m) {
    ByteWriter w;
    w.u64(m.requestId);
    w.u32(m.originNode);
    w.u32(m.rank);
    return text(w);
}

std::optional<DmodexRequestMsg> decodeDmodexRequest(const std::string &s) {
    auto r = reader(s);
    auto id = r.u64();
    auto origin = r.u32();
    auto rank = r.u32();
    if (!id || !origin || !rank || !r.atEnd())
        return std::nullopt;
    return DmodexRequestMsg{*id, *origin, *rank};
}

std::string encode(const DmodexResponseMsg &m) {
    ByteWriter w;
    w.u64(m.requestId);
    w.u32(m.originNode);
    w.i32(m.status);
    w.blob(m.data);
    return text(w);
}

std::optional<DmodexResponseMsg> decodeDmodexResponse(const std::string &s) {
    auto r = reader(s);
    auto id = r.u64();
    auto origin = r.u32();
    auto status = r.i32();
    auto data = r.blob(kMaxFrameSize);
    if (!id || !origin || !status || !data || !r.atEnd())
        return std::nullopt;
    return DmodexResponseMsg{*id, *origin, *status, std::move(*data)};
}

std::string encode(const AbortMsg &m) {
    ByteWriter w;
    w.u32(m.rank);
    w.i32(m.status);
    w.blob(m.message);
    return text(w);
}

std::optional<AbortMsg> decodeAbort(const std::string &s) {
    auto r = reader(s);
    auto rank = r.u32();
    auto status = r.i32();
    auto text = r.blob(kMaxText);
    if (!rank || !status || !text || !r.atEnd())
        return std::nullopt;
    return AbortMsg{*rank, *status, std::move(*text)};
}

std::string encode(const ShutdownMsg &m) {
    ByteWriter w;
    w.i32(m.status);
    w.blob(m.reason);
    return text(w);
}

std::optional<ShutdownMsg> decodeShutdown(const std::string &s) {
    auto r = reader(s);
    auto status = r.i32();
    auto text = r.blob(kMaxText);
    if (!status || !text || !r.atEnd())
        return std::nullopt;
    return ShutdownMsg{*status, std::move(*text)};
}

std::string encode(const WelcomeMsg &m) {
    return encodeFields(m.fanOut);
}

std::optional<WelcomeMsg> decodeWelcome(const std::string &s) {
    WelcomeMsg m;
    if (!s.empty() && (!decodeFields(s, m.fanOut) || m.fanOut > kMaxFanOut))
        return std::nullopt;
    return m;
}

std::string encode(const TreeListenMsg &m) {
    return encodeFields(m.port);
}

std::optional<TreeListenMsg> decodeTreeListen(const std::string &s) {
    TreeListenMsg m;
    const bool ok = decodeFields(s, m.port) && isPort(m.port);
    return ok ? std::optional(m) : std::nullopt;
}

std::string encode(const TreeParentMsg &m) {
    return encodeFields(m.parentNode, m.host, m.port);
}

std::optional<TreeParentMsg> decodeTreeParent(const std::string &s) {
    TreeParentMsg m;
    const bool ok = decodeFields(s, m.parentNode, m.host, m.port) && !m.host.empty() &&
                    m.host.size() <= kMaxHost && isPort(m.port);
    return ok ? std::optional(std::move(m)) : std::nullopt;
}

std::string encode(const TreeUpMsg &m) {
    return encodeFields(m.sequence, m.collect, m.count, m.records);
}

std::optional<TreeUpMsg> decodeTreeUp(const std::string &s) {
    TreeUpMsg m;
    const bool ok = decodeFields(s, m.sequence, m.collect, m.count, m.records) && m.count > 0 &&
                    m.count <= kMaxNodes && (m.collect || m.records.empty());
    return ok ? std::optional(std::move(m)) : std::nullopt;
}

std::string encode(const TreeDownMsg &m) {
    return encodeFields(m.sequence, m.status, m.data);
}

std::optional<TreeDownMsg> decodeTreeDown(const std::string &s) {
    TreeDownMsg m;
    const bool ok = decodeFields(s, m.sequence, m.status, m.data);
    return ok ? std::optional(std::move(m)) : std::nullopt;
}

std::string encode(const TreeRelayMsg &m) {
    return encodeFields(m.node, m.payload);
}

std::optional<TreeRelayMsg> decodeTreeRelay(const std::string &s) {
    TreeRelayMsg m;
    const bool ok = decodeFields(s, m.node, m.payload) && m.node < kMaxNodes;
    return ok ? std::optional(std::move(m)) : std::nullopt;
}

std::string encode(const RelayMsg &m) {
    return encodeFields(m.node, m.type, m.payload);
}

std::optional<RelayMsg> decodeRelay(const std::string &s) {
    RelayMsg m;
    // A relay carries no relay, and never the handshake's challenge.
    const bool ok = decodeFields(s, m.node, m.type, m.payload) && m.node < kMaxNodes &&
                    m.type != static_cast<std::uint32_t>(MessageType::Relay) &&
                    m.type != static_cast<std::uint32_t>(MessageType::Challenge) && m.type < 256;
    return ok ? std::optional(std::move(m)) : std::nullopt;
}

std::string encode(const JoinedBelowMsg &m) {
    ByteWriter w;
    w.u32(static_cast<std::uint32_t>(m.nodes.size()));
    for (const auto &n : m.nodes) {
        w.u32(n.node);
        w.blob(n.address);
    }
    return text(w);
}

std::optional<JoinedBelowMsg> decodeJoinedBelow(const std::string &s) {
    auto r = reader(s);
    auto count = r.u32();
    // Each entry takes 8 bytes at least: a count beyond that is a lie.
    if (!count || *count == 0 || *count > kMaxNodes || *count > s.size() / 8)
        return std::nullopt;
    JoinedBelowMsg m;
    m.nodes.reserve(*count);
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto node = r.u32();
        auto address = r.blob(kMaxHost);
        if (!node || *node >= kMaxNodes || !address)
            return std::nullopt;
        m.nodes.push_back({*node, std::move(*address)});
    }
    if (!r.atEnd())
        return std::nullopt;
    return m;
}

void appendRecord(std::string &records, const FenceRecord &record) {
    records += encodeFields(record.node, record.data);
}

std::optional<std::vector<FenceRecord>>
decodeRecords(const std::string &records, std::uint32_t count, std::uint32_t nodeCount) {
    auto r = reader(records);
    std::vector<FenceRecord> out;
    // Each record takes 8 bytes at least: a count beyond that is a lie.
    if (count > records.size() / 8)
        return std::nullopt;
    out.reserve(count);
    for (std::uint32_t i = 0; i < count; ++i) {
        auto node = r.u32();
        auto data = r.blob(kMaxFrameSize);
        if (!node || *node >= nodeCount || !data)
            return std::nullopt;
        out.push_back({*node, std::move(*data)});
    }
    if (!r.atEnd())
        return std::nullopt;
    return out;
}

std::string encode(const NoticeMsg &m) {
    return encodeFields(m.rank, m.text.substr(0, kMaxNoticeText));
}

std::optional<NoticeMsg> decodeNotice(const std::string &s) {
    auto r = reader(s);
    auto rank = r.u32();
    auto text = r.blob(kMaxNoticeText);
    if (!rank || !text || !r.atEnd())
        return std::nullopt;
    return NoticeMsg{*rank, std::move(*text)};
}

std::string encode(const FenceProbeMsg &m) {
    return encodeFields(m.fenceId.substr(0, kMaxId), m.entered, m.waiting);
}

std::optional<FenceProbeMsg> decodeFenceProbe(const std::string &s) {
    auto r = reader(s);
    FenceProbeMsg m;
    auto id = r.blob(kMaxId);
    if (!id || !get(r, m.entered) || !get(r, m.waiting) || (m.waiting && !m.entered) || !r.atEnd())
        return std::nullopt;
    m.fenceId = std::move(*id);
    return m;
}

} // namespace stepmap::wire
