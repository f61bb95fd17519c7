#include "payloads.hpp"

#include "byte_buffer.hpp"
#include "message.hpp"

namespace stepmap::wire {

namespace {

constexpr std::size_t kMaxId = 4096;
constexpr std::size_t kMaxText = 64 * 1024;
constexpr std::uint32_t kMaxNodes = 1u << 20;
constexpr std::size_t kMaxHost = 256;
constexpr std::uint32_t kMaxFanOut = 1024;

std::string str(ByteWriter &w) {
    return std::string(w.bytes().begin(), w.bytes().end());
}

ByteReader reader(const std::string &s) {
    return ByteReader(reinterpret_cast<const std::uint8_t *>(s.data()), s.size());
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
    return str(w);
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
    return str(w);
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
    return str(w);
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
    return str(w);
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
    return str(w);
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
    return str(w);
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
    ByteWriter w;
    w.u32(m.fanOut);
    return str(w);
}

std::optional<WelcomeMsg> decodeWelcome(const std::string &s) {
    if (s.empty())
        return WelcomeMsg{};
    auto r = reader(s);
    auto fanOut = r.u32();
    if (!fanOut || *fanOut > kMaxFanOut || !r.atEnd())
        return std::nullopt;
    return WelcomeMsg{*fanOut};
}

std::string encode(const TreeListenMsg &m) {
    ByteWriter w;
    w.u32(m.port);
    return str(w);
}

std::optional<TreeListenMsg> decodeTreeListen(const std::string &s) {
    auto r = reader(s);
    auto port = r.u32();
    if (!port || *port == 0 || *port > 65535 || !r.atEnd())
        return std::nullopt;
    return TreeListenMsg{*port};
}

std::string encode(const TreeParentMsg &m) {
    ByteWriter w;
    w.u32(m.parentNode);
    w.blob(m.host);
    w.u32(m.port);
    return str(w);
}

std::optional<TreeParentMsg> decodeTreeParent(const std::string &s) {
    auto r = reader(s);
    auto node = r.u32();
    auto host = r.blob(kMaxHost);
    auto port = r.u32();
    if (!node || !host || host->empty() || !port || *port == 0 || *port > 65535 || !r.atEnd())
        return std::nullopt;
    return TreeParentMsg{*node, std::move(*host), *port};
}

std::string encode(const TreeUpMsg &m) {
    ByteWriter w;
    w.u64(m.sequence);
    w.u8(m.collect ? 1 : 0);
    w.u32(m.count);
    w.blob(m.records);
    return str(w);
}

std::optional<TreeUpMsg> decodeTreeUp(const std::string &s) {
    auto r = reader(s);
    auto sequence = r.u64();
    auto collect = r.u8();
    auto count = r.u32();
    auto records = r.blob(kMaxFrameSize);
    if (!sequence || !collect || *collect > 1 || !count || *count == 0 || *count > kMaxNodes ||
        !records || (*collect == 0 && !records->empty()) || !r.atEnd())
        return std::nullopt;
    return TreeUpMsg{*sequence, *collect == 1, *count, std::move(*records)};
}

std::string encode(const TreeDownMsg &m) {
    ByteWriter w;
    w.u64(m.sequence);
    w.i32(m.status);
    w.blob(m.data);
    return str(w);
}

std::optional<TreeDownMsg> decodeTreeDown(const std::string &s) {
    auto r = reader(s);
    auto sequence = r.u64();
    auto status = r.i32();
    auto data = r.blob(kMaxFrameSize);
    if (!sequence || !status || !data || !r.atEnd())
        return std::nullopt;
    return TreeDownMsg{*sequence, *status, std::move(*data)};
}

void appendRecord(std::string &records, const FenceRecord &record) {
    ByteWriter w;
    w.u32(record.node);
    w.blob(record.data);
    records += str(w);
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

} // namespace stepmap::wire
