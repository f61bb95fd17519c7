// The payload decoders (stepd_server/protocol/wire/payloads.hpp), a node
// server's timeline (timeline/step_timeline.hpp) and the step
// secret's (secret.hpp). The first byte picks the decoder, the rest is the
// payload. The decoders are strict, so a payload that decodes must be
// exactly what encode() writes for the value (for the secret: its hex
// digits, in any case).

#include "fuzz_check.hpp"
#include "timeline/step_timeline.hpp"
#include "wire/payloads.hpp"
#include "wire/secret.hpp"

#include <cctype>

using namespace stepmap;

namespace {

template <class Msg> void roundTrip(const std::optional<Msg> &msg, const std::string &payload) {
    if (msg)
        fuzz::check(wire::encode(*msg) == payload, "payload changed in decode/encode");
}

void secretRoundTrip(const std::string &hex) {
    const auto secret = wire::decodeSecretHex(hex);
    if (!secret)
        return;
    fuzz::check(secret->size() == 32, "a secret that is not 32 bytes");
    static constexpr char digits[] = "0123456789abcdef";
    for (std::size_t i = 0; i < secret->size(); ++i) {
        const auto byte = static_cast<unsigned char>((*secret)[i]);
        fuzz::check(std::tolower(static_cast<unsigned char>(hex[2 * i])) == digits[byte >> 4] &&
                        std::tolower(static_cast<unsigned char>(hex[2 * i + 1])) ==
                            digits[byte & 15],
                    "secret changed in decodeSecretHex");
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0)
        return 0;
    const std::string payload(fuzz::asText(data + 1, size - 1));
    switch (data[0] % 8) {
    case 0:
        roundTrip(wire::decodeFence(payload), payload);
        break;
    case 1:
        roundTrip(wire::decodeFenceDone(payload), payload);
        break;
    case 2:
        roundTrip(wire::decodeDmodexRequest(payload), payload);
        break;
    case 3:
        roundTrip(wire::decodeDmodexResponse(payload), payload);
        break;
    case 4:
        roundTrip(wire::decodeAbort(payload), payload);
        break;
    case 5:
        roundTrip(wire::decodeShutdown(payload), payload);
        break;
    case 6:
        if (auto events = timeline::decodeEvents(payload))
            fuzz::check(timeline::encodeEvents(*events) == payload,
                        "timeline changed in decode/encode");
        break;
    default:
        secretRoundTrip(payload);
        break;
    }
    return 0;
}
