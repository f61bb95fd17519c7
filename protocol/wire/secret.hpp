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
// Bytes of the step's own, derived from its secret (decoded, not hex) for
// one purpose: HMAC-SHA256(secret, purpose). Every node server derives the
// same bytes; anyone without the secret cannot, so what follows from them
// (the PMIx namespace's name, where pinned ports begin) cannot be guessed
// and squatted by another user ahead of the step.
std::string derivedBytes(std::string_view secret, std::string_view purpose);
// The same, as 2 * bytes hex digits (bytes <= 32).
std::string derivedHex(std::string_view secret, std::string_view purpose, std::size_t bytes);
// Fills buf with kernel randomness; false if the kernel refused.
bool fillRandom(void *buf, std::size_t size);

} // namespace stepmap::wire
