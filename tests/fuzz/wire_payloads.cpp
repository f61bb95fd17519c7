// The payload decoders (stepd_server/wire/payloads.hpp). The first byte
// picks the decoder, the rest is the payload. The decoders are strict, so a
// payload that decodes must be exactly what encode() writes for the value.

#include "fuzz_check.hpp"
#include "wire/payloads.hpp"

using namespace stepmap;

namespace {

template <class Msg>
void roundTrip(const std::optional<Msg> &msg, const std::string &payload) {
    if (msg)
        fuzz::check(wire::encode(*msg) == payload, "payload changed in decode/encode");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0)
        return 0;
    const std::string payload(fuzz::asText(data + 1, size - 1));
    switch (data[0] % 6) {
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
    default:
        roundTrip(wire::decodeShutdown(payload), payload);
        break;
    }
    return 0;
}
