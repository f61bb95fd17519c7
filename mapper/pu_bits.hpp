#pragma once

// Internal to the mapper: a set of a node's local PUs (node_model.hpp), one
// bit each. Nodes hold tens to hundreds of PUs, so the sets are a few words
// and every operation is a short loop over words.

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
        for (std::uint32_t bit = first; bit < first + count; ++bit)
            set(bit);
    }
    void resetRange(std::uint32_t first, std::uint32_t count) {
        for (std::uint32_t bit = first; bit < first + count; ++bit)
            reset(bit);
    }
    // Keeps only the bits in [first, first + count).
    void keepRange(std::uint32_t first, std::uint32_t count) {
        for (std::uint32_t w = 0; w < words_.size(); ++w) {
            const std::uint32_t lo = w * 64;
            std::uint64_t mask = 0;
            for (std::uint32_t b = 0; b < 64; ++b) {
                const std::uint32_t bit = lo + b;
                if (bit >= first && bit < first + count)
                    mask |= std::uint64_t{1} << b;
            }
            words_[w] &= mask;
        }
    }
    bool allInRange(std::uint32_t first, std::uint32_t count) const {
        for (std::uint32_t bit = first; bit < first + count; ++bit) {
            if (!test(bit))
                return false;
        }
        return true;
    }
    std::uint32_t countRange(std::uint32_t first, std::uint32_t count) const {
        std::uint32_t n = 0;
        for (std::uint32_t bit = first; bit < first + count; ++bit)
            n += test(bit) ? 1 : 0;
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
    std::uint32_t size_ = 0;
    std::vector<std::uint64_t> words_;
};

} // namespace stepmap::detail
