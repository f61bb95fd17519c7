#include "protocol/wire/byte_buffer.hpp"

#include <cstring>

namespace stepmap::wire {

void ByteWriter::u32(std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
        bytes_.push_back(static_cast<std::uint8_t>(v >> shift));
}

void ByteWriter::u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32));
    u32(static_cast<std::uint32_t>(v));
}

void ByteWriter::raw(const void *data, std::size_t size) {
    const auto *p = static_cast<const std::uint8_t *>(data);
    bytes_.insert(bytes_.end(), p, p + size);
}

void ByteWriter::blob(std::string_view data) {
    u32(static_cast<std::uint32_t>(data.size()));
    raw(data.data(), data.size());
}

std::optional<std::uint8_t> ByteReader::u8() {
    if (size_ - pos_ < 1)
        return std::nullopt;
    return data_[pos_++];
}

std::optional<std::uint32_t> ByteReader::u32() {
    if (size_ - pos_ < 4)
        return std::nullopt;
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i)
        v = (v << 8) | data_[pos_++];
    return v;
}

std::optional<std::uint64_t> ByteReader::u64() {
    auto hi = u32();
    auto lo = u32();
    if (!hi || !lo)
        return std::nullopt;
    return (std::uint64_t{*hi} << 32) | *lo;
}

std::optional<std::int32_t> ByteReader::i32() {
    auto v = u32();
    if (!v)
        return std::nullopt;
    return static_cast<std::int32_t>(*v);
}

std::optional<std::string> ByteReader::blob(std::size_t maxSize) {
    auto n = u32();
    if (!n || *n > maxSize || size_ - pos_ < *n)
        return std::nullopt;
    std::string s(reinterpret_cast<const char *>(data_ + pos_), *n);
    pos_ += *n;
    return s;
}

} // namespace stepmap::wire
