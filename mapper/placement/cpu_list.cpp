#include "placement/cpu_list.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "base/id_list.hpp"
#include "base/input_limits.hpp"
#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "base/text_words.hpp"

namespace stepmap::detail {

namespace {

constexpr std::uint32_t kMaxId = 1 << 24;

void appendRange(std::vector<std::uint32_t> &pus, const HwObject &object) {
    for (std::uint32_t pu = object.firstPu; pu < object.firstPu + object.puCount; ++pu)
        pus.push_back(pu);
}

void merge(ResolvedCpus &into, const ResolvedCpus &from) {
    into.pus.insert(into.pus.end(), from.pus.begin(), from.pus.end());
    into.notHeld.insert(into.notHeld.end(), from.notHeld.begin(), from.notHeld.end());
}

void normalize(ResolvedCpus &cpus) {
    std::sort(cpus.pus.begin(), cpus.pus.end());
    cpus.pus.erase(std::unique(cpus.pus.begin(), cpus.pus.end()), cpus.pus.end());
    std::sort(cpus.notHeld.begin(), cpus.notHeld.end());
    cpus.notHeld.erase(std::unique(cpus.notHeld.begin(), cpus.notHeld.end()), cpus.notHeld.end());
}

// Whole packages: "1", "0-1", "*".
Expected<ResolvedCpus> resolvePackages(std::string_view item, const NodeModel &model,
                                       std::string_view list) {
    ResolvedCpus result;
    if (item == "*") {
        for (std::uint32_t pu = 0; pu < model.puCount(); ++pu)
            result.pus.push_back(pu);
        return result;
    }
    auto ids = expandIds(item);
    if (!ids)
        return UserError{"CPU list " + quoted(list) + ": package " + quoted(item) +
                         " is not N or N-M"};
    for (std::uint32_t package : ids.value()) {
        if (package >= model.machinePackages())
            return UserError{"CPU list " + quoted(list) + ": there is no package " +
                             std::to_string(package) + " (the node has " +
                             std::to_string(model.machinePackages()) + ")"};
        if (const auto index = model.objectFromLogical(HwLevel::Package, package))
            appendRange(result.pus, model.objects(HwLevel::Package)[*index]);
        else
            result.notHeld.push_back(package);
    }
    return result;
}

// "<package>:<cores>[:<cores>...]", cores counted inside the package.
Expected<ResolvedCpus> resolvePackageCores(std::string_view item, const NodeModel &model,
                                           std::string_view list) {
    const std::vector<std::string_view> parts = splitAt(item, ':');
    const auto package = parseUnsigned(parts[0], kMaxId);
    if (!package)
        return UserError{"CPU list " + quoted(list) + ": " + quoted(item) +
                         " is not PACKAGE:CORES (e.g. P0:1-2)"};
    if (*package >= model.machinePackages())
        return UserError{"CPU list " + quoted(list) + ": there is no package " +
                         std::to_string(*package) + " (the node has " +
                         std::to_string(model.machinePackages()) + ")"};
    const auto cores = model.packageCores(static_cast<std::uint32_t>(*package));
    ResolvedCpus result;
    for (std::size_t i = 1; i < parts.size(); ++i) {
        std::string_view spec = parts[i];
        if (!spec.empty() && (spec.front() == 'C' || spec.front() == 'c'))
            spec.remove_prefix(1);
        std::vector<std::uint32_t> relative;
        if (spec == "*") {
            for (std::uint32_t c = 0; c < cores.cores; ++c)
                relative.push_back(c);
        } else {
            auto ids = expandIds(spec);
            if (!ids)
                return UserError{"CPU list " + quoted(list) + ": cores " + quoted(parts[i]) +
                                 " of package " + std::to_string(*package) +
                                 " are not a list of N or N-M"};
            relative = std::move(ids.value());
        }
        for (std::uint32_t c : relative) {
            if (c >= cores.cores)
                return UserError{"CPU list " + quoted(list) + ": package " +
                                 std::to_string(*package) + " has no core " + std::to_string(c) +
                                 " (it has " + std::to_string(cores.cores) + ")"};
            auto one = resolveId(cores.firstCore + c, model, false);
            if (!one)
                return one.error();
            merge(result, one.value());
        }
    }
    return result;
}

} // namespace

Expected<std::vector<std::uint32_t>> expandIds(std::string_view list) {
    // Checked and counted before anything is expanded: one node has at most
    // kMaxCpusPerNode CPUs, so a longer list ("0-16777215,0-16777215,...")
    // names some twice or CPUs no node has.
    const IdListLimits limits{.maxId = kMaxId, .maxCount = kMaxCpusPerNode};
    const IdRanges parsed = parseIdRanges(list, limits);
    if (!parsed.fault)
        return expandIdRanges(parsed);
    if (parsed.fault->kind == IdListFault::Kind::TooMany)
        return UserError{"CPU list " + quoted(list) + " names more than " +
                         std::to_string(kMaxCpusPerNode) +
                         " CPUs, the most stepmap takes for a node"};
    // An id above kMaxId reads as no id at all.
    return UserError{"CPU list " + quoted(list) + ": " + quoted(parsed.fault->item) +
                     " is not N or N-M"};
}

Expected<ResolvedCpus> resolveId(std::uint32_t id, const NodeModel &model, bool hwthreads) {
    ResolvedCpus result;
    if (hwthreads) {
        if (id >= model.machinePus())
            return UserError{"there is no hwthread " + std::to_string(id) + " (the node has " +
                             std::to_string(model.machinePus()) + ")"};
        if (const auto pu = model.puFromLogical(id))
            result.pus.push_back(*pu);
        else
            result.notHeld.push_back(id);
        return result;
    }
    if (id >= model.machineCores())
        return UserError{"there is no core " + std::to_string(id) + " (the node has " +
                         std::to_string(model.machineCores()) + ")"};
    if (const auto core = model.objectFromLogical(HwLevel::Core, id))
        appendRange(result.pus, model.objects(HwLevel::Core)[*core]);
    else
        result.notHeld.push_back(id);
    return result;
}

Expected<ResolvedCpus> resolveIdList(std::string_view list, const NodeModel &model,
                                     bool hwthreads) {
    auto ids = expandIds(list);
    if (!ids)
        return ids.error();
    ResolvedCpus result;
    for (std::uint32_t id : ids.value()) {
        auto one = resolveId(id, model, hwthreads);
        if (!one)
            return UserError{"CPU list " + quoted(list) + ": " + one.error().message};
        merge(result, one.value());
    }
    normalize(result);
    return result;
}

Expected<ResolvedCpus> resolveSlotList(std::string_view list, const NodeModel &model,
                                       bool hwthreads) {
    if (list.empty())
        return UserError{"empty CPU list"};
    ResolvedCpus result;
    for (std::string_view item : splitAt(list, ';')) {
        if (item.empty())
            return UserError{"CPU list " + quoted(list) + ": empty item"};
        const bool packageLetter = item.front() == 'P' || item.front() == 'p' ||
                                   item.front() == 'S' || item.front() == 's';
        Expected<ResolvedCpus> part = ResolvedCpus{};
        if (item.find(':') != std::string_view::npos)
            part = resolvePackageCores(packageLetter ? item.substr(1) : item, model, list);
        else if (packageLetter)
            part = resolvePackages(item.substr(1), model, list);
        else
            part = resolveIdList(item, model, hwthreads);
        if (!part)
            return part.error();
        merge(result, part.value());
    }
    normalize(result);
    return result;
}

} // namespace stepmap::detail
