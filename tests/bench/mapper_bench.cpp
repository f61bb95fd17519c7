// How long planning takes and how much memory it needs, at two sizes to show
// the cost is linear: 1,024 and 16,384 nodes of 64 cores (65,536 and
// 1,048,576 ranks), every node sharing one node model.
//   map-by core, bind-to core   (a binding per rank)
//   map-by node                 (default binding: numa, np > 2)
// Counters: ranks, plan_bytes_per_rank (the LaunchPlan kept), and
// peak_bytes_per_rank (the most heap planJob held at once, plan included),
// measured by counting this program's allocations.
//
// Built, not run as a test: ./build/tests/bench/mapper_bench

#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>

#include "hosts/allocation.hpp"
#include "hosts/node_model.hpp"
#include "planner/planner.hpp"
#include "request/map_policy.hpp"

namespace {

std::atomic<std::size_t> gLive{0};
std::atomic<std::size_t> gPeak{0};

void noteAllocation(std::size_t bytes) {
    const std::size_t live = gLive.fetch_add(bytes) + bytes;
    std::size_t peak = gPeak.load();
    while (live > peak && !gPeak.compare_exchange_weak(peak, live)) {
    }
}

} // namespace

// Every allocation carries its size in a header so the count can drop it.
void *operator new(std::size_t bytes) {
    auto *block = static_cast<std::size_t *>(std::malloc(bytes + sizeof(std::max_align_t)));
    if (block == nullptr)
        throw std::bad_alloc();
    *block = bytes;
    noteAllocation(bytes);
    return reinterpret_cast<char *>(block) + sizeof(std::max_align_t);
}

// The matching operator new took the block from malloc; GCC cannot see that
// through the replacement and warns.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void *pointer) noexcept {
    if (pointer == nullptr)
        return;
    auto *block =
        reinterpret_cast<std::size_t *>(static_cast<char *>(pointer) - sizeof(std::max_align_t));
    gLive.fetch_sub(*block);
    std::free(block);
}
#pragma GCC diagnostic pop

void operator delete(void *pointer, std::size_t) noexcept {
    operator delete(pointer);
}

namespace {

using namespace stepmap;

constexpr int kCores = 64;

Allocation nodes(int count) {
    auto model = buildSlurmNodeModel(SlurmNodeShape{2, kCores / 2, 1, 2}, {});
    Allocation allocation;
    allocation.nodes.reserve(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i)
        allocation.nodes.push_back(AllocatedNode{"n" + std::to_string(i), kCores, model.value()});
    return allocation;
}

void run(benchmark::State &state, const char *mapBy, const char *bindTo) {
    const int count = static_cast<int>(state.range(0));
    const Allocation allocation = nodes(count);
    PlanRequest request;
    request.np = count * kCores;
    request.map = parseMapBy(mapBy).value();
    if (bindTo != nullptr)
        request.bind = parseBindTo(bindTo).value();
    std::size_t planBytes = 0;
    std::size_t peakBytes = 0;
    for (auto _ : state) {
        const std::size_t before = gLive.load();
        gPeak.store(before);
        auto result = planJob(allocation, request);
        if (!result) {
            state.SkipWithError(result.error().message.c_str());
            return;
        }
        planBytes = gLive.load() - before;
        peakBytes = gPeak.load() - before;
        benchmark::DoNotOptimize(result->plan.ranks.data());
    }
    const auto ranks = static_cast<double>(count) * kCores;
    state.counters["ranks"] = ranks;
    state.counters["plan_bytes_per_rank"] = static_cast<double>(planBytes) / ranks;
    state.counters["peak_bytes_per_rank"] = static_cast<double>(peakBytes) / ranks;
    state.counters["ranks_per_second"] =
        benchmark::Counter(ranks, benchmark::Counter::kIsIterationInvariantRate);
}

void mapByCoreBindCore(benchmark::State &state) {
    run(state, "core", "core");
}

void mapByNode(benchmark::State &state) {
    run(state, "node", nullptr);
}

BENCHMARK(mapByCoreBindCore)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);
BENCHMARK(mapByNode)->Arg(1024)->Arg(16384)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
