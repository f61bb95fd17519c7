// parseMapBy, parseRankBy and parseBindTo (mapper/map_policy.hpp): srun
// --map-by, --rank-by, --bind-to. The input is tried as each of the three.

#include "request/map_policy.hpp"
#include "fuzz_check.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view text = fuzz::asText(data, size);

    if (const auto map = parseMapBy(text)) {
        fuzz::check(!mapByWord(map->by).empty(), "a policy without a word");
        fuzz::check(map->by != MapBy::Ppr || map->pprCount > 0, "ppr with a count below 1");
        fuzz::check(!map->pe || *map->pe > 0, "PE= below 1");
        fuzz::check(!map->ndev || *map->ndev > 0, "NDEV= below 1");
    } else {
        fuzz::check(map.error().message.starts_with("--map-by"), "error not naming --map-by");
    }

    if (const auto rank = parseRankBy(text))
        fuzz::check(!rankByWord(rank.value()).empty(), "a ranking without a word");
    else
        fuzz::check(rank.error().message.starts_with("--rank-by"), "error not naming --rank-by");

    if (const auto bind = parseBindTo(text))
        fuzz::check(!bind->limit || (*bind->limit >= 1 && *bind->limit <= 65535),
                    "limit= out of range");
    else
        fuzz::check(bind.error().message.starts_with("--bind-to"), "error not naming --bind-to");
    return 0;
}
