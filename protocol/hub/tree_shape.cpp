#include "protocol/hub/tree_shape.hpp"

#include <algorithm>

namespace stepmap::hub {

TreeShape::TreeShape(std::uint32_t nodeCount, std::uint32_t fanOut)
    : nodeCount_(std::max(nodeCount, 1u)), fanOut_(std::max(fanOut, 1u)) {}

std::vector<std::uint32_t> TreeShape::childrenOf(std::uint32_t node) const {
    std::vector<std::uint32_t> out;
    const std::uint64_t first = std::uint64_t{node} * fanOut_ + 1;
    for (std::uint64_t c = first; c < first + fanOut_ && c < nodeCount_; ++c)
        out.push_back(static_cast<std::uint32_t>(c));
    return out;
}

std::uint32_t TreeShape::subtreeSize(std::uint32_t node) const {
    // The subtree's nodes on each level form one run [lo, hi].
    std::uint64_t lo = node, hi = node, size = 0;
    while (lo < nodeCount_) {
        size += std::min<std::uint64_t>(hi, nodeCount_ - 1) - lo + 1;
        lo = lo * fanOut_ + 1;
        hi = hi * fanOut_ + fanOut_;
    }
    return static_cast<std::uint32_t>(size);
}

std::uint32_t TreeShape::depth() const {
    std::uint32_t d = 0;
    for (std::uint32_t n = nodeCount_ - 1; n > 0; n = parentOf(n))
        ++d;
    return d;
}

bool TreeShape::inSubtree(std::uint32_t top, std::uint32_t node) const {
    if (node >= nodeCount_)
        return false;
    while (node > top)
        node = parentOf(node);
    return node == top;
}

std::uint32_t TreeShape::childToward(std::uint32_t top, std::uint32_t node) const {
    while (node > top && parentOf(node) != top)
        node = parentOf(node);
    return node;
}

} // namespace stepmap::hub
