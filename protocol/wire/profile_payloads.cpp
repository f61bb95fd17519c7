#include "protocol/wire/profile_payloads.hpp"

#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/field_codec.hpp"

namespace stepmap::wire {

using fields::reader;
using fields::text;

std::string encode(const ProfileStateMsg &m) {
    ByteWriter w;
    w.u8(m.usable ? 1 : 0);
    w.blob(m.reason.substr(0, kMaxProfileReason));
    return text(w);
}

std::optional<ProfileStateMsg> decodeProfileState(const std::string &s) {
    auto r = reader(s);
    auto usable = r.u8();
    auto reason = r.blob(kMaxProfileReason);
    if (!usable || *usable > 1 || !reason || !r.atEnd())
        return std::nullopt;
    return ProfileStateMsg{*usable == 1, std::move(*reason)};
}

std::string encode(const ProfileVerdictMsg &m) {
    ByteWriter w;
    w.u32(static_cast<std::uint32_t>(m.withheld.size()));
    for (auto node : m.withheld)
        w.u32(node);
    return text(w);
}

std::optional<ProfileVerdictMsg> decodeProfileVerdict(const std::string &s,
                                                      std::uint32_t nodeCount) {
    auto r = reader(s);
    auto count = r.u32();
    if (!count || *count > nodeCount)
        return std::nullopt;
    ProfileVerdictMsg m;
    m.withheld.reserve(*count);
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto node = r.u32();
        if (!node || *node >= nodeCount || (!m.withheld.empty() && *node <= m.withheld.back()))
            return std::nullopt;
        m.withheld.push_back(*node);
    }
    if (!r.atEnd())
        return std::nullopt;
    return m;
}

} // namespace stepmap::wire
