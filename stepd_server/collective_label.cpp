#include "collective_label.hpp"

#include "protocol/hub/job_ids.hpp"

#include <openssl/sha.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace stepmap::server {

std::string collectiveLabel(const char *what, const std::string &members, std::size_t count,
                            const char *noun) {
    if (members.size() <= 256)
        return std::string(what) + " " + members;
    unsigned char digest[SHA256_DIGEST_LENGTH];
    SHA256(reinterpret_cast<const unsigned char *>(members.data()), members.size(), digest);
    char hex[33];
    for (int i = 0; i < 16; ++i)
        std::snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    return std::string(what) + " " + std::to_string(count) + " " + noun + " #" + hex;
}

std::string nspaceText(const pmix_proc_t &proc) {
    return std::string(proc.nspace, strnlen(proc.nspace, PMIX_MAX_NSLEN));
}

std::string acrossLabel(const std::string &what, const pmix_proc_t procs[], size_t nprocs,
                        std::vector<std::pair<std::string, std::uint32_t>> &sorted) {
    for (size_t i = 0; i < nprocs; ++i)
        sorted.emplace_back(nspaceText(procs[i]),
                            procs[i].rank == PMIX_RANK_WILDCARD ? hub::kAllRanks : procs[i].rank);
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
    std::string list;
    for (const auto &[nspace, rank] : sorted)
        list +=
            nspace + ":" + (rank == hub::kAllRanks ? std::string("*") : std::to_string(rank)) + ",";
    return collectiveLabel(what.c_str(), list, sorted.size(), "processes");
}

} // namespace stepmap::server
