#include "payloads.hpp"

#include "byte_buffer.hpp"
#include "message.hpp"

namespace stepmap::wire {

namespace {

constexpr std::size_t kMaxId = 4096;
constexpr std::size_t kMaxText = 64 * 1024;
constexpr std::uint32_t kMaxNodes = 1u << 20;

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

} // namespace stepmap::wire
