#include "request/parastation_request.hpp"
#include "base/text_words.hpp"

#include <array>
#include <utility>

#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap {

namespace {

using detail::trimmed;
using detail::words;

constexpr std::string_view kAcceptedSorts =
    "accepted, in any case: PROC, LOAD, LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE";

constexpr std::array<std::pair<std::string_view, NodesSort>, 8> kSortNames = {{
    {"PROC", NodesSort::Proc},
    {"LOAD", NodesSort::Load1},
    {"LOAD_1", NodesSort::Load1},
    {"LOAD1", NodesSort::Load1}, // as process_placement(7) spells it once
    {"LOAD_5", NodesSort::Load5},
    {"LOAD_15", NodesSort::Load15},
    {"PROC+LOAD", NodesSort::ProcLoad},
    {"NONE", NodesSort::None},
}};

std::string toUpper(std::string_view text) {
    std::string out(text);
    for (char &c : out) {
        if (c >= 'a' && c <= 'z')
            c = static_cast<char>(c - 'a' + 'A');
    }
    return out;
}

// The most node indices PSI_NODES may name (a range expands to this many).
constexpr std::uint64_t kMaxNodeIndices = 1u << 20;

Expected<int> threadCount(std::string_view value, std::string_view source,
                          std::string_view example) {
    const auto count = detail::parseCount(value, kMaxThreadsPerProcess);
    if (count)
        return *count;
    if (detail::isNumberAbove(value, kMaxThreadsPerProcess))
        return UserError{std::string(source) + " " + quoted(value) + ": at most " +
                         std::to_string(kMaxThreadsPerProcess) + " hardware threads per process"};
    return UserError{std::string(source) + " " + quoted(value) +
                     ": expected a positive number of hardware threads per process, e.g. " +
                     std::string(example)};
}

} // namespace

std::string NodePool::describe() const {
    switch (kind) {
    case Kind::Nodes:
        return "PSI_NODES";
    case Kind::Hosts:
        return "PSI_HOSTS";
    case Kind::Hostfile:
        return "PSI_HOSTFILE " + escaped(fileName, kShownPathBytes);
    }
    return "PSI_HOSTS";
}

bool needsNodeFigures(const std::optional<NodesSort> &sort) {
    return sort && *sort != NodesSort::None;
}

Expected<NodesSort> parseNodesSort(std::string_view value, std::string_view source) {
    const std::string upper = toUpper(value);
    for (const auto &[name, sort] : kSortNames) {
        if (upper == name)
            return sort;
    }
    return UserError{std::string(source) + " " + quoted(value) + ": unknown sort criterion (" +
                     std::string(kAcceptedSorts) + ")"};
}

std::string_view nodesSortName(NodesSort sort) {
    switch (sort) {
    case NodesSort::Proc:
        return "PROC";
    case NodesSort::Load1:
        return "LOAD_1";
    case NodesSort::Load5:
        return "LOAD_5";
    case NodesSort::Load15:
        return "LOAD_15";
    case NodesSort::ProcLoad:
        return "PROC+LOAD";
    case NodesSort::None:
        return "NONE";
    }
    return "NONE";
}

Expected<int> parseThreadsPerProcess(std::string_view value, std::string_view source) {
    return threadCount(value, source, std::string(source) + "=2");
}

Expected<int> parseOmpNumThreads(std::string_view value) {
    const std::size_t comma = value.find(',');
    const std::string_view first = value.substr(0, comma);
    auto count = threadCount(first, "OMP_NUM_THREADS", "OMP_NUM_THREADS=4 (or set PSI_TPP)");
    if (!count && comma != std::string_view::npos)
        return UserError{"OMP_NUM_THREADS " + quoted(value) + ": its first level " + quoted(first) +
                         " is not a positive number of threads (set PSI_TPP or --tpp to give "
                         "the threads per process directly)"};
    return count;
}

Expected<NodePool> parsePsiNodes(std::string_view value) {
    const std::string context = "PSI_NODES " + quoted(value) + ": ";
    const std::string expected = " (expected node indices and ranges, e.g. \"0,1,3,17-20\")";
    NodePool pool;
    pool.kind = NodePool::Kind::Nodes;
    if (trimmed(value).empty())
        return UserError{context + "no node indices" + expected};
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = value.find(',', pos);
        const std::string_view item = trimmed(value.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        if (item.empty())
            return UserError{context + "empty item" + expected};
        const std::size_t dash = item.find('-');
        const std::string_view firstText = trimmed(item.substr(0, dash));
        const std::string_view lastText =
            dash == std::string_view::npos ? firstText : trimmed(item.substr(dash + 1));
        const auto first = detail::parseUnsigned(firstText, kMaxNodeIndices);
        const auto last = detail::parseUnsigned(lastText, kMaxNodeIndices);
        if ((!first && detail::isNumberAbove(firstText, kMaxNodeIndices)) ||
            (!last && detail::isNumberAbove(lastText, kMaxNodeIndices)))
            return UserError{context + quoted(item) + ": node indices go up to " +
                             std::to_string(kMaxNodeIndices)};
        if (!first || !last)
            return UserError{context + quoted(item) + " is not a node index or range" + expected};
        if (*last < *first)
            return UserError{context + "range " + quoted(item) +
                             " ends before it starts (write it as " + std::to_string(*last) + "-" +
                             std::to_string(*first) + ")"};
        if (pool.indices.size() + (*last - *first + 1) > kMaxNodeIndices)
            return UserError{context + "names more than " + std::to_string(kMaxNodeIndices) +
                             " nodes"};
        for (std::uint64_t index = *first; index <= *last; ++index)
            pool.indices.push_back(static_cast<std::uint32_t>(index));
        if (comma == std::string_view::npos)
            return pool;
        pos = comma + 1;
    }
}

Expected<std::vector<std::uint32_t>> parsePsiCpuMap(std::string_view value) {
    const std::string context = "__PSI_CPUMAP " + quoted(value) + ": ";
    const std::string expected =
        " (expected the CPUs of CPU-slots 0, 1, ... as numbers and ranges, e.g. \"0,2,1,3\" or "
        "\"0-3\")";
    if (trimmed(value).empty())
        return UserError{context + "no CPUs" + expected};
    std::vector<std::uint32_t> cpus;
    std::vector<bool> seen;
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = value.find(',', pos);
        const std::string_view item = trimmed(value.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        if (item.empty())
            return UserError{context + "empty item" + expected};
        const std::size_t dash = item.find('-');
        const std::string_view firstText = trimmed(item.substr(0, dash));
        const std::string_view lastText =
            dash == std::string_view::npos ? firstText : trimmed(item.substr(dash + 1));
        const auto first = detail::parseUnsigned(firstText, kMaxCpuId);
        const auto last = detail::parseUnsigned(lastText, kMaxCpuId);
        if ((!first && detail::isNumberAbove(firstText, kMaxCpuId)) ||
            (!last && detail::isNumberAbove(lastText, kMaxCpuId)))
            return UserError{context + quoted(item) + ": CPU indices go up to " +
                             std::to_string(kMaxCpuId)};
        if (!first || !last)
            return UserError{context + quoted(item) + " is not a CPU index or range" + expected};
        if (*last < *first)
            return UserError{context + "range " + quoted(item) +
                             " ends before it starts (write it as " + std::to_string(*last) + "-" +
                             std::to_string(*first) + ")"};
        for (std::uint64_t cpu = *first; cpu <= *last; ++cpu) {
            if (seen.size() <= cpu)
                seen.resize(cpu + 1, false);
            if (seen[cpu])
                return UserError{context + "CPU " + std::to_string(cpu) +
                                 " is listed twice: each CPU-slot needs a CPU of its own"};
            seen[cpu] = true;
            cpus.push_back(static_cast<std::uint32_t>(cpu));
        }
        if (comma == std::string_view::npos)
            return cpus;
        pos = comma + 1;
    }
}

Expected<NodePool> parsePsiHosts(std::string_view value) {
    NodePool pool;
    pool.kind = NodePool::Kind::Hosts;
    for (std::string_view word : words(value))
        pool.names.emplace_back(word);
    if (pool.names.empty())
        return UserError{"PSI_HOSTS " + quoted(value) +
                         ": no host names (expected names separated by blanks, e.g. \"n1 n2\")"};
    return pool;
}

Expected<NodePool> parsePsiHostfile(std::string_view text, std::string_view fileName) {
    const std::string context = "PSI_HOSTFILE " + escaped(fileName, kShownPathBytes);
    NodePool pool;
    pool.kind = NodePool::Kind::Hostfile;
    pool.fileName = std::string(fileName);
    std::size_t pos = 0;
    for (std::size_t line = 1; pos <= text.size(); ++line) {
        const std::size_t newline = text.find('\n', pos);
        const std::string_view content = trimmed(text.substr(
            pos, newline == std::string_view::npos ? std::string_view::npos : newline - pos));
        if (!content.empty() && content.front() != '#') {
            const auto names = words(content);
            if (names.size() != 1)
                return UserError{context + ", line " + std::to_string(line) + ": " +
                                 quoted(content) +
                                 " names more than one host (write one host name per line; "
                                 "list a node k times to run k processes there)"};
            pool.names.emplace_back(names.front());
        }
        if (newline == std::string_view::npos)
            break;
        pos = newline + 1;
    }
    if (pool.names.empty())
        return UserError{context + ": no host names (expected one host name per line)"};
    return pool;
}

} // namespace stepmap
