#pragma once

// Job-wide names of ranks and node servers. The step whose hub serves the
// job (the first stepmap step of the job on its srun's host) is step index
// 0; every step spawned from it or from its children gets the next index
// (1 to kMaxSpawned), every other srun of the job on that host that finds
// the job's hub takes one of its own (kFirstAttached to kLastStep), and
// their servers join the job's hub as guests. A rank or a node of
// step s is known there as s << 24 | its index in the step, so that the
// hub's names, barriers and direct modex cover every step of the tree with
// the same 32-bit fields. A spawned step holds fewer than 2^24 ranks.

#include "protocol/wire/secret.hpp"

#include <cstdint>
#include <string>

namespace stepmap::hub {

constexpr unsigned kStepShift = 24;
constexpr std::uint32_t kLocalMask = (1u << kStepShift) - 1;
constexpr std::uint32_t kMaxSpawned = 127;    // spawned steps of one job
constexpr std::uint32_t kFirstAttached = 128; // other sruns of the job
constexpr std::uint32_t kLastStep = 255;
constexpr std::uint32_t kAllRanks = 0xFFFFFFFFu; // PMIX_RANK_WILDCARD on the wire

constexpr std::uint32_t jobWide(std::uint32_t step, std::uint32_t local) {
    return step << kStepShift | local;
}
constexpr std::uint32_t stepOf(std::uint32_t id) {
    return id >> kStepShift;
}
constexpr std::uint32_t localOf(std::uint32_t id) {
    return id & kLocalMask;
}

// The key a guest step's servers join the job's hub with, derived from the
// hub's secret: a spawned step learns its own key, not the secret, so its
// servers cannot speak for the first step's nodes or another step's.
inline std::string guestKeyPurpose(std::uint32_t step) {
    return "stepmap guest step " + std::to_string(step);
}
inline std::string guestKey(std::string_view jobSecret, std::uint32_t step) {
    return wire::derivedBytes(jobSecret, guestKeyPurpose(step));
}
inline std::string guestKeyHex(std::string_view jobSecret, std::uint32_t step) {
    return wire::derivedHex(jobSecret, guestKeyPurpose(step), 32);
}

} // namespace stepmap::hub
