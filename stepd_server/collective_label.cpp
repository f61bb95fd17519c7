#include "collective_label.hpp"

#include <openssl/sha.h>

#include <cstdio>

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

} // namespace stepmap::server
