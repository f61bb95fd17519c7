#pragma once

// Internal to the mapper: a set of a node's local PUs (node_model.hpp), one
// bit each. Nodes hold tens to hundreds of PUs, so the sets are a few words
// and every operation is a short loop over words.

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace stepmap::detail {

inline constexpr std::uint32_t kNoBit = 0xffffffffu;

class PuBits {
public:
    PuBits() = default;
    explicit PuBits(std::uint32_t size) { clear(size); }

    std::uint32_t size() const { return size_; }

    void clear(std::uint32_t size) {
        size_ = size;
        words_.assign((size + 63) / 64, 0);
    }
    void fill(std::uint32_t size) {
        clear(size);
        setRange(0, size);
    }
    bool test(std::uint32_t bit) const { return (words_[bit / 64] >> (bit % 64)) & 1u; }
    void set(std::uint32_t bit) { words_[bit / 64] |= std::uint64_t{1} << (bit % 64); }
    void reset(std::uint32_t bit) { words_[bit / 64] &= ~(std::uint64_t{1} << (bit % 64)); }

    void setRange(std::uint32_t first, std::uint32_t count) {
        forRange(first, count, [&](std::size_t w, std::uint64_t mask) { words_[w] |= mask; });
    }
    void resetRange(std::uint32_t first, std::uint32_t count) {
        forRange(first, count, [&](std::size_t w, std::uint64_t mask) { words_[w] &= ~mask; });
    }
    // Keeps only the bits in [first, first + count).
    void keepRange(std::uint32_t first, std::uint32_t count) {
        std::size_t next = 0;
        forRange(first, count, [&](std::size_t w, std::uint64_t mask) {
            for (; next < w; ++next)
                words_[next] = 0;
            words_[w] &= mask;
            next = w + 1;
        });
        for (; next < words_.size(); ++next)
            words_[next] = 0;
    }
    bool allInRange(std::uint32_t first, std::uint32_t count) const {
        bool all = true;
        forRange(first, count, [&](std::size_t w, std::uint64_t mask) {
            all = all && (words_[w] & mask) == mask;
        });
        return all;
    }
    std::uint32_t countRange(std::uint32_t first, std::uint32_t count) const {
        std::uint32_t n = 0;
        forRange(first, count, [&](std::size_t w, std::uint64_t mask) {
            n += static_cast<std::uint32_t>(std::popcount(words_[w] & mask));
        });
        return n;
    }

    void andWith(const PuBits &other) {
        for (std::size_t w = 0; w < words_.size(); ++w)
            words_[w] &= other.words_[w];
    }
    void andNot(const PuBits &other) {
        for (std::size_t w = 0; w < words_.size(); ++w)
            words_[w] &= ~other.words_[w];
    }
    void orWith(const PuBits &other) {
        for (std::size_t w = 0; w < words_.size(); ++w)
            words_[w] |= other.words_[w];
    }
    bool any() const {
        for (std::uint64_t word : words_) {
            if (word != 0)
                return true;
        }
        return false;
    }
    std::uint32_t count() const {
        std::uint32_t n = 0;
        for (std::uint64_t word : words_)
            n += static_cast<std::uint32_t>(std::popcount(word));
        return n;
    }
    bool isSubsetOf(const PuBits &other) const {
        for (std::size_t w = 0; w < words_.size(); ++w) {
            if ((words_[w] & ~other.words_[w]) != 0)
                return false;
        }
        return true;
    }
    // The lowest set bit at or above `from`, or kNoBit.
    std::uint32_t next(std::uint32_t from) const {
        if (from >= size_)
            return kNoBit;
        std::size_t w = from / 64;
        std::uint64_t word = words_[w] & (~std::uint64_t{0} << (from % 64));
        while (true) {
            if (word != 0)
                return static_cast<std::uint32_t>(w * 64 + std::countr_zero(word));
            if (++w == words_.size())
                return kNoBit;
            word = words_[w];
        }
    }
    std::vector<std::uint32_t> bits() const {
        std::vector<std::uint32_t> out;
        for (std::uint32_t bit = next(0); bit != kNoBit; bit = next(bit + 1))
            out.push_back(bit);
        return out;
    }

    bool operator==(const PuBits &) const = default;

private:
    // Calls f(word, mask) for each word [first, first + count) touches.
    template <class F> void forRange(std::uint32_t first, std::uint32_t count, F f) const {
        std::uint32_t bit = first;
        const std::uint32_t end = first + count;
        while (bit < end) {
            const std::uint32_t offset = bit % 64;
            const std::uint32_t take = std::min<std::uint32_t>(64 - offset, end - bit);
            const std::uint64_t mask =
                (take == 64 ? ~std::uint64_t{0} : ((std::uint64_t{1} << take) - 1)) << offset;
            f(bit / 64, mask);
            bit += take;
        }
    }

    std::uint32_t size_ = 0;
    std::vector<std::uint64_t> words_;
};

} // namespace stepmap::detail
