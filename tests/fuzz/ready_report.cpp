// decodeReadyReport (protocol/ready/ready_report.hpp): what a node server
// (running as the job's user) tells the plugin (root) when it is ready. The
// first byte gives the node's local ranks: n = byte % 8 ranks 0, s, 2s, ...
// with s = 1 + byte / 8; the rest is the report. A report it accepts must
// survive encodeReadyReport and decodeReadyReport unchanged.

#include "protocol/ready/ready_report.hpp"
#include "fuzz_check.hpp"

#include <map>

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0)
        return 0;
    std::vector<std::uint32_t> localRanks;
    for (std::uint32_t i = 0; i < data[0] % 8u; ++i)
        localRanks.push_back(i * (1u + data[0] / 8u));
    const std::string_view text = fuzz::asText(data + 1, size - 1);

    const auto report = ready::decodeReadyReport(text, localRanks);
    if (!report)
        return 0;
    fuzz::check(report->size() == localRanks.size(), "not every local rank in the report");
    std::map<std::uint32_t, std::vector<std::string>> lines;
    for (const auto &[rank, env] : report.value())
        for (const auto &[key, value] : env) {
            fuzz::check(key.starts_with("PMIX_"), "a variable that is not PMIx's");
            lines[rank].push_back(key + "=" + value);
        }
    for (std::uint32_t rank : localRanks)
        lines.try_emplace(rank); // a rank without variables is still reported
    const auto again = ready::decodeReadyReport(ready::encodeReadyReport(lines), localRanks);
    fuzz::check(again.ok() && again.value() == report.value(),
                "report changed in encodeReadyReport/decodeReadyReport");
    return 0;
}
