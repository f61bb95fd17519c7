#include "map_policy.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace stepmap {

namespace {

constexpr std::string_view kAcceptedPolicies =
    "slot, node, optionally followed by :OVERSUBSCRIBE or :NOOVERSUBSCRIBE";
constexpr std::string_view kAcceptedModifiers = "OVERSUBSCRIBE, NOOVERSUBSCRIBE";

// mpirun policies stepmap does not place yet (compared in lower case).
constexpr std::array<std::string_view, 12> kLaterPolicies = {
    "core",    "socket",   "package", "numa", "l1cache",  "l2cache",
    "l3cache", "hwthread", "board",   "seq",  "rankfile", "dist"};

// mpirun modifiers stepmap does not honour yet (compared in upper case,
// before any '=').
constexpr std::array<std::string_view, 14> kLaterModifiers = {
    "PE",       "PE-LIST", "SPAN",    "INHERIT", "NOINHERIT", "NOLOCAL",      "HWTCPUS",
    "CORECPUS", "DEVICE",  "ORDERED", "FILE",    "DISPLAY",   "DISPLAYDEVEL", "DONOTLAUNCH"};

std::string toLower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
        return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    });
    return out;
}

std::string toUpper(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
        return static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
    });
    return out;
}

template <std::size_t N>
bool contains(const std::array<std::string_view, N> &list, std::string_view word) {
    return std::find(list.begin(), list.end(), word) != list.end();
}

} // namespace

Expected<MapPolicy> parseMapBy(std::string_view value) {
    const std::string context = "--map-by '" + std::string(value) + "': ";
    if (value.empty())
        return UserError{"--map-by: empty value (accepted: " + std::string(kAcceptedPolicies) +
                         ")"};

    const std::size_t colon = value.find(':');
    const std::string policy = toLower(value.substr(0, colon));
    MapPolicy result;
    if (policy == "node") {
        result.by = MapBy::Node;
    } else if (policy == "ppr" || policy.rfind("pe-list=", 0) == 0) {
        return UserError{context + "mapping by " + std::string(value) +
                         " is not supported yet (supported: slot, node)"};
    } else if (contains(kLaterPolicies, policy)) {
        return UserError{context + "mapping by " + policy +
                         " is not supported yet (supported: slot, node)"};
    } else if (policy != "slot" && !policy.empty()) {
        return UserError{context + "unknown mapping policy '" +
                         std::string(value.substr(0, colon)) +
                         "' (accepted: " + std::string(kAcceptedPolicies) + ")"};
    }
    if (colon == std::string_view::npos)
        return result;

    std::size_t pos = colon + 1;
    while (true) {
        const std::size_t next = value.find(':', pos);
        const std::string_view modifier =
            value.substr(pos, next == std::string_view::npos ? std::string_view::npos : next - pos);
        const std::string upper = toUpper(modifier);
        bool wanted = false;
        if (upper == "OVERSUBSCRIBE")
            wanted = true;
        else if (upper == "NOOVERSUBSCRIBE")
            wanted = false;
        else if (contains(kLaterModifiers, upper.substr(0, upper.find('='))))
            return UserError{
                context + "modifier '" + std::string(modifier) +
                "' is not supported yet (supported: " + std::string(kAcceptedModifiers) + ")"};
        else
            return UserError{context + "unknown modifier '" + std::string(modifier) +
                             "' (accepted: " + std::string(kAcceptedModifiers) + ")"};
        if (result.oversubscribe && *result.oversubscribe != wanted)
            return UserError{context + "OVERSUBSCRIBE and NOOVERSUBSCRIBE contradict each other; "
                                       "give one of them"};
        result.oversubscribe = wanted;
        if (next == std::string_view::npos)
            return result;
        pos = next + 1;
    }
}

} // namespace stepmap
