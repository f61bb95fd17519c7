#pragma once

// Bounded big-endian encoding for messages between stepmap processes. The
// reader never reads past its input: every get reports failure instead.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::wire {

class ByteWriter {
public:
    void u8(std::uint8_t v) { bytes_.push_back(v); }
    void u32(std::uint32_t v);
    void u64(std::uint64_t v);
    void i32(std::int32_t v) { u32(static_cast<std::uint32_t>(v)); }
    void raw(const void *data, std::size_t size);
    // Length-prefixed (u32) bytes.
    void blob(std::string_view data);
    const std::vector<std::uint8_t> &bytes() const { return bytes_; }
    std::vector<std::uint8_t> take() { return std::move(bytes_); }

private:
    std::vector<std::uint8_t> bytes_;
};

class ByteReader {
public:
    ByteReader(const std::uint8_t *data, std::size_t size) : data_(data), size_(size) {}
    std::optional<std::uint8_t> u8();
    std::optional<std::uint32_t> u32();
    std::optional<std::uint64_t> u64();
    std::optional<std::int32_t> i32();
    std::optional<std::string> blob(std::size_t maxSize);
    bool atEnd() const { return pos_ == size_; }

private:
    const std::uint8_t *data_;
    std::size_t size_;
    std::size_t pos_ = 0;
};

} // namespace stepmap::wire
