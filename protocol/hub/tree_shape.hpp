#pragma once

// The shape of the fence tree over a step's node servers: a complete k-ary
// tree in node-index order (node 0 is the root, node i's parent is
// (i - 1) / k), so that every server and the hub derive it alone from the
// node count and the fan-out, and a fence takes 2 * depth() rounds.

#include <cstdint>
#include <vector>

namespace stepmap::hub {

class TreeShape {
public:
    // fanOut >= 1, nodeCount >= 1.
    TreeShape(std::uint32_t nodeCount, std::uint32_t fanOut);

    std::uint32_t nodeCount() const { return nodeCount_; }
    std::uint32_t fanOut() const { return fanOut_; }
    bool isRoot(std::uint32_t node) const { return node == 0; }
    // node > 0.
    std::uint32_t parentOf(std::uint32_t node) const { return (node - 1) / fanOut_; }
    // Ascending; empty for a leaf.
    std::vector<std::uint32_t> childrenOf(std::uint32_t node) const;
    // Nodes in node's subtree, node included. O(depth).
    std::uint32_t subtreeSize(std::uint32_t node) const;
    // Edges from the root to the deepest node.
    std::uint32_t depth() const;
    // Whether node is top or below it.
    bool inSubtree(std::uint32_t top, std::uint32_t node) const;
    // The child of top whose subtree holds node (node below top).
    std::uint32_t childToward(std::uint32_t top, std::uint32_t node) const;
    // Whether node's server joins srun through its tree parent's relay
    // (hub/hub_relay.hpp): every node below the root's children, so that
    // srun takes the root and its fan-out children only.
    bool joinsThroughParent(std::uint32_t node) const {
        return node > fanOut_ && node < nodeCount_;
    }

private:
    std::uint32_t nodeCount_;
    std::uint32_t fanOut_;
};

} // namespace stepmap::hub
