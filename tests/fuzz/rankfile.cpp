// parseRankfile (mapper/rankfile.hpp): --map-by rankfile:FILE=. Entries
// must come out in ascending rank order, each rank once.

#include "request/rankfile.hpp"
#include "fuzz_check.hpp"
#include "plan/launch_plan.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto file = parseRankfile(fuzz::asText(data, size), "fuzz_rf");
    if (!file) {
        fuzz::check(file.error().message.starts_with("rankfile fuzz_rf"),
                    "rankfile error without the file name");
        return 0;
    }
    fuzz::check(!file->entries.empty(), "a rankfile without ranks");
    for (std::size_t i = 0; i < file->entries.size(); ++i) {
        const RankfileEntry &e = file->entries[i];
        fuzz::check(e.rank < static_cast<std::uint32_t>(kMaxRanks), "rank above kMaxRanks");
        fuzz::check(i == 0 || file->entries[i - 1].rank < e.rank, "ranks not ascending");
        fuzz::check(!e.host.empty(), "a rank without a host");
    }
    return 0;
}
