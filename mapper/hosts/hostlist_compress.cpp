#include "hosts/hostlist.hpp"

#include <cstdint>

namespace stepmap {

namespace {

constexpr std::size_t kMaxDigits = 9;

// A name split as prefix + trailing number ("c007" = "c" + "007").
struct SplitName {
    std::string_view prefix;
    std::string_view digits; // empty: the name does not end in a number
    std::uint64_t value = 0;
};

SplitName splitName(std::string_view name) {
    std::size_t start = name.size();
    while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9')
        --start;
    if (start == name.size() || name.size() - start > kMaxDigits)
        return SplitName{name, {}, 0};
    SplitName split{name.substr(0, start), name.substr(start), 0};
    for (char c : split.digits)
        split.value = split.value * 10 + static_cast<std::uint64_t>(c - '0');
    return split;
}

// The text expandHostlist prints for `value` in a range whose low end was
// written with `width` digits.
bool printsAs(std::uint64_t value, std::size_t width, std::string_view digits) {
    std::string text = std::to_string(value);
    if (text.size() < width)
        text.insert(0, width - text.size(), '0');
    return text == digits;
}

// Builds "prefix[lo-hi,...]" for one run of names sharing a prefix.
class BracketWriter {
public:
    explicit BracketWriter(std::string_view prefix) : prefix_(prefix) {}

    // Adds the next number: it extends the open range or starts a new one.
    void add(const SplitName &name) {
        ++count_;
        if (open_ && name.value == hi_ + 1 && printsAs(name.value, loDigits_.size(), name.digits)) {
            hi_ = name.value;
            hiDigits_ = name.digits;
            return;
        }
        closeRange();
        open_ = true;
        loDigits_ = hiDigits_ = name.digits;
        lo_ = hi_ = name.value;
    }

    void writeTo(std::string &out) {
        closeRange();
        out += prefix_;
        if (count_ == 1) {
            out += ranges_;
            return;
        }
        out += '[';
        out += ranges_;
        out += ']';
    }

private:
    void closeRange() {
        if (!open_)
            return;
        if (!ranges_.empty())
            ranges_ += ',';
        ranges_ += loDigits_;
        if (hi_ != lo_) {
            ranges_ += '-';
            ranges_ += hiDigits_;
        }
        open_ = false;
    }

    std::string_view prefix_;
    std::string ranges_;
    std::size_t count_ = 0;
    bool open_ = false;
    std::string_view loDigits_;
    std::string_view hiDigits_;
    std::uint64_t lo_ = 0;
    std::uint64_t hi_ = 0;
};

} // namespace

std::string compressHostlist(const std::vector<std::string> &names) {
    std::string out;
    std::size_t i = 0;
    while (i < names.size()) {
        if (!out.empty())
            out += ',';
        const SplitName first = splitName(names[i]);
        if (first.digits.empty()) {
            out += names[i++];
            continue;
        }
        // The run of adjacent numbered names sharing this prefix.
        BracketWriter writer(first.prefix);
        writer.add(first);
        for (++i; i < names.size(); ++i) {
            const SplitName next = splitName(names[i]);
            if (next.digits.empty() || next.prefix != first.prefix)
                break;
            writer.add(next);
        }
        writer.writeTo(out);
    }
    return out;
}

} // namespace stepmap
