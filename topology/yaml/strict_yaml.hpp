#pragma once

// Strict reading of a small YAML file through yaml-cpp, shared by the
// interconnect profile (profile/profile_yaml_load.cpp) and the site policy
// file (site/site_file.cpp): every key known and given at most
// once, each value checked on its own, every error located as
// "FILE:LINE: KEY.PATH: what is wrong".
//
// Inside a reader a bad value throws LoadFailure with the finished message;
// the reader's entry point runs inside loadStrictly, which turns it and
// yaml-cpp's own exceptions into a UserError, so none leaves that API.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/expected.hpp"

namespace stepmap::yaml {

// A finished error message, thrown by Place::fail.
struct LoadFailure {
    std::string message;
};

// "FILE:LINE: PATH: what" (no ":LINE" for a null mark, no "PATH: " for an
// empty path); the file name escaped.
std::string locatedMessage(std::string_view fileName, const YAML::Mark &mark,
                           const std::string &path, const std::string &what);

// Where values come from: the file name and the path of keys to the value.
class Place {
public:
    // `itemBudget`: list items left to read. A file of N bytes holds fewer
    // than N items unless YAML aliases repeat parts of it, which could make
    // a small file cost minutes; past the budget the file is refused.
    Place(std::string_view fileName, std::string path, std::size_t *itemBudget)
        : fileName_(fileName), path_(std::move(path)), itemBudget_(itemBudget) {}

    Place key(std::string_view name) const;
    Place item(std::size_t index) const;

    void spendItem(const YAML::Node &node) const;

    [[noreturn]] void fail(const YAML::Node &node, const std::string &what) const;
    [[noreturn]] void fail(const YAML::Mark &mark, const std::string &what) const;

private:
    std::string_view fileName_;
    std::string path_;
    std::size_t *itemBudget_;
};

// A value and where it is.
using Field = std::pair<YAML::Node, Place>;

// How an unknown key is refused: "unknown key", or that and the keys known
// at its level ("unknown key; known: a, b, c").
enum class UnknownKey { Named, NamedWithKnownKeys };

// A YAML map whose keys must all be known and appear at most once.
class StrictMap {
public:
    StrictMap(const YAML::Node &node, const Place &place, std::initializer_list<const char *> keys);
    StrictMap(const YAML::Node &node, const Place &place, std::vector<std::string> keys,
              UnknownKey unknown);

    // The value of a key that must be there.
    Field operator[](const char *name) const;
    // The value of a key that may be left out.
    std::optional<Field> find(const char *name) const;
    // Where the key itself is (a value left empty has no place of its own).
    YAML::Mark keyMark(const char *name) const;

private:
    void check(UnknownKey unknown) const;

    YAML::Node node_;
    Place place_;
    std::vector<std::string> keys_;
};

// The text of a scalar; else "expected a single value".
std::string scalar(const Field &field);

// Fails at `field` with "'text' is not <what>".
[[noreturn]] void failNot(const Field &field, const std::string &text, const char *what);

// A scalar accepted by `check`, else "'value' is not <what>".
template <class Check> std::string checked(const Field &field, Check check, const char *what) {
    std::string text = scalar(field);
    if (!check(text))
        failNot(field, text, what);
    return text;
}

// A decimal number up to `limit`, else "'value' is above LIMIT" or
// "'value' is not a number", followed by "; <fix>" when `fix` is given.
std::uint64_t number(const Field &field, std::uint64_t limit, std::string_view fix = {});
int smallNumber(const Field &field, int limit, std::string_view fix = {});

// A number, or the word `absent` for "not known / not there".
template <class T>
std::optional<T> numberOr(const Field &field, std::uint64_t limit, const char *absent) {
    if (field.first.IsScalar() && field.first.Scalar() == absent)
        return std::nullopt;
    return static_cast<T>(number(field, limit));
}

// `true` or `false` only: YAML 1.1's yes/no/on/off are refused.
bool truth(const Field &field);

// Each item of a list read by `read`, else "expected a list".
template <class Item, class Read> std::vector<Item> sequence(const Field &field, Read read) {
    if (!field.first.IsSequence())
        field.second.fail(field.first, "expected a list");
    std::vector<Item> items;
    for (std::size_t i = 0; i < field.first.size(); ++i) {
        field.second.spendItem(field.first[i]);
        items.push_back(read(Field{field.first[i], field.second.item(i)}));
    }
    return items;
}

// The message of an exception a reader let through: a LoadFailure's own, a
// yaml-cpp syntax error located in `fileName`, anything else after the
// file's name. Call only inside a catch block.
UserError caughtFailure(std::string_view fileName);

// read(), or the error it threw as a UserError.
template <class Read>
auto loadStrictly(std::string_view fileName, Read read) -> Expected<decltype(read())> {
    try {
        return read();
    } catch (...) {
        return caughtFailure(fileName);
    }
}

} // namespace stepmap::yaml
