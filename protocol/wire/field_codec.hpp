#pragma once

// Internal to the wire payload codecs (payloads.cpp, name_payloads.cpp,
// profile_payloads.cpp): a payload as text and back, and messages written
// and read field by field. A bool is one byte, 0 or 1; a string a blob of
// at most one frame.

#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/message.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace stepmap::wire::fields {

inline std::string text(const ByteWriter &w) {
    return std::string(w.bytes().begin(), w.bytes().end());
}

inline ByteReader reader(const std::string &s) {
    return ByteReader(reinterpret_cast<const std::uint8_t *>(s.data()), s.size());
}

inline void put(ByteWriter &w, std::uint32_t v) {
    w.u32(v);
}
inline void put(ByteWriter &w, std::uint64_t v) {
    w.u64(v);
}
inline void put(ByteWriter &w, std::int32_t v) {
    w.i32(v);
}
inline void put(ByteWriter &w, bool v) {
    w.u8(v ? 1 : 0);
}
inline void put(ByteWriter &w, const std::string &v) {
    w.blob(v);
}

template <class T> bool take(std::optional<T> got, T &out) {
    if (got)
        out = std::move(*got);
    return got.has_value();
}
inline bool get(ByteReader &r, std::uint32_t &v) {
    return take(r.u32(), v);
}
inline bool get(ByteReader &r, std::uint64_t &v) {
    return take(r.u64(), v);
}
inline bool get(ByteReader &r, std::int32_t &v) {
    return take(r.i32(), v);
}
inline bool get(ByteReader &r, bool &v) {
    std::uint8_t b = 2;
    return take(r.u8(), b) && b <= 1 && ((v = b == 1), true);
}
inline bool get(ByteReader &r, std::string &v) {
    return take(r.blob(kMaxFrameSize), v);
}

template <class... T> std::string encodeFields(const T &...values) {
    ByteWriter w;
    (put(w, values), ...);
    return text(w);
}

// Every field in order, and nothing after them.
template <class... T> bool decodeFields(const std::string &s, T &...values) {
    auto r = reader(s);
    return (get(r, values) && ...) && r.atEnd();
}

} // namespace stepmap::wire::fields
