#include "request/map_policy.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/id_list.hpp"
#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "base/text_words.hpp"

namespace stepmap {

namespace {

constexpr std::string_view kAcceptedPolicies =
    "slot, node, seq, rankfile, hwthread, core, l1cache, l2cache, l3cache, numa, package, "
    "ppr:N:OBJECT, pe-list=LIST, device=CLASS, each optionally followed by :MODIFIERS";
constexpr std::string_view kAcceptedModifiers =
    "OVERSUBSCRIBE, NOOVERSUBSCRIBE, SPAN, PE=n, HWTCPUS, CORECPUS, ORDERED, DISPLAY, FILE=path, "
    "NDEV=n, SHARED, INTERLEAVE[=level]";
constexpr std::string_view kPprObjects =
    "node, hwthread, core, l1cache, l2cache, l3cache, numa, package, device=CLASS";

// PRRTE modifiers stepmap refuses, with the reason.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kRefusedModifiers = {{
    {"INHERIT", "it applies to jobs spawned by a running job, which srun does not start"},
    {"NOINHERIT", "it applies to jobs spawned by a running job, which srun does not start"},
    {"NOLOCAL", "under Slurm every allocated node is a compute node; use --host '!^NODE' to "
                "leave one out"},
    {"DISPLAYDEVEL", "use DISPLAY (the job map as mpirun prints it)"},
    {"DISPLAYALLOC", "use DISPLAY (the job map as mpirun prints it)"},
    {"DONOTLAUNCH", "srun always launches; print the map with DISPLAY"},
}};

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

// An object level word of --map-by / ppr (lower case), or nothing.
std::optional<MapBy> objectWord(std::string_view lower) {
    if (lower == "hwthread")
        return MapBy::Hwthread;
    if (lower == "core")
        return MapBy::Core;
    if (lower == "l1cache")
        return MapBy::L1Cache;
    if (lower == "l2cache")
        return MapBy::L2Cache;
    if (lower == "l3cache")
        return MapBy::L3Cache;
    if (lower == "numa")
        return MapBy::Numa;
    if (lower == "package" || lower == "socket")
        return MapBy::Package;
    return std::nullopt;
}

// Checks a pe-list: N or N-M items separated by commas, ids up to 2^24 (how
// many it names is counted where it is placed).
bool validPeList(std::string_view list) {
    const IdListLimits limits{.maxId = 1u << 24, .maxCount = SIZE_MAX};
    return !parseIdRanges(list, limits).fault;
}

// The value after '=' of a modifier, if any.
std::optional<std::string_view> valueOf(std::string_view modifier) {
    const std::size_t eq = modifier.find('=');
    if (eq == std::string_view::npos)
        return std::nullopt;
    return modifier.substr(eq + 1);
}

// Modifiers that switch something on.
constexpr std::array<std::pair<std::string_view, bool MapPolicy::*>, 4> kSwitches = {{
    {"SPAN", &MapPolicy::span},
    {"ORDERED", &MapPolicy::ordered},
    {"DISPLAY", &MapPolicy::display},
    {"SHARED", &MapPolicy::shared},
}};

// Pairs of modifiers that set one field true or false.
struct OppositeModifiers {
    std::string_view on;
    std::string_view off;
    std::optional<bool> MapPolicy::*field;
};
constexpr std::array<OppositeModifiers, 2> kOpposites = {{
    {"OVERSUBSCRIBE", "NOOVERSUBSCRIBE", &MapPolicy::oversubscribe},
    {"HWTCPUS", "CORECPUS", &MapPolicy::hwtcpus},
}};

// One modifier as written, its name in upper case and its value after '='.
struct Modifier {
    std::string_view text;
    std::string upper;
    std::optional<std::string_view> value;
    const std::string &context; // "--map-by 'x': "

    std::string named() const { return context + "modifier " + quoted(text); }
};

// PE=n and NDEV=n: CPUs or devices per process, at most a node's CPUs.
std::optional<UserError> setPerProcess(const Modifier &m, std::optional<int> &field) {
    const auto number = m.value ? detail::parseCount(*m.value, kMaxCpusPerNode) : std::nullopt;
    if (m.value && !number && detail::isNumberAbove(*m.value, kMaxCpusPerNode))
        return UserError{m.named() + ": " + m.upper + " is above " +
                         std::to_string(kMaxCpusPerNode) +
                         ", the most CPUs stepmap takes for a node"};
    if (!number)
        return UserError{m.named() + " needs " + m.upper + "=n with n a positive number"};
    field = *number;
    return std::nullopt;
}

std::optional<UserError> setInterleave(const Modifier &m, MapPolicy &policy) {
    const std::string level = m.value ? toLower(*m.value) : "package";
    if (level != "package" && level != "numa" && level != "l3cache" && level != "l2cache" &&
        level != "l1cache")
        return UserError{m.context + "INTERLEAVE level " + quoted(m.value.value_or("")) +
                         " is not one of package, numa, l3cache, l2cache, l1cache"};
    policy.interleave = level;
    return std::nullopt;
}

// A modifier that takes no value: a switch or one of a pair. Nothing when
// `m` is neither.
std::optional<std::optional<UserError>> setFlag(const Modifier &m, MapPolicy &policy) {
    const auto noValue = [&]() -> std::optional<UserError> {
        return UserError{m.named() + " takes no value (write " + m.upper + ")"};
    };
    for (const auto &[name, field] : kSwitches) {
        if (m.upper != name)
            continue;
        if (m.value)
            return noValue();
        policy.*field = true;
        return std::optional<UserError>{};
    }
    for (const OppositeModifiers &pair : kOpposites) {
        if (m.upper != pair.on && m.upper != pair.off)
            continue;
        if (m.value)
            return noValue();
        const bool wanted = m.upper == pair.on;
        std::optional<bool> &field = policy.*pair.field;
        if (field && *field != wanted)
            return UserError{m.context + std::string(pair.on) + " and " + std::string(pair.off) +
                             " contradict each other; give one of them"};
        field = wanted;
        return std::optional<UserError>{};
    }
    return std::nullopt;
}

std::optional<UserError> applyModifier(std::string_view text, MapPolicy &policy,
                                       const std::string &context) {
    const Modifier m{text, toUpper(text.substr(0, text.find('='))), valueOf(text), context};
    if (auto flag = setFlag(m, policy))
        return *flag;
    if (m.upper == "PE")
        return setPerProcess(m, policy.pe);
    if (m.upper == "NDEV")
        return setPerProcess(m, policy.ndev);
    if (m.upper == "FILE") {
        if (!m.value || m.value->empty())
            return UserError{m.named() + " needs FILE=path"};
        policy.file = std::string(*m.value);
        return std::nullopt;
    }
    if (m.upper == "INTERLEAVE")
        return setInterleave(m, policy);
    for (const auto &[name, reason] : kRefusedModifiers) {
        if (m.upper == name)
            return UserError{m.named() + " is not supported by stepmap: " + std::string(reason)};
    }
    return UserError{context + "unknown modifier " + quoted(text) +
                     " (accepted: " + std::string(kAcceptedModifiers) + ")"};
}

// The device-only modifiers need --map-by device= (or ppr:N:device=).
std::optional<UserError> checkDeviceModifiers(const MapPolicy &policy, const std::string &context) {
    const bool byDevice = policy.by == MapBy::Device ||
                          (policy.by == MapBy::Ppr && policy.pprObject == MapBy::Device);
    if (byDevice)
        return std::nullopt;
    const char *name = policy.ndev ? "NDEV" : policy.shared ? "SHARED" : nullptr;
    if (!policy.interleave.empty())
        name = "INTERLEAVE";
    if (name == nullptr)
        return std::nullopt;
    return UserError{context + std::string(name) +
                     " describes how devices are handed out, so it needs --map-by "
                     "device=CLASS (e.g. device=gpu)"};
}

// "ppr:N:OBJECT" split at ':' (parts[0] is "ppr").
std::optional<UserError> parsePpr(const std::vector<std::string_view> &parts,
                                  const std::string &context, MapPolicy &result) {
    if (parts.size() < 3)
        return UserError{context +
                         "ppr needs a pattern ppr:N:OBJECT, e.g. ppr:2:package "
                         "(objects: " +
                         std::string(kPprObjects) + ")"};
    const auto count = detail::parseCount(parts[1], kMaxRanks);
    if (!count && detail::isNumberAbove(parts[1], kMaxRanks))
        return UserError{context + "the ppr count " + quoted(parts[1]) + " is above " +
                         std::to_string(kMaxRanks) + ", the most processes stepmap places"};
    if (!count)
        return UserError{context + "the ppr count " + quoted(parts[1]) +
                         " is not a positive number (write ppr:N:OBJECT, e.g. "
                         "ppr:2:package)"};
    const std::string object = toLower(parts[2]);
    result.by = MapBy::Ppr;
    result.pprCount = *count;
    result.pprText = std::string(parts[1]) + ":" + std::string(parts[2]);
    if (object == "node") {
        result.pprObject = MapBy::Node;
    } else if (object.rfind("device=", 0) == 0 && object.size() > 7) {
        result.pprObject = MapBy::Device;
        result.device = std::string(parts[2].substr(7));
    } else if (const auto level = objectWord(object)) {
        result.pprObject = *level;
    } else {
        return UserError{context + "unknown ppr object " + quoted(parts[2]) +
                         " (accepted: " + std::string(kPprObjects) + ")"};
    }
    return std::nullopt;
}

} // namespace

std::string_view mapByWord(MapBy by) {
    switch (by) {
    case MapBy::Slot:
    case MapBy::Default:
        return "BYSLOT";
    case MapBy::Node:
        return "BYNODE";
    case MapBy::Hwthread:
        return "BYHWTHREAD";
    case MapBy::Core:
        return "BYCORE";
    case MapBy::L1Cache:
        return "BYL1CACHE";
    case MapBy::L2Cache:
        return "BYL2CACHE";
    case MapBy::L3Cache:
        return "BYL3CACHE";
    case MapBy::Numa:
        return "BYNUMA";
    case MapBy::Package:
        return "BYPACKAGE";
    case MapBy::Ppr:
        return "PPR";
    case MapBy::PeList:
        return "PE-LIST";
    case MapBy::Seq:
        return "SEQUENTIAL";
    case MapBy::Rankfile:
        return "BYUSER";
    case MapBy::Device:
        return "BYDEVICE";
    }
    return "UNKNOWN";
}

Expected<MapPolicy> parseMapBy(std::string_view value) {
    const std::string context = "--map-by " + quoted(value) + ": ";
    if (value.empty())
        return UserError{"--map-by: empty value (accepted: " + std::string(kAcceptedPolicies) +
                         ")"};

    std::vector<std::string_view> parts = detail::splitAt(value, ':');
    MapPolicy result;
    std::size_t firstModifier = 1;
    const std::string_view word = parts[0];
    const std::string lower = toLower(word);
    if (lower == "ppr") {
        if (auto error = parsePpr(parts, context, result))
            return *error;
        firstModifier = 3;
    } else if (lower.rfind("pe-list=", 0) == 0) {
        const std::string_view list = word.substr(8);
        if (!validPeList(list))
            return UserError{context + "pe-list " + quoted(list) +
                             " is not a list of CPU ids and ranges (e.g. pe-list=0-3,6)"};
        result.by = MapBy::PeList;
        result.peList = std::string(list);
    } else if (lower.rfind("device=", 0) == 0) {
        if (word.size() == 7)
            return UserError{context + "device= needs a device class or name (e.g. "
                                       "device=gpu)"};
        result.by = MapBy::Device;
        result.device = std::string(word.substr(7));
    } else if (lower == "slot") {
        result.by = MapBy::Slot;
    } else if (lower == "node") {
        result.by = MapBy::Node;
    } else if (lower == "seq") {
        result.by = MapBy::Seq;
    } else if (lower == "rankfile") {
        result.by = MapBy::Rankfile;
    } else if (const auto level = objectWord(lower)) {
        result.by = *level;
    } else if (lower == "board" || lower == "dist") {
        return UserError{context + "mapping by " + lower +
                         " is not supported: PRRTE (Open MPI 5) dropped it; use package, numa "
                         "or device=CLASS"};
    } else if (!lower.empty()) {
        return UserError{context + "unknown mapping policy " + quoted(word) +
                         " (accepted: " + std::string(kAcceptedPolicies) + ")"};
    }
    for (std::size_t i = firstModifier; i < parts.size(); ++i) {
        if (auto error = applyModifier(parts[i], result, context))
            return *error;
    }
    if (result.by == MapBy::Hwthread)
        result.hwtcpus = result.hwtcpus.value_or(true);
    if (auto error = checkDeviceModifiers(result, context))
        return *error;
    return result;
}

std::string_view rankByWord(RankBy by) {
    switch (by) {
    case RankBy::Slot:
        return "SLOT";
    case RankBy::Node:
        return "NODE";
    case RankBy::Fill:
        return "FILL";
    case RankBy::Span:
        return "SPAN";
    }
    return "UNKNOWN";
}

Expected<RankBy> parseRankBy(std::string_view value) {
    const std::string lower = toLower(value);
    if (lower == "slot")
        return RankBy::Slot;
    if (lower == "node")
        return RankBy::Node;
    if (lower == "fill")
        return RankBy::Fill;
    if (lower == "span")
        return RankBy::Span;
    if (objectWord(lower) || lower == "object")
        return UserError{"--rank-by " + quoted(value) +
                         ": ranking by an object level is not supported: Open MPI 5 (PRRTE) "
                         "ranks by slot, node, fill or span. To number the processes object "
                         "by object, map by that object and rank by fill (e.g. --map-by " +
                         lower + " --rank-by fill)"};
    return UserError{"--rank-by " + quoted(value) +
                     ": unknown ranking policy (accepted: slot, node, fill, span)"};
}

std::string_view bindToWord(BindTo to) {
    switch (to) {
    case BindTo::Default:
    case BindTo::None:
        return "NONE";
    case BindTo::Package:
        return "PACKAGE";
    case BindTo::Numa:
        return "NUMA";
    case BindTo::L3Cache:
        return "L3CACHE";
    case BindTo::L2Cache:
        return "L2CACHE";
    case BindTo::L1Cache:
        return "L1CACHE";
    case BindTo::Core:
        return "CORE";
    case BindTo::Hwthread:
        return "HWTHREAD";
    }
    return "UNKNOWN";
}

Expected<BindPolicy> parseBindTo(std::string_view value) {
    const std::string context = "--bind-to " + quoted(value) + ": ";
    constexpr std::string_view kAccepted =
        "none, hwthread, core, l1cache, l2cache, l3cache, numa, package, optionally followed by "
        ":if-supported, :overload-allowed, :no-overload, :report, :limit=n";
    if (value.empty())
        return UserError{"--bind-to: empty value (accepted: " + std::string(kAccepted) + ")"};
    const std::vector<std::string_view> parts = detail::splitAt(value, ':');
    BindPolicy result;
    const std::string word = toLower(parts[0]);
    if (word == "none")
        result.to = BindTo::None;
    else if (word == "hwthread")
        result.to = BindTo::Hwthread;
    else if (word == "core")
        result.to = BindTo::Core;
    else if (word == "l1cache")
        result.to = BindTo::L1Cache;
    else if (word == "l2cache")
        result.to = BindTo::L2Cache;
    else if (word == "l3cache")
        result.to = BindTo::L3Cache;
    else if (word == "numa")
        result.to = BindTo::Numa;
    else if (word == "package" || word == "socket")
        result.to = BindTo::Package;
    else if (!word.empty())
        return UserError{context + "unknown binding policy " + quoted(parts[0]) +
                         " (accepted: " + std::string(kAccepted) + ")"};
    for (std::size_t i = 1; i < parts.size(); ++i) {
        const std::string qualifier = toLower(parts[i]);
        if (qualifier == "if-supported") {
            result.ifSupported = true;
        } else if (qualifier == "overload-allowed" || qualifier == "no-overload") {
            const bool wanted = qualifier == "overload-allowed";
            if (result.overload && *result.overload != wanted)
                return UserError{context + "overload-allowed and no-overload contradict each "
                                           "other; give one of them"};
            result.overload = wanted;
        } else if (qualifier == "report") {
            result.report = true;
        } else if (qualifier.rfind("limit=", 0) == 0) {
            const auto limit = detail::parsePositiveInt(std::string_view(qualifier).substr(6));
            if (!limit || *limit > 65535)
                return UserError{context + quoted(parts[i]) +
                                 " needs limit=n with n from 1 to 65535"};
            result.limit = *limit;
        } else {
            return UserError{context + "unknown qualifier " + quoted(parts[i]) +
                             " (accepted: if-supported, overload-allowed, no-overload, report, "
                             "limit=n)"};
        }
    }
    return result;
}

} // namespace stepmap
