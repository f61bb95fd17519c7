#pragma once

// ParaStation's process pinning (seed 004, "Process pinning"): each process
// and its children are bound to CPU-slots of their node, PSI_TPP slots per
// process. A node's CPU-slots are the CPUs the job holds there, in slot
// order: physical cores first (the first hardware thread of every core in
// core order, then every core's second, ...; "ParaStation MPI will only count
// physical CPUs, even if Hyperthreading is enabled"), or the order a user's
// __PSI_CPUMAP gives where the site allows it. The node's k-th process (its
// local rank) takes slots k*TPP .. k*TPP+TPP-1, counted modulo the slots, so
// an overbooked node's slots hold k or k+1 processes each.

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "hosts/node_model.hpp"
#include "plan/launch_plan.hpp"

namespace stepmap::detail {

// The model's held PUs (local indices) in the default slot order. O(PUs).
std::vector<std::uint32_t> coresFirstSlots(const NodeModel &model);

// __PSI_CPUMAP's CPUs (OS indices) as the model's local PUs, in the map's
// order. A CPU the job does not hold on `node` is an error naming it, the
// node and the CPUs held there. O(PUs + map).
Expected<std::vector<std::uint32_t>> mappedSlots(const NodeModel &model,
                                                 const std::vector<std::uint32_t> &cpuMap,
                                                 std::string_view node);

struct SlotPinning {
    int threadsPerProcess = 1;
    std::vector<std::uint32_t> cpuMap; // __PSI_CPUMAP; empty: cores first
    bool overbook = false;             // slots may hold more than one process
};

// Binds the ranks of every plan node whose model is known
// (models[node], nullptr: left unbound) to their CPU-slots. With a
// __PSI_CPUMAP, a node whose processes need more slots than the map lists
// is an error unless overbooking. O(ranks + distinct slot sets x TPP).
Expected<LaunchPlan> pinToCpuSlots(LaunchPlan plan, const std::vector<const NodeModel *> &models,
                                   const SlotPinning &pinning);

} // namespace stepmap::detail
