#include "yaml/strict_yaml.hpp"

#include <exception>
#include <set>

#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap::yaml {

std::string locatedMessage(std::string_view fileName, const YAML::Mark &mark,
                           const std::string &path, const std::string &what) {
    const std::string line = mark.is_null() ? "" : ":" + std::to_string(mark.line + 1);
    return escaped(fileName, kShownPathBytes) + line + ": " + (path.empty() ? "" : path + ": ") +
           what;
}

Place Place::key(std::string_view name) const {
    return {fileName_, path_.empty() ? std::string(name) : path_ + "." + std::string(name),
            itemBudget_};
}

Place Place::item(std::size_t index) const {
    return {fileName_, path_ + "[" + std::to_string(index) + "]", itemBudget_};
}

void Place::spendItem(const YAML::Node &node) const {
    if (*itemBudget_ == 0)
        fail(node, "more list items than the file has bytes (YAML aliases repeating parts)");
    --*itemBudget_;
}

void Place::fail(const YAML::Node &node, const std::string &what) const {
    fail(node.Mark(), what);
}

void Place::fail(const YAML::Mark &mark, const std::string &what) const {
    throw LoadFailure{locatedMessage(fileName_, mark, path_, what)};
}

StrictMap::StrictMap(const YAML::Node &node, const Place &place,
                     std::initializer_list<const char *> keys)
    : node_(node), place_(place), keys_(keys.begin(), keys.end()) {
    check(UnknownKey::Named);
}

StrictMap::StrictMap(const YAML::Node &node, const Place &place, std::vector<std::string> keys,
                     UnknownKey unknown)
    : node_(node), place_(place), keys_(std::move(keys)) {
    check(unknown);
}

void StrictMap::check(UnknownKey unknown) const {
    if (!node_.IsMap())
        place_.fail(node_, "expected a map of keys");
    const std::set<std::string> known(keys_.begin(), keys_.end());
    std::set<std::string> seen;
    for (const auto &entry : node_) {
        const std::string name = entry.first.Scalar();
        if (known.count(name) == 0) {
            std::string what = "unknown key";
            if (unknown == UnknownKey::NamedWithKnownKeys) {
                what += "; known: ";
                for (std::size_t i = 0; i < keys_.size(); ++i)
                    what += (i == 0 ? "" : ", ") + keys_[i];
            }
            place_.key(name).fail(entry.first, what);
        }
        if (!seen.insert(name).second)
            place_.key(name).fail(entry.first, "repeated key");
    }
}

Field StrictMap::operator[](const char *name) const {
    auto value = find(name);
    if (!value)
        place_.fail(node_, "missing key '" + std::string(name) + "'");
    return *value;
}

std::optional<Field> StrictMap::find(const char *name) const {
    const YAML::Node value = node_[name];
    if (!value)
        return std::nullopt;
    return Field{value, place_.key(name)};
}

YAML::Mark StrictMap::keyMark(const char *name) const {
    for (const auto &entry : node_)
        if (entry.first.IsScalar() && entry.first.Scalar() == name)
            return entry.first.Mark();
    return node_.Mark();
}

std::string scalar(const Field &field) {
    if (!field.first.IsScalar())
        field.second.fail(field.first, "expected a single value");
    return field.first.Scalar();
}

void failNot(const Field &field, const std::string &text, const char *what) {
    field.second.fail(field.first, quoted(text) + " is not " + what);
}

std::uint64_t number(const Field &field, std::uint64_t limit, std::string_view fix) {
    const std::string text = scalar(field);
    const auto value = detail::parseUnsigned(text, limit);
    if (!value) {
        field.second.fail(field.first, (detail::isNumberAbove(text, limit)
                                            ? quoted(text) + " is above " + std::to_string(limit)
                                            : quoted(text) + " is not a number") +
                                           (fix.empty() ? "" : "; " + std::string(fix)));
    }
    return *value;
}

int smallNumber(const Field &field, int limit, std::string_view fix) {
    return static_cast<int>(number(field, static_cast<std::uint64_t>(limit), fix));
}

bool truth(const Field &field) {
    const std::string text = scalar(field);
    if (text != "true" && text != "false")
        failNot(field, text, "true or false");
    return text == "true";
}

UserError caughtFailure(std::string_view fileName) {
    try {
        throw;
    } catch (const LoadFailure &failure) {
        return UserError{failure.message};
    } catch (const YAML::Exception &error) {
        return UserError{locatedMessage(fileName, error.mark, "", error.msg)};
    } catch (const std::exception &error) {
        return UserError{escaped(fileName, kShownPathBytes) + ": " + error.what()};
    }
}

} // namespace stepmap::yaml
