#include "hosts/hostlist.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap {

namespace {

constexpr std::size_t kMaxDigits = 9;

bool isHostNameChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

std::string padded(std::uint64_t value, std::size_t width) {
    std::string digits = std::to_string(value);
    if (digits.size() < width)
        digits.insert(0, width - digits.size(), '0');
    return digits;
}

// One part of an item: literal text (one alternative) or a bracket.
using Part = std::vector<std::string>;

class Expander {
public:
    // limits_.maxNames: the names this expression may add.
    Expander(std::string_view expr, const HostlistLimits &limits)
        : expr_(expr), limits_(limits), most_(limits.maxNames) {
        limits_.maxNames -= std::min(limits.namesSoFar, limits.maxNames);
    }

    Expected<std::vector<std::string>> run() {
        if (expr_.empty())
            return fail("it is empty");
        std::size_t pos = 0;
        while (true) {
            const std::size_t end = itemEnd(pos);
            if (end == std::string_view::npos)
                return fail("missing ']'");
            if (auto error = expandItem(expr_.substr(pos, end - pos)))
                return *error;
            if (end == expr_.size())
                break;
            pos = end + 1;
        }
        return std::move(names_);
    }

private:
    UserError fail(std::string_view reason) const {
        return UserError{"invalid hostlist " + quoted(expr_) + ": " + std::string(reason)};
    }

    UserError tooManyNames() const {
        const std::string most = std::to_string(most_);
        if (limits_.namesSoFar == 0)
            return fail("it expands to more than " + most + " names");
        return fail("with the " + std::to_string(limits_.namesSoFar) +
                    " names before it, the names come to more than " + most);
    }

    // The position of the ',' ending the item at pos (or the end), npos if a
    // bracket is left open.
    std::size_t itemEnd(std::size_t pos) const {
        bool inBracket = false;
        for (; pos < expr_.size(); ++pos) {
            const char c = expr_[pos];
            if (c == '[')
                inBracket = true;
            else if (c == ']')
                inBracket = false;
            else if (c == ',' && !inBracket)
                return pos;
        }
        return inBracket ? std::string_view::npos : expr_.size();
    }

    std::optional<UserError> expandItem(std::string_view item) {
        if (item.empty())
            return fail("empty host name");
        std::vector<Part> parts;
        std::size_t product = 1; // names of the item so far
        std::size_t pos = 0;
        while (pos < item.size()) {
            if (item[pos] == '[') {
                const std::size_t close = item.find(']', pos);
                const std::string_view body = item.substr(pos + 1, close - pos - 1);
                if (body.find('[') != std::string_view::npos)
                    return fail("nested '['");
                // The names left, shared by this bracket's values.
                auto part = expandBracket(body, (limits_.maxNames - names_.size()) / product);
                if (!part)
                    return part.error();
                product *= part->size();
                parts.push_back(std::move(part.value()));
                pos = close + 1;
                continue;
            }
            if (item[pos] == ']')
                return fail("']' without '['");
            std::size_t end = pos;
            while (end < item.size() && item[end] != '[' && item[end] != ']') {
                if (!isHostNameChar(item[end]))
                    return fail("invalid character " + quoted(item.substr(end, 1)));
                ++end;
            }
            parts.push_back(Part{std::string(item.substr(pos, end - pos))});
            pos = end;
        }
        return appendProduct(item, parts);
    }

    // The values of a bracket, at most `room` of them.
    Expected<Part> expandBracket(std::string_view body, std::size_t room) const {
        if (body.empty())
            return fail("empty brackets '[]'");
        Part values;
        std::size_t pos = 0;
        while (true) {
            const std::size_t comma = body.find(',', pos);
            const std::string_view range =
                body.substr(pos, comma == std::string_view::npos ? body.npos : comma - pos);
            if (auto error = expandRange(range, room, values))
                return *error;
            if (comma == std::string_view::npos)
                return values;
            pos = comma + 1;
        }
    }

    std::optional<UserError> expandRange(std::string_view range, std::size_t room,
                                         Part &values) const {
        const std::size_t dash = range.find('-');
        const std::string_view loText = range.substr(0, dash);
        const std::string_view hiText =
            dash == std::string_view::npos ? loText : range.substr(dash + 1);
        const std::uint64_t limit = 999'999'999;
        const auto lo = detail::parseUnsigned(loText, limit);
        const auto hi = detail::parseUnsigned(hiText, limit);
        if (!lo || !hi || loText.size() > kMaxDigits || hiText.size() > kMaxDigits)
            return fail(quoted(range) +
                        " is not a number or range of numbers (at most 9 digits each)");
        if (*hi < *lo)
            return fail("range " + quoted(range) + " is descending");
        // Counted before the values are made: "[0-999999999]" costs nothing.
        if (*hi - *lo >= room - values.size())
            return tooManyNames();
        for (std::uint64_t value = *lo; value <= *hi; ++value)
            values.push_back(padded(value, loText.size()));
        return std::nullopt;
    }

    // Adds every name of the item (each bracket holds at most the names
    // left), after checking what the names would be.
    std::optional<UserError> appendProduct(std::string_view item, const std::vector<Part> &parts) {
        std::size_t count = 1;
        std::size_t length = 0; // of the longest name
        for (const Part &part : parts) {
            if (part.size() > (limits_.maxNames - names_.size()) / count)
                return tooManyNames();
            count *= part.size();
            std::size_t longest = 0;
            for (const std::string &value : part)
                longest = std::max(longest, value.size());
            length += longest;
        }
        if (length > limits_.maxNameLength)
            return fail("the host name " + quoted(item, 40) + " is longer than " +
                        std::to_string(limits_.maxNameLength) + " characters");
        if (length > 0 && count > (limits_.maxTotalBytes - totalBytes_) / length)
            return fail("its names together are longer than " +
                        std::to_string(limits_.maxTotalBytes) + " characters");
        totalBytes_ += count * length;
        // Odometer over the parts, the last one turning fastest.
        std::vector<std::size_t> digit(parts.size(), 0);
        for (std::size_t n = 0; n < count; ++n) {
            std::string name;
            name.reserve(length);
            for (std::size_t i = 0; i < parts.size(); ++i)
                name += parts[i][digit[i]];
            names_.push_back(std::move(name));
            for (std::size_t i = parts.size(); i-- > 0;) {
                if (++digit[i] < parts[i].size())
                    break;
                digit[i] = 0;
            }
        }
        return std::nullopt;
    }

    std::string_view expr_;
    HostlistLimits limits_;
    std::size_t most_;
    std::vector<std::string> names_;
    std::size_t totalBytes_ = 0; // upper bound of the names' characters so far
};

} // namespace

bool isValidHostName(std::string_view name) {
    if (name.empty())
        return false;
    for (char c : name) {
        if (!isHostNameChar(c))
            return false;
    }
    return true;
}

Expected<std::vector<std::string>> expandHostlist(std::string_view expr,
                                                  const HostlistLimits &limits) {
    return Expander(expr, limits).run();
}

} // namespace stepmap
