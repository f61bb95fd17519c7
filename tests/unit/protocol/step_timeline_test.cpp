// A node server's timeline (timeline/step_timeline.hpp): bounded recording,
// and its wire form decoded strictly (the hub reads it from the network).

#include "protocol/timeline/step_timeline.hpp"
#include "protocol/wire/byte_buffer.hpp"

#include <gtest/gtest.h>

using namespace stepmap::timeline;

namespace {

std::string frame(std::uint32_t count, std::uint8_t mark, std::uint64_t usec,
                  std::uint32_t index = 0) {
    stepmap::wire::ByteWriter w;
    w.u32(count);
    w.u8(mark);
    w.u32(index);
    w.u64(usec);
    return std::string(w.bytes().begin(), w.bytes().end());
}

constexpr auto kEntered = static_cast<std::uint8_t>(Mark::FenceEntered);
constexpr auto kDone = static_cast<std::uint8_t>(Mark::FenceDone);

} // namespace

TEST(StepTimeline, EventsSurviveTheWire) {
    Recorder r;
    r.record(Mark::Launched, 0, 1700000000000000);
    r.record(Mark::FenceEntered, 3, 1700000000000100);
    r.record(Mark::Leaving, 0, 1700000000000200);
    auto decoded = decodeEvents(encodeEvents(r.events()));
    ASSERT_TRUE(decoded);
    EXPECT_EQ(*decoded, r.events());
}

TEST(StepTimeline, RecordingNowUsesTheWallClock) {
    Recorder r;
    const auto before = nowUsec();
    r.record(Mark::Running);
    ASSERT_EQ(r.events().size(), 1u);
    EXPECT_GE(r.events()[0].usec, before);
    EXPECT_LE(r.events()[0].usec, nowUsec());
}

TEST(StepTimeline, AServerThatFencesOftenStillRecordsItsLeaving) {
    // Every mark a server makes once, its fences, then Leaving last: srun's
    // teardown line needs it however many fences the job made.
    Recorder r;
    for (auto m :
         {Mark::Launched, Mark::Running, Mark::TopologyLoaded, Mark::PmixRegistered, Mark::Ready,
          Mark::TasksForked, Mark::TasksReleased, Mark::Joined, Mark::ProfileAgreed})
        r.record(m, 0, 1);
    for (std::uint32_t k = 0; k < 100; ++k) {
        r.record(Mark::FenceEntered, k, 2);
        r.record(Mark::FenceDone, k, 3);
    }
    r.record(Mark::Leaving, 0, 4);
    EXPECT_EQ(r.events().back().mark, Mark::Leaving);
}

TEST(StepTimeline, AJobThatFencesOftenKeepsOnlyItsFirstFences) {
    Recorder r;
    for (std::uint32_t k = 0; k < 1000; ++k) {
        r.record(Mark::FenceEntered, k, k);
        r.record(Mark::FenceDone, k, k);
    }
    r.record(Mark::Leaving, 0, 5000);
    EXPECT_EQ(r.events().size(), 2 * Recorder::kMaxFences + 1);
    EXPECT_EQ(r.events().back().mark, Mark::Leaving);
    for (int i = 0; i < 1000; ++i)
        r.record(Mark::Joined, 0, i);
    EXPECT_EQ(r.events().size(), Recorder::kMaxEvents);
    EXPECT_TRUE(decodeEvents(encodeEvents(r.events())));
}

TEST(StepTimeline, HostileFramesAreRefused) {
    struct Case {
        std::string payload;
        std::string error; // empty: decodes
    };
    const std::uint32_t lastFence = Recorder::kMaxFences - 1;
    const Case cases[] = {
        {frame(1, 1, 5), ""},
        {frame(1, kEntered, 5, lastFence), ""},
        {frame(1, kDone, 5, lastFence), ""},
        {frame(1, 0, 5), "malformed timeline: event 0 has unknown mark 0"},
        {frame(1, kLastMark + 1, 5),
         "malformed timeline: event 0 has unknown mark " + std::to_string(kLastMark + 1)},
        {frame(2, 1, 5), "malformed timeline: event 1 is cut short"},
        {frame(1, 1, std::uint64_t{1} << 63), "malformed timeline: event 0 has no plausible time"},
        {frame(1, 1, 5) + "x", "malformed timeline: bytes after the last event"},
        {frame(Recorder::kMaxEvents + 1, 1, 5),
         "malformed timeline: " + std::to_string(Recorder::kMaxEvents + 1) + " events (at most " +
             std::to_string(Recorder::kMaxEvents) + ")"},
        {"", "malformed timeline: no event count"},
        // srun's critical path loops over the fences up to the largest index:
        // a peer's index is bounded by what a Recorder keeps.
        {frame(1, kDone, 5, Recorder::kMaxFences),
         "malformed timeline: event 0 has fence index 16 (at most 15)"},
        {frame(1, kEntered, 5, Recorder::kMaxFences),
         "malformed timeline: event 0 has fence index 16 (at most 15)"},
        {frame(1, kDone, 5, 0xfffffffe),
         "malformed timeline: event 0 has fence index 4294967294 (at most 15)"},
        {frame(1, kDone, 5, 0xffffffff),
         "malformed timeline: event 0 has fence index 4294967295 (at most 15)"},
        // Only fences are numbered.
        {frame(1, static_cast<std::uint8_t>(Mark::Leaving), 5, 1),
         "malformed timeline: event 0 has index 1 on a mark without one"},
    };
    for (const auto &c : cases) {
        SCOPED_TRACE(c.error.empty() ? "valid" : c.error);
        const auto decoded = decodeEvents(c.payload);
        if (c.error.empty()) {
            ASSERT_TRUE(decoded) << decoded.error().message;
            EXPECT_EQ(encodeEvents(*decoded), c.payload);
        } else {
            ASSERT_FALSE(decoded);
            EXPECT_EQ(decoded.error().message, c.error);
        }
    }
}
