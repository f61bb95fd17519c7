#include "protocol/wire/name_payloads.hpp"

#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/field_codec.hpp"

namespace stepmap::wire {

using fields::reader;
using fields::text;

namespace {

constexpr std::uint8_t kMaxScope = 2;
constexpr std::uint8_t kMaxStatus = 5;

} // namespace

std::string encode(const NameRequestMsg &m) {
    ByteWriter w;
    w.u64(m.id);
    w.u8(static_cast<std::uint8_t>(m.op));
    w.u32(m.rank);
    w.u8(m.scope);
    fields::put(w, m.firstRead);
    fields::put(w, m.wait);
    w.u32(m.timeoutSec);
    w.u32(m.atLeast);
    w.u32(static_cast<std::uint32_t>(m.keys.size()));
    for (std::size_t i = 0; i < m.keys.size(); ++i) {
        w.blob(m.keys[i]);
        if (m.op == NameOp::Publish)
            w.blob(i < m.values.size() ? m.values[i] : std::string());
    }
    return text(w);
}

std::optional<NameRequestMsg> decodeNameRequest(const std::string &s) {
    auto r = reader(s);
    NameRequestMsg m;
    auto id = r.u64();
    auto op = r.u8();
    auto rank = r.u32();
    auto scope = r.u8();
    bool firstRead = false, wait = false;
    const bool flags = fields::get(r, firstRead) && fields::get(r, wait);
    auto timeout = r.u32();
    auto atLeast = r.u32();
    auto count = r.u32();
    if (!id || !op || *op < 1 || *op > 3 || !rank || !scope || *scope > kMaxScope || !flags ||
        !timeout || !atLeast || !count || *count > kMaxNamesPerRequest)
        return std::nullopt;
    const bool lookingUp = *op == static_cast<std::uint8_t>(NameOp::Lookup);
    const bool publishing = *op == static_cast<std::uint8_t>(NameOp::Publish);
    if ((!lookingUp && (wait || *timeout || *atLeast)) || (!publishing && firstRead) ||
        (lookingUp && *scope > 1) || (!lookingUp && !publishing && *scope != 0))
        return std::nullopt;
    m.id = *id;
    m.op = static_cast<NameOp>(*op);
    m.rank = *rank;
    m.scope = *scope;
    m.firstRead = firstRead;
    m.wait = wait;
    m.timeoutSec = *timeout;
    m.atLeast = *atLeast;
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto key = r.blob(kMaxNameKey);
        if (!key)
            return std::nullopt;
        m.keys.push_back(std::move(*key));
        if (m.op == NameOp::Publish) {
            auto value = r.blob(kMaxNameValue);
            if (!value)
                return std::nullopt;
            m.values.push_back(std::move(*value));
        }
    }
    if (!r.atEnd())
        return std::nullopt;
    return m;
}

std::string encode(const NameReplyMsg &m) {
    ByteWriter w;
    w.u64(m.id);
    w.u8(m.status);
    w.u32(static_cast<std::uint32_t>(m.entries.size()));
    for (const auto &e : m.entries) {
        w.blob(e.key);
        w.u32(e.rank);
        w.blob(e.value);
        w.blob(e.nspace);
    }
    return text(w);
}

std::optional<NameReplyMsg> decodeNameReply(const std::string &s) {
    auto r = reader(s);
    NameReplyMsg m;
    auto id = r.u64();
    auto status = r.u8();
    auto count = r.u32();
    if (!id || !status || *status > kMaxStatus || !count || *count > kMaxNamesPerRequest ||
        (*status != 0 && *count != 0))
        return std::nullopt;
    m.id = *id;
    m.status = *status;
    for (std::uint32_t i = 0; i < *count; ++i) {
        NameReplyMsg::Entry e;
        auto key = r.blob(kMaxNameKey);
        auto rank = r.u32();
        auto value = key && rank ? r.blob(kMaxNameValue) : std::nullopt;
        auto nspace = value ? r.blob(255) : std::nullopt;
        if (!nspace)
            return std::nullopt;
        m.entries.push_back({std::move(*key), *rank, std::move(*value), std::move(*nspace)});
    }
    if (!r.atEnd())
        return std::nullopt;
    return m;
}

} // namespace stepmap::wire
