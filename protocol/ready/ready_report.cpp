#include "protocol/ready/ready_report.hpp"

#include <algorithm>
#include <charconv>
#include <set>

namespace stepmap::ready {

namespace {

constexpr std::size_t kMaxVariables = 64; // per rank; PMIx 4.2 sets about a dozen
constexpr std::size_t kMaxKey = 128;
constexpr std::size_t kMaxValue = 4096;
constexpr std::size_t kMaxMessage = 512;     // of an ERROR line, as shown in logs
constexpr std::size_t kPerRankBytes = 16384; // well above kMaxVariables * typical lines

// Printable ASCII as is, anything else as \xHH; at most `limit` characters.
std::string printable(std::string_view text, std::size_t limit) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : text) {
        if (out.size() >= limit) {
            out += "...";
            break;
        }
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            out += "\\x";
            out += hex[c >> 4];
            out += hex[c & 15];
        }
    }
    return out;
}

// Open MPI's settings a node server may give a rank for its --modex (the
// modex-less launch's pinned ports, asynchronous modex); nothing else
// outside PMIx's own variables.
constexpr std::string_view kModexVariables[] = {
    "OMPI_MCA_pmix_base_async_modex", "OMPI_MCA_pmix_base_collect_data",
    "OMPI_MCA_btl_tcp_port_min_v4",   "OMPI_MCA_btl_tcp_port_range_v4",
    "OMPI_MCA_btl_tcp_port_min_v6",   "OMPI_MCA_btl_tcp_port_range_v6",
    "OMPI_MCA_async_mpi_init",
};

bool validKey(std::string_view key) {
    if (std::find(std::begin(kModexVariables), std::end(kModexVariables), key) !=
        std::end(kModexVariables))
        return true;
    if (key.size() <= 5 || key.size() > kMaxKey || key.substr(0, 5) != "PMIX_")
        return false;
    return std::all_of(key.begin(), key.end(), [](char c) {
        return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

bool validValue(std::string_view value) {
    return value.size() <= kMaxValue && std::all_of(value.begin(), value.end(), [](char c) {
               return static_cast<unsigned char>(c) >= 0x20 && static_cast<unsigned char>(c) < 0x7f;
           });
}

UserError malformed(std::size_t lineNo, std::string_view line, std::string_view why) {
    return UserError{"the server's ready report is malformed at line " + std::to_string(lineNo) +
                     " ('" + printable(line, 80) + "'): " + std::string(why)};
}

} // namespace

std::string encodeReadyReport(const std::map<std::uint32_t, std::vector<std::string>> &envs) {
    std::string out = "READY\n";
    for (const auto &[rank, vars] : envs) {
        out += "RANK " + std::to_string(rank) + "\n";
        for (const auto &v : vars)
            out += "ENV " + v + "\n";
    }
    out += "END\n";
    return out;
}

Expected<ClientEnvironment> decodeRankEnvironment(std::string_view text, std::uint32_t rank) {
    const std::string header = "\nRANK " + std::to_string(rank) + "\n";
    if (text.substr(0, 6) != "READY\n")
        return UserError{"the server's ready report is malformed: no READY or END line"};
    const std::size_t at = text.find(header);
    if (at == std::string_view::npos)
        return UserError{"no PMIx environment for rank " + std::to_string(rank)};
    // Values are printable, so "\nRANK " and "\nEND\n" only begin lines.
    const std::size_t next = text.find("\nRANK ", at + 1);
    const std::size_t end = next != std::string_view::npos ? next : text.find("\nEND\n", at + 1);
    if (end == std::string_view::npos)
        return UserError{"the server's ready report is malformed: no READY or END line"};
    const std::string block = "READY" + std::string(text.substr(at, end + 1 - at)) + "END\n";
    auto envs = decodeReadyReport(block, {rank});
    if (!envs)
        return envs.error();
    return std::move(envs->begin()->second);
}

std::string encodeReadyFailure(std::string_view message) {
    std::string line(message.substr(0, 4 * kMaxMessage));
    std::replace(line.begin(), line.end(), '\n', ' ');
    return "ERROR " + line + "\n";
}

std::size_t maxReadyReportBytes(std::size_t ranks) {
    return (ranks + 1) * kPerRankBytes;
}

Expected<std::map<std::uint32_t, ClientEnvironment>>
decodeReadyReport(std::string_view text, const std::vector<std::uint32_t> &localRanks) {
    if (text.size() > maxReadyReportBytes(localRanks.size()))
        return UserError{"the server's ready report is larger than " +
                         std::to_string(maxReadyReportBytes(localRanks.size())) + " bytes"};
    if (text.substr(0, 6) == "ERROR ") {
        std::string_view message = text.substr(6);
        message = message.substr(0, message.find('\n'));
        return UserError{printable(message, kMaxMessage)};
    }
    const std::set<std::uint32_t> expected(localRanks.begin(), localRanks.end());
    std::map<std::uint32_t, ClientEnvironment> out;
    ClientEnvironment *current = nullptr;
    bool ready = false, ended = false;
    std::size_t pos = 0, lineNo = 0;
    while (pos < text.size() && !ended) {
        const std::size_t nl = text.find('\n', pos);
        if (nl == std::string_view::npos)
            return UserError{"the server's ready report ends in the middle of a line"};
        const std::string_view line = text.substr(pos, nl - pos);
        pos = nl + 1;
        ++lineNo;
        if (!ready) {
            if (line != "READY")
                return malformed(lineNo, line, "expected READY");
            ready = true;
        } else if (line == "END") {
            ended = true;
        } else if (line.substr(0, 5) == "RANK ") {
            std::uint32_t rank = 0;
            const char *first = line.data() + 5, *last = line.data() + line.size();
            auto [p, ec] = std::from_chars(first, last, rank);
            if (ec != std::errc() || p != last || first == last)
                return malformed(lineNo, line, "not a rank number");
            if (!expected.count(rank))
                return malformed(lineNo, line, "not a rank of this node");
            if (out.count(rank))
                return malformed(lineNo, line, "rank given twice");
            current = &out[rank];
        } else if (line.substr(0, 4) == "ENV ") {
            if (!current)
                return malformed(lineNo, line, "a variable before any rank");
            const std::string_view kv = line.substr(4);
            const std::size_t eq = kv.find('=');
            if (eq == std::string_view::npos || !validKey(kv.substr(0, eq)))
                return malformed(lineNo, line,
                                 "not a PMIX_* variable nor an Open MPI modex setting");
            if (!validValue(kv.substr(eq + 1)))
                return malformed(lineNo, line, "value too long or not printable");
            if (current->size() >= kMaxVariables)
                return malformed(lineNo, line, "too many variables for one rank");
            current->emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
        } else {
            return malformed(lineNo, line, "unknown line");
        }
    }
    if (!ended)
        return UserError{"the server's ready report has no END (the server exited before it was "
                         "ready; see the node's log)"};
    if (pos != text.size())
        return UserError{"the server's ready report has data after END"};
    for (std::uint32_t rank : expected)
        if (!out.count(rank))
            return UserError{"the server's ready report lacks rank " + std::to_string(rank)};
    return out;
}

} // namespace stepmap::ready
