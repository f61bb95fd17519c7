#include "os/memory_binding.hpp"

#include <dirent.h>
#include <linux/mempolicy.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "hosts/node_model.hpp"

namespace stepmap {

namespace {

// "node12" -> 12; anything else (has_cpu, power, ...) -> nullopt.
std::optional<std::uint32_t> nodeNumber(const char *name) {
    if (std::strncmp(name, "node", 4) != 0 || name[4] == '\0')
        return std::nullopt;
    std::uint32_t n = 0;
    for (const char *c = name + 4; *c; ++c) {
        if (*c < '0' || *c > '9')
            return std::nullopt;
        n = n * 10 + static_cast<std::uint32_t>(*c - '0');
        if (n >= kMaxNumaNodes)
            return std::nullopt;
    }
    return n;
}

} // namespace

Expected<std::vector<std::uint32_t>> numaNodesOfCpus(const std::vector<std::uint32_t> &cpus,
                                                     const std::string &nodeDir) {
    DIR *dir = opendir(nodeDir.c_str());
    if (dir == nullptr)
        return UserError{"cannot list the NUMA nodes in " + nodeDir + ": " + std::strerror(errno)};
    std::vector<std::uint32_t> numbers;
    while (const dirent *entry = readdir(dir)) {
        if (auto n = nodeNumber(entry->d_name))
            numbers.push_back(*n);
    }
    closedir(dir);
    std::sort(numbers.begin(), numbers.end());

    std::vector<std::uint32_t> nodes;
    for (std::uint32_t n : numbers) {
        const std::string path = nodeDir + "/node" + std::to_string(n) + "/cpulist";
        std::ifstream in(path);
        std::string text;
        if (!in || !std::getline(in, text))
            return UserError{"cannot read " + path};
        if (text.empty())
            continue; // a node of memory only
        auto list = parseCpuIdList(text);
        if (!list)
            return UserError{path + ": " + list.error().message};
        const bool holds = std::any_of(cpus.begin(), cpus.end(), [&](std::uint32_t cpu) {
            return std::binary_search(list->begin(), list->end(), cpu);
        });
        if (holds)
            nodes.push_back(n);
    }
    return nodes;
}

Expected<void> bindMemoryToNodes(const std::vector<std::uint32_t> &nodes) {
    if (nodes.empty())
        return {};
    constexpr std::size_t kBits = std::numeric_limits<unsigned long>::digits;
    std::vector<unsigned long> mask(kMaxNumaNodes / kBits, 0);
    for (std::uint32_t n : nodes)
        if (n < kMaxNumaNodes)
            mask[n / kBits] |= 1UL << (n % kBits);
    // maxnode counts bits; the kernel reads maxnode - 1 of them.
    if (syscall(SYS_set_mempolicy, MPOL_BIND, mask.data(), kMaxNumaNodes + 1) != 0) {
        std::string list;
        for (std::uint32_t n : nodes)
            list += (list.empty() ? "" : ",") + std::to_string(n);
        return UserError{"cannot bind memory to NUMA node(s) " + list + ": " +
                         std::strerror(errno)};
    }
    return {};
}

} // namespace stepmap
