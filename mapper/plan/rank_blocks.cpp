#include "plan/rank_blocks.hpp"

#include <limits>
#include <optional>

#include "base/parse_number.hpp"
#include "base/quote.hpp"

namespace stepmap::detail {

namespace {

constexpr std::uint64_t kMaxField = std::numeric_limits<std::uint32_t>::max();

// Reads the digits at pos as a number, advancing pos past them.
std::optional<std::uint64_t> readNumber(std::string_view text, std::size_t &pos) {
    const std::size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
        ++pos;
    return parseUnsigned(text.substr(start, pos - start), kMaxField);
}

// Reads an optional "<marker>N" part with N >= minimum.
bool readPart(std::string_view text, std::size_t &pos, char marker, std::uint64_t minimum,
              std::uint32_t &field) {
    if (pos >= text.size() || text[pos] != marker)
        return true;
    ++pos;
    const auto value = readNumber(text, pos);
    if (!value || *value < minimum)
        return false;
    field = static_cast<std::uint32_t>(*value);
    return true;
}

Expected<RankBlock> parseBlock(std::string_view text) {
    RankBlock block;
    std::size_t pos = 0;
    const auto first = readNumber(text, pos);
    bool good = first.has_value();
    if (good) {
        block.first = block.last = static_cast<std::uint32_t>(*first);
        good = readPart(text, pos, '-', block.first, block.last) &&
               readPart(text, pos, '*', 1, block.perNode) &&
               readPart(text, pos, 'x', 1, block.repeat) && pos == text.size();
    }
    if (!good)
        return UserError{"block " + quoted(text) + " is not F[-L][*P][xR]"};
    return block;
}

} // namespace

std::vector<RankBlock> blocksFromNodes(const std::vector<std::uint32_t> &rankNodes) {
    // Single passes: a run of ranks on one node extends the previous pass if
    // it is the next node and has the same length.
    std::vector<RankBlock> passes;
    std::size_t i = 0;
    while (i < rankNodes.size()) {
        const std::uint32_t node = rankNodes[i];
        const std::size_t start = i;
        while (i < rankNodes.size() && rankNodes[i] == node)
            ++i;
        const auto length = static_cast<std::uint32_t>(i - start);
        if (!passes.empty() && passes.back().perNode == length && passes.back().last < node &&
            node - passes.back().last == 1) {
            passes.back().last = node;
            continue;
        }
        passes.push_back(RankBlock{node, node, length, 1});
    }

    // Identical consecutive passes become repeats.
    std::vector<RankBlock> blocks;
    for (const RankBlock &pass : passes) {
        if (!blocks.empty()) {
            RankBlock &previous = blocks.back();
            if (previous.first == pass.first && previous.last == pass.last &&
                previous.perNode == pass.perNode) {
                ++previous.repeat;
                continue;
            }
        }
        blocks.push_back(pass);
    }
    return blocks;
}

std::string formatBlocks(const std::vector<RankBlock> &blocks) {
    std::string out;
    for (const RankBlock &block : blocks) {
        if (!out.empty())
            out += ',';
        out += std::to_string(block.first);
        if (block.last != block.first) {
            out += '-';
            out += std::to_string(block.last);
        }
        if (block.perNode != 1) {
            out += '*';
            out += std::to_string(block.perNode);
        }
        if (block.repeat != 1) {
            out += 'x';
            out += std::to_string(block.repeat);
        }
    }
    return out;
}

Expected<std::vector<std::uint32_t>> nodesFromBlocks(std::string_view text, std::uint32_t nodeCount,
                                                     std::uint64_t maxRanks) {
    if (text.empty())
        return UserError{"no ranks"};
    std::vector<RankBlock> blocks;
    std::uint64_t total = 0;
    std::size_t pos = 0;
    while (true) {
        const std::size_t comma = text.find(',', pos);
        auto block = parseBlock(text.substr(
            pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
        if (!block)
            return block.error();
        if (block->last >= nodeCount)
            return UserError{"block " + quoted(formatBlocks({*block})) + " names node " +
                             std::to_string(block->last) + ", but the plan has " +
                             std::to_string(nodeCount) + " nodes"};
        // Each factor is below 2^32 and total stays <= maxRanks, so checking
        // one product at a time against the headroom cannot overflow.
        const std::uint64_t headroom = maxRanks - total;
        const std::uint64_t pass = std::uint64_t{block->last - block->first + 1} * block->perNode;
        if (pass > headroom || block->repeat > headroom / pass)
            return UserError{"more than " + std::to_string(maxRanks) + " ranks"};
        total += pass * block->repeat;
        blocks.push_back(*block);
        if (comma == std::string_view::npos)
            break;
        pos = comma + 1;
    }

    std::vector<std::uint32_t> nodes;
    nodes.reserve(total);
    for (const RankBlock &block : blocks) {
        for (std::uint32_t r = 0; r < block.repeat; ++r) {
            for (std::uint64_t node = block.first; node <= block.last; ++node)
                nodes.insert(nodes.end(), block.perNode, static_cast<std::uint32_t>(node));
        }
    }
    return nodes;
}

} // namespace stepmap::detail
