#include "step_timeline.hpp"

#include "wire/byte_buffer.hpp"

#include <ctime>

namespace stepmap::timeline {

std::int64_t nowUsec() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return std::int64_t{ts.tv_sec} * 1000000 + ts.tv_nsec / 1000;
}

void Recorder::record(Mark mark, std::uint32_t index, std::int64_t usec) {
    const bool fence = mark == Mark::FenceEntered || mark == Mark::FenceDone;
    if ((fence && index >= kMaxFences) || events_.size() >= kMaxEvents)
        return;
    events_.push_back({mark, index, usec});
}

std::string encodeEvents(const std::vector<Event> &events) {
    wire::ByteWriter w;
    w.u32(static_cast<std::uint32_t>(events.size()));
    for (const auto &e : events) {
        w.u8(static_cast<std::uint8_t>(e.mark));
        w.u32(e.index);
        w.u64(static_cast<std::uint64_t>(e.usec));
    }
    return std::string(w.bytes().begin(), w.bytes().end());
}

std::optional<std::vector<Event>> decodeEvents(const std::string &payload) {
    wire::ByteReader r(reinterpret_cast<const std::uint8_t *>(payload.data()), payload.size());
    auto count = r.u32();
    if (!count || *count > Recorder::kMaxEvents)
        return std::nullopt;
    std::vector<Event> events;
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto mark = r.u8();
        auto index = r.u32();
        auto usec = r.u64();
        if (!mark || !index || !usec || *mark == 0 || *mark > kLastMark ||
            *usec > (std::uint64_t{1} << 62))
            return std::nullopt;
        events.push_back({static_cast<Mark>(*mark), *index, static_cast<std::int64_t>(*usec)});
    }
    if (!r.atEnd())
        return std::nullopt;
    return events;
}

} // namespace stepmap::timeline
