#include "hostlist.hpp"

#include <cstdint>
#include <optional>

#include "parse_number.hpp"
#include "quote.hpp"

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
    explicit Expander(std::string_view expr) : expr_(expr) {}

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
        return UserError{"invalid hostlist '" + std::string(expr_) + "': " + std::string(reason)};
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
        std::size_t pos = 0;
        while (pos < item.size()) {
            if (item[pos] == '[') {
                const std::size_t close = item.find(']', pos);
                const std::string_view body = item.substr(pos + 1, close - pos - 1);
                if (body.find('[') != std::string_view::npos)
                    return fail("nested '['");
                auto part = expandBracket(body);
                if (!part)
                    return part.error();
                parts.push_back(std::move(part.value()));
                pos = close + 1;
                continue;
            }
            if (item[pos] == ']')
                return fail("']' without '['");
            std::size_t end = pos;
            while (end < item.size() && item[end] != '[' && item[end] != ']') {
                if (!isHostNameChar(item[end]))
                    return fail("invalid character '" + std::string(1, item[end]) + "'");
                ++end;
            }
            parts.push_back(Part{std::string(item.substr(pos, end - pos))});
            pos = end;
        }
        return appendProduct(parts);
    }

    Expected<Part> expandBracket(std::string_view body) const {
        if (body.empty())
            return fail("empty brackets '[]'");
        Part values;
        std::size_t pos = 0;
        while (true) {
            const std::size_t comma = body.find(',', pos);
            const std::string_view range =
                body.substr(pos, comma == std::string_view::npos ? body.npos : comma - pos);
            if (auto error = expandRange(range, values))
                return *error;
            if (values.size() > kMaxHostlistNames)
                return fail("it expands to more than " + std::to_string(kMaxHostlistNames) +
                            " names");
            if (comma == std::string_view::npos)
                return values;
            pos = comma + 1;
        }
    }

    std::optional<UserError> expandRange(std::string_view range, Part &values) const {
        const std::size_t dash = range.find('-');
        const std::string_view loText = range.substr(0, dash);
        const std::string_view hiText =
            dash == std::string_view::npos ? loText : range.substr(dash + 1);
        const std::uint64_t limit = 999'999'999;
        const auto lo = detail::parseUnsigned(loText, limit);
        const auto hi = detail::parseUnsigned(hiText, limit);
        if (!lo || !hi || loText.size() > kMaxDigits || hiText.size() > kMaxDigits)
            return fail(detail::quoted(range) +
                        " is not a number or range of numbers (at most 9 digits each)");
        if (*hi < *lo)
            return fail("range '" + std::string(range) + "' is descending");
        if (*hi - *lo >= kMaxHostlistNames)
            return fail("it expands to more than " + std::to_string(kMaxHostlistNames) + " names");
        for (std::uint64_t value = *lo; value <= *hi; ++value)
            values.push_back(padded(value, loText.size()));
        return std::nullopt;
    }

    std::optional<UserError> appendProduct(const std::vector<Part> &parts) {
        std::size_t count = 1;
        for (const Part &part : parts) {
            count *= part.size();
            if (count + names_.size() > kMaxHostlistNames)
                return fail("it expands to more than " + std::to_string(kMaxHostlistNames) +
                            " names");
        }
        // Odometer over the parts, the last one turning fastest.
        std::vector<std::size_t> digit(parts.size(), 0);
        for (std::size_t n = 0; n < count; ++n) {
            std::string name;
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
    std::vector<std::string> names_;
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

Expected<std::vector<std::string>> expandHostlist(std::string_view expr) {
    return Expander(expr).run();
}

} // namespace stepmap
