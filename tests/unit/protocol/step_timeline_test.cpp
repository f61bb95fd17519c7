// A node server's timeline (timeline/step_timeline.hpp): bounded recording,
// and its wire form decoded strictly (the hub reads it from the network).

#include "timeline/step_timeline.hpp"
#include "wire/byte_buffer.hpp"

#include <gtest/gtest.h>

using namespace stepmap::timeline;

namespace {

std::string frame(std::uint32_t count, std::uint8_t mark, std::uint64_t usec) {
    stepmap::wire::ByteWriter w;
    w.u32(count);
    w.u8(mark);
    w.u32(0);
    w.u64(usec);
    return std::string(w.bytes().begin(), w.bytes().end());
}

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
    EXPECT_TRUE(decodeEvents(frame(1, 1, 5)));
    EXPECT_FALSE(decodeEvents(frame(1, 0, 5)));                      // no such mark
    EXPECT_FALSE(decodeEvents(frame(1, kLastMark + 1, 5)));          // no such mark
    EXPECT_FALSE(decodeEvents(frame(2, 1, 5)));                      // fewer events than claimed
    EXPECT_FALSE(decodeEvents(frame(1, 1, std::uint64_t{1} << 63))); // not a time
    EXPECT_FALSE(decodeEvents(frame(1, 1, 5) + "x"));                // trailing bytes
    EXPECT_FALSE(decodeEvents(frame(Recorder::kMaxEvents + 1, 1, 5)));
    EXPECT_FALSE(decodeEvents(""));
}
