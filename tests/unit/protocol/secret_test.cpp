#include "protocol/wire/secret.hpp"

#include <gtest/gtest.h>

using namespace stepmap::wire;

TEST(Secret, GeneratedSecretsAreHexAndDiffer) {
    auto a = generateSecretHex(), b = generateSecretHex();
    EXPECT_EQ(a.size(), 64u);
    EXPECT_NE(a, b);
    auto raw = decodeSecretHex(a);
    ASSERT_TRUE(raw);
    EXPECT_EQ(raw->size(), 32u);
}

TEST(Secret, DecodeRejectsAnythingElse) {
    EXPECT_FALSE(decodeSecretHex(""));
    EXPECT_FALSE(decodeSecretHex(std::string(63, 'a')));
    EXPECT_FALSE(decodeSecretHex(std::string(65, 'a')));
    EXPECT_FALSE(decodeSecretHex(std::string(63, 'a') + "g"));
    EXPECT_EQ(*decodeSecretHex(std::string(62, '0') + "fF"), std::string(31, '\0') + "\xff");
}
