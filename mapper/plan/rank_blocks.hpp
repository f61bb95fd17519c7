#pragma once

// Internal to the mapper: the node of each rank, written as blocks in the
// manner of flux-core's taskmap. A block {first, last, perNode, repeat}
// stands for `repeat` times: nodes first..last, `perNode` consecutive ranks
// on each. Text form: "F[-L][*P][xR]", blocks joined by ','.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"

namespace stepmap::detail {

struct RankBlock {
    std::uint32_t first = 0;
    std::uint32_t last = 0;
    std::uint32_t perNode = 1;
    std::uint32_t repeat = 1;

    bool operator==(const RankBlock &) const = default;
};

// Greedy, linear: runs of one node, then runs over consecutive nodes with
// equal counts, then repeats of equal blocks.
std::vector<RankBlock> blocksFromNodes(const std::vector<std::uint32_t> &rankNodes);

std::string formatBlocks(const std::vector<RankBlock> &blocks);

// Parses and expands, refusing node indices >= nodeCount and more than
// maxRanks ranks before allocating them. The error says what is wrong.
Expected<std::vector<std::uint32_t>> nodesFromBlocks(std::string_view text, std::uint32_t nodeCount,
                                                     std::uint64_t maxRanks);

} // namespace stepmap::detail
