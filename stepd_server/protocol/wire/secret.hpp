#pragma once

// The per-step secret that authenticates messages between stepmap processes.

#include <optional>
#include <string>
#include <string_view>

namespace stepmap::wire {

// 32 random bytes from the kernel, as 64 hex digits.
std::string generateSecretHex();
// Decodes 64 hex digits; nullopt for anything else.
std::optional<std::string> decodeSecretHex(std::string_view hex);
// Fills buf with kernel randomness; false if the kernel refused.
bool fillRandom(void *buf, std::size_t size);

} // namespace stepmap::wire
