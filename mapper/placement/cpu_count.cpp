#include "placement/cpu_count.hpp"

namespace stepmap::detail {

std::uint32_t countCpus(const NodeModel &model, const PuBits &bits, std::uint32_t first,
                        std::uint32_t count, bool hwthreads, std::uint32_t stopAt) {
    std::uint32_t n = 0;
    std::uint32_t pu = bits.next(first);
    if (hwthreads) {
        while (pu != kNoBit && pu < first + count && n < stopAt) {
            ++n;
            pu = bits.next(pu + 1);
        }
        return n;
    }
    const auto &cores = model.objects(HwLevel::Core);
    while (pu != kNoBit && pu < first + count && n < stopAt) {
        const HwObject &core = cores[model.objectOf(HwLevel::Core, pu)];
        if (core.firstPu >= first && core.firstPu + core.puCount <= first + count &&
            bits.allInRange(core.firstPu, core.puCount))
            ++n;
        pu = bits.next(core.firstPu + core.puCount);
    }
    return n;
}

std::optional<std::pair<std::uint32_t, std::uint32_t>>
firstCpuInside(const NodeModel &model, const PuBits &bits, std::uint32_t first, std::uint32_t count,
               bool hwthreads) {
    std::uint32_t pu = bits.next(first);
    while (pu != kNoBit && pu < first + count) {
        if (hwthreads)
            return std::pair{pu, 1u};
        const HwObject &core = model.objects(HwLevel::Core)[model.objectOf(HwLevel::Core, pu)];
        if (core.firstPu >= first && core.firstPu + core.puCount <= first + count &&
            bits.allInRange(core.firstPu, core.puCount))
            return std::pair{core.firstPu, core.puCount};
        pu = bits.next(core.firstPu + core.puCount);
    }
    return std::nullopt;
}

} // namespace stepmap::detail
