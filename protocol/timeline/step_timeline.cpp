#include "protocol/timeline/step_timeline.hpp"

#include "protocol/wire/byte_buffer.hpp"

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

Expected<std::vector<Event>> decodeEvents(const std::string &payload) {
    auto refused = [](const std::string &why) { return UserError{"malformed timeline: " + why}; };
    wire::ByteReader r(reinterpret_cast<const std::uint8_t *>(payload.data()), payload.size());
    auto count = r.u32();
    if (!count)
        return refused("no event count");
    if (*count > Recorder::kMaxEvents)
        return refused(std::to_string(*count) + " events (at most " +
                       std::to_string(Recorder::kMaxEvents) + ")");
    std::vector<Event> events;
    events.reserve(*count);
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto mark = r.u8();
        auto index = r.u32();
        auto usec = r.u64();
        const std::string which = "event " + std::to_string(i);
        if (!mark || !index || !usec)
            return refused(which + " is cut short");
        if (*mark == 0 || *mark > kLastMark)
            return refused(which + " has unknown mark " + std::to_string(*mark));
        const auto m = static_cast<Mark>(*mark);
        const bool fence = m == Mark::FenceEntered || m == Mark::FenceDone;
        // A Recorder drops fences from kMaxFences on, and numbers nothing
        // else: any other index is not a node server's.
        if (fence && *index >= Recorder::kMaxFences)
            return refused(which + " has fence index " + std::to_string(*index) + " (at most " +
                           std::to_string(Recorder::kMaxFences - 1) + ")");
        if (!fence && *index != 0)
            return refused(which + " has index " + std::to_string(*index) +
                           " on a mark without one");
        if (*usec > (std::uint64_t{1} << 62))
            return refused(which + " has no plausible time");
        events.push_back({m, *index, static_cast<std::int64_t>(*usec)});
    }
    if (!r.atEnd())
        return refused("bytes after the last event");
    return events;
}

} // namespace stepmap::timeline
