// The payload decoders (protocol/wire/payloads.hpp, name_payloads.hpp), a node
// server's timeline (timeline/step_timeline.hpp, and srun's critical path
// from it, which must stay bounded) and exchange counters
// (timeline/exchange_counters.hpp) and the step
// secret's (secret.hpp). The first byte picks the decoder, the rest is the
// payload. The decoders are strict, so a payload that decodes must be
// exactly what encode() writes for the value (for the secret: its hex
// digits, in any case).

#include "fuzz_check.hpp"
#include "protocol/timeline/critical_path.hpp"
#include "protocol/timeline/exchange_counters.hpp"
#include "protocol/timeline/step_timeline.hpp"
#include "protocol/wire/name_payloads.hpp"
#include "protocol/wire/payloads.hpp"
#include "protocol/wire/profile_payloads.hpp"
#include "protocol/wire/secret.hpp"

#include <cctype>
#include <iterator>

using namespace stepmap;

namespace {

template <class Msg> void roundTrip(const std::optional<Msg> &msg, const std::string &payload) {
    if (msg)
        fuzz::check(wire::encode(*msg) == payload, "payload changed in decode/encode");
}

// The fence tree's records: the first byte is the count claimed.
void recordsRoundTrip(const std::string &payload) {
    if (payload.empty())
        return;
    const auto records = wire::decodeRecords(payload.substr(1), std::uint8_t(payload[0]), 1u << 20);
    if (!records)
        return;
    std::string again;
    for (const auto &r : *records)
        wire::appendRecord(again, r);
    fuzz::check(again == payload.substr(1), "records changed in decode/encode");
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

// One check per decoder; the first byte of the input picks one.
using Check = void (*)(const std::string &);
const Check kChecks[] = {
    [](const std::string &p) { roundTrip(wire::decodeFence(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeFenceDone(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeDmodexRequest(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeDmodexResponse(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeAbort(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeShutdown(p), p); },
    secretRoundTrip,
    [](const std::string &p) {
        if (!p.empty()) // empty is the star's welcome, written as fan-out 0
            roundTrip(wire::decodeWelcome(p), p);
    },
    [](const std::string &p) { roundTrip(wire::decodeTreeListen(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeTreeParent(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeTreeUp(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeTreeDown(p), p); },
    recordsRoundTrip,
    [](const std::string &p) {
        const auto events = timeline::decodeEvents(p);
        if (!events)
            return;
        fuzz::check(timeline::encodeEvents(*events) == p, "timeline changed in decode/encode");
        // srun -v describes what a node sent at exit: its work and its
        // lines are bounded by what a Recorder keeps, whatever was sent.
        const auto lines = timeline::describeCriticalPath({}, {{0, *events}}, {"n1"}, 1);
        fuzz::check(lines.size() <= 8 + timeline::Recorder::kMaxFences,
                    "critical path longer than the fences a node server records");
    },
    [](const std::string &p) {
        if (auto counters = timeline::decodeCounters(p))
            fuzz::check(timeline::encodeCounters(*counters) == p,
                        "exchange counters changed in decode/encode");
    },
    [](const std::string &p) { roundTrip(wire::decodeProfileState(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeProfileVerdict(p, 1u << 20), p); },
    [](const std::string &p) { roundTrip(wire::decodeTreeRelay(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeNameRequest(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeNameReply(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeNotice(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeFenceProbe(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeRelay(p), p); },
    [](const std::string &p) { roundTrip(wire::decodeJoinedBelow(p), p); },
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size == 0)
        return 0;
    const std::string payload(fuzz::asText(data + 1, size - 1));
    kChecks[data[0] % std::size(kChecks)](payload);
    return 0;
}
