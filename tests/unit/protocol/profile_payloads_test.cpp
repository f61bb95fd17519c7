// The profile rendezvous' payloads (wire/profile_payloads.hpp): what a node
// server says of its entry and the hub's verdict, decoded strictly.

#include "protocol/wire/profile_payloads.hpp"

#include <gtest/gtest.h>

using namespace stepmap::wire;

TEST(ProfilePayloads, AStateAndAVerdictComeBackAsSent) {
    auto state = decodeProfileState(encode(ProfileStateMsg{false, "interface veth0 added"}));
    ASSERT_TRUE(state);
    EXPECT_FALSE(state->usable);
    EXPECT_EQ(state->reason, "interface veth0 added");
    auto verdict = decodeProfileVerdict(encode(ProfileVerdictMsg{{1, 3}}), 4);
    ASSERT_TRUE(verdict);
    EXPECT_EQ(verdict->withheld, (std::vector<std::uint32_t>{1, 3}));
}

TEST(ProfilePayloads, AVerdictNamingNodesOutsideTheStepOrOutOfOrderIsRefused) {
    EXPECT_FALSE(decodeProfileVerdict(encode(ProfileVerdictMsg{{4}}), 4));
    EXPECT_FALSE(decodeProfileVerdict(encode(ProfileVerdictMsg{{2, 1}}), 4));
    EXPECT_FALSE(decodeProfileVerdict(encode(ProfileVerdictMsg{{1, 1}}), 4));
    // A count larger than the step, before any index is read.
    EXPECT_FALSE(decodeProfileVerdict(std::string("\xff\xff\xff\xff", 4), 4));
    EXPECT_FALSE(decodeProfileVerdict(encode(ProfileVerdictMsg{{1}}) + "x", 4));
}

TEST(ProfilePayloads, AStateIsBoundedAndExact) {
    EXPECT_FALSE(decodeProfileState(std::string("\x02\0\0\0\0", 5))); // usable not 0/1
    EXPECT_TRUE(decodeProfileState(encode(ProfileStateMsg{true, ""})));
    EXPECT_FALSE(decodeProfileState(encode(ProfileStateMsg{true, ""}) + "z"));
    // A sender's long reason is cut to the bound, and the bound is kept.
    auto cut = decodeProfileState(encode(ProfileStateMsg{false, std::string(10000, 'r')}));
    ASSERT_TRUE(cut);
    EXPECT_EQ(cut->reason.size(), kMaxProfileReason);
}
