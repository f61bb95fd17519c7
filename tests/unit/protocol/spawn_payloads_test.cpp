// The job-wide payloads decode only as encode() writes them.

#include "protocol/wire/spawn_payloads.hpp"

#include <gtest/gtest.h>

using namespace stepmap::wire;

TEST(SpawnPayloads, EachRoundTrips) {
    SpawnRequestMsg spawn{
        7,
        3,
        "ns",
        {{"./a", {"./a", "x"}, {"A=1"}, "/w", 4, {{"host", "n1"}}}, {"./b", {}, {}, "", 1, {}}},
        {{"map-by", "node"}}};
    auto s = decodeSpawnRequest(encode(spawn));
    ASSERT_TRUE(s);
    EXPECT_EQ(encode(*s), encode(spawn));
    SpawnReplyMsg reply{7, true, "child", 2, "plan", ""};
    ASSERT_TRUE(decodeSpawnReply(encode(reply)));
    EXPECT_EQ(decodeSpawnReply(encode(reply))->index, 2u);
    GuestStepMsg guest{"child", "1.2", "plan", true};
    ASSERT_TRUE(decodeGuestStep(encode(guest)));
    EXPECT_TRUE(decodeGuestStep(encode(guest))->started);
    JobBarrierMsg barrier{"connect a:*,b:0,", {{"a", 0xFFFFFFFFu}, {"b", 0}}, true, "data"};
    auto b = decodeJobBarrier(encode(barrier));
    ASSERT_TRUE(b);
    EXPECT_EQ(b->procs, barrier.procs);
    EXPECT_FALSE(b->assignContextId);
    barrier.assignContextId = true;
    EXPECT_TRUE(decodeJobBarrier(encode(barrier))->assignContextId);
    JobBarrierDoneMsg done{"l", true, "all", "", {{"a", 0, "p"}, {"b", 1, "q"}}};
    done.contextId = 0xfffffffeu;
    auto d = decodeJobBarrierDone(encode(done));
    ASSERT_TRUE(d);
    EXPECT_EQ(d->steps.size(), 2u);
    EXPECT_EQ(d->contextId, 0xfffffffeu);
    // An answer cut before its context id is no answer.
    const std::string bytes = encode(done);
    EXPECT_FALSE(decodeJobBarrierDone(bytes.substr(0, bytes.size() - 1)));
}

TEST(SpawnPayloads, MalformedOnesAreRejected) {
    SpawnRequestMsg spawn{7, 3, "ns", {{"./a", {}, {}, "", 1, {}}}, {}};
    std::string bytes = encode(spawn);
    EXPECT_FALSE(decodeSpawnRequest(bytes + "x"));         // trailing bytes
    EXPECT_FALSE(decodeSpawnRequest(bytes.substr(0, 10))); // cut short
    spawn.apps[0].cmd.clear();
    EXPECT_FALSE(decodeSpawnRequest(encode(spawn))); // no program
    spawn.apps.clear();
    EXPECT_FALSE(decodeSpawnRequest(encode(spawn)));                               // no application
    EXPECT_FALSE(decodeSpawnReply(encode(SpawnReplyMsg{1, true, "", 0, "", ""}))); // ok, no nspace
    EXPECT_FALSE(decodeSpawnReply(encode(SpawnReplyMsg{1, false, "x", 0, "", ""})));
    EXPECT_FALSE(decodeGuestStep(encode(GuestStepMsg{"", "1.2", "p", false})));
    EXPECT_FALSE(decodeJobBarrier(encode(JobBarrierMsg{"l", {}, false, ""}))); // no process
    EXPECT_FALSE(decodeJobBarrier(encode(JobBarrierMsg{"", {{"a", 0}}, false, ""})));
    EXPECT_FALSE(decodeGuestStep(encode(GuestStepMsg{std::string(256, 'n'), "1.2", "p", false})));
}
