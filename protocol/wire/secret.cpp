#include "protocol/wire/secret.hpp"

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>

#include <cerrno>
#include <cstdint>
#include <stdexcept>

namespace stepmap::wire {

bool fillRandom(void *buf, std::size_t size) {
    auto *p = static_cast<std::uint8_t *>(buf);
    while (size > 0) {
        ssize_t n = getrandom(p, size, 0);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

std::string generateSecretHex() {
    std::uint8_t raw[32];
    if (!fillRandom(raw, sizeof raw))
        throw std::runtime_error("cannot read random bytes from the kernel");
    static constexpr char digits[] = "0123456789abcdef";
    std::string hex;
    for (auto b : raw) {
        hex.push_back(digits[b >> 4]);
        hex.push_back(digits[b & 15]);
    }
    return hex;
}

std::optional<std::string> decodeSecretHex(std::string_view hex) {
    if (hex.size() != 64)
        return std::nullopt;
    auto nibble = [](char c) -> int {
        if (c >= '0' && c <= '9')
            return c - '0';
        if (c >= 'a' && c <= 'f')
            return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
            return c - 'A' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < hex.size(); i += 2) {
        int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out.push_back(static_cast<char>(hi << 4 | lo));
    }
    return out;
}

std::string derivedBytes(std::string_view secret, std::string_view purpose) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (!HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()),
              reinterpret_cast<const unsigned char *>(purpose.data()), purpose.size(), out,
              &length))
        throw std::runtime_error("HMAC-SHA256 failed");
    return std::string(reinterpret_cast<const char *>(out), length);
}

std::string derivedHex(std::string_view secret, std::string_view purpose, std::size_t bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    const std::string raw = derivedBytes(secret, purpose);
    std::string hex;
    for (std::size_t i = 0; i < bytes && i < raw.size(); ++i) {
        const auto b = static_cast<unsigned char>(raw[i]);
        hex += digits[b >> 4];
        hex += digits[b & 15];
    }
    return hex;
}

} // namespace stepmap::wire
