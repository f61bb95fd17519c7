#pragma once

// The plan as a picture (stepmap-plan --output svg): one box per node with
// its packages, NUMA domains, cores and PUs from the node's model, and under
// each row of cores the ranks bound there, one bar per rank across the PUs
// it is bound to, coloured by application context. Ranks that share PUs
// stack in lanes. Unbound ranks are dashed chips under their node; ranks on
// a node running more ranks than slots are hatched and the node says so.
// A legend explains the colours and marks.

#include <cstdint>
#include <string>

#include "hosts/allocation.hpp"
#include "plan/launch_plan.hpp"

namespace stepmap {

// Bounds on what is drawn, so that a plan of a million ranks gives a
// picture of a few megabytes at most; what is left out is counted in the
// picture ("... and 9984 more nodes").
struct PlanSvgOptions {
    std::string title;                   // shown after "stepmap launch plan", e.g. "job 1234"
    std::uint32_t maxNodes = 16;         // the first nodes of the plan drawn
    std::uint32_t maxPusPerNode = 1024;  // larger models: hardware not drawn, ranks as chips
    std::uint32_t maxLanes = 8;          // lanes of ranks under one row of cores
    std::uint32_t maxChipsPerNode = 128; // unbound ranks (or ranks of an undrawn node) drawn
};

// The SVG document (UTF-8, one element per line). Each node's model is
// found by name in `allocation` (as formatJobMap does); a node without one
// shows its ranks as chips. Every name and title is escaped (svg::xmlText).
// Structure, for tools and tests:
//   <g class="node" data-node="NAME"> per drawn node, in plan order;
//   <g class="rank appA[ unbound][ oversubscribed]" data-rank="R"> per bar
//   or chip: a bound rank has one bar per run of consecutive PUs in a row,
//   filled with svg::appColour(A); an unbound one a dashed chip filled with
//   svg::appTint(A); a rank on an oversubscribed node carries a hatched
//   <rect class="hatch">.
// Deterministic, no I/O; O(nodes + ranks) plus what is drawn.
std::string formatPlanSvg(const LaunchPlan &plan, const Allocation &allocation,
                          const PlanSvgOptions &options = {});

} // namespace stepmap
