// The server's ready report as the plugin (root) reads it: only what the
// server may say, bounded, and nothing that names a process.

#include "protocol/ready/ready_report.hpp"

#include <gtest/gtest.h>

using namespace stepmap::ready;

TEST(ReadyReport, RoundTrip) {
    std::map<std::uint32_t, std::vector<std::string>> envs{
        {0, {"PMIX_RANK=0", "PMIX_NAMESPACE=stepmap.1.0"}}, {4, {"PMIX_RANK=4"}}};
    auto got = decodeReadyReport(encodeReadyReport(envs), {0, 4});
    ASSERT_TRUE(got) << got.error().message;
    ASSERT_EQ(got->size(), 2u);
    EXPECT_EQ(got->at(0)[1],
              (std::pair<std::string, std::string>{"PMIX_NAMESPACE", "stepmap.1.0"}));
    EXPECT_EQ(got->at(4).size(), 1u);
}

// Each task of a node reads only its own rank's block of the report.
TEST(ReadyReport, OneRanksEnvironmentFromTheWholeReport) {
    const std::map<std::uint32_t, std::vector<std::string>> envs{
        {3, {"PMIX_RANK=3", "PMIX_NAMESPACE=stepmap.1.0"}},
        {7, {"PMIX_RANK=7", "PMIX_NAMESPACE=stepmap.1.0"}},
        {17, {"PMIX_RANK=17"}}};
    const std::string text = encodeReadyReport(envs);
    auto seven = decodeRankEnvironment(text, 7);
    ASSERT_TRUE(seven) << seven.error().message;
    EXPECT_EQ(*seven, (ClientEnvironment{{"PMIX_RANK", "7"}, {"PMIX_NAMESPACE", "stepmap.1.0"}}));
    auto first = decodeRankEnvironment(text, 3);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(*first, (ClientEnvironment{{"PMIX_RANK", "3"}, {"PMIX_NAMESPACE", "stepmap.1.0"}}));
    auto last = decodeRankEnvironment(text, 17);
    ASSERT_TRUE(last) << last.error().message;
    EXPECT_EQ(*last, (ClientEnvironment{{"PMIX_RANK", "17"}}));
    auto none = decodeRankEnvironment(text, 1);
    ASSERT_FALSE(none);
    EXPECT_EQ(none.error().message, "no PMIx environment for rank 1");
    // The block is decoded as strictly as a whole report.
    auto bad = decodeRankEnvironment("READY\nRANK 2\nENV HOME=/root\nEND\n", 2);
    ASSERT_FALSE(bad);
    auto cut = decodeRankEnvironment("READY\nRANK 2\nENV PMIX_RANK=2\n", 2);
    ASSERT_FALSE(cut);
    EXPECT_FALSE(decodeRankEnvironment("RANK 2\nENV PMIX_RANK=2\nEND\n", 2));
}

TEST(ReadyReport, FailureCarriesTheServersMessageEscapedAndShort) {
    auto got = decodeReadyReport(encodeReadyFailure("cannot \x1b[31mstart"), {0});
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().message, "cannot \\x1b[31mstart");
    auto longOne = decodeReadyReport("ERROR " + std::string(100000, 'x') + "\n", {0});
    ASSERT_FALSE(longOne);
    EXPECT_LT(longOne.error().message.size(), 600u);
}

TEST(ReadyReport, RefusesWhatTheServerMayNotSay) {
    struct Case {
        std::string text, needle;
    } cases[] = {
        {"OK 1\nRANK 0\nEND\n", "expected READY"},
        {"READY\nOK 1\nRANK 0\nEND\n", "unknown line"},
        {"READY\nRANK 7\nEND\n", "not a rank of this node"},
        {"READY\nRANK 0\nRANK 0\nEND\n", "rank given twice"},
        {"READY\nRANK x\nEND\n", "not a rank number"},
        {"READY\nENV PMIX_RANK=0\nRANK 0\nEND\n", "a variable before any rank"},
        {"READY\nRANK 0\nENV LD_PRELOAD=/tmp/x.so\nEND\n", "not a PMIX_* variable"},
        // Of Open MPI's settings, only the modex ones (not e.g. a plugin path).
        {"READY\nRANK 0\nENV OMPI_MCA_mca_base_component_path=/tmp\nEND\n",
         "not a PMIX_* variable nor an Open MPI modex setting"},
        {"READY\nRANK 0\nENV PMIX_X=a\tb\nEND\n", "not printable"},
        {"READY\nRANK 0\nENV PMIX_X=" + std::string(5000, 'a') + "\nEND\n", "value too long"},
        {"READY\nRANK 0\n", "no END"},
        {"READY\nRANK 0\nEND", "middle of a line"},
        {"READY\nEND\n", "lacks rank 0"},
        {"READY\nRANK 0\nEND\nRANK 1\n", "data after END"},
    };
    for (const auto &c : cases) {
        auto got = decodeReadyReport(c.text, {0});
        ASSERT_FALSE(got) << c.text;
        EXPECT_NE(got.error().message.find(c.needle), std::string::npos)
            << c.text << " -> " << got.error().message;
    }
}

TEST(ReadyReport, AModexlessRankGetsItsPinnedPortAndAsyncModex) {
    auto got = decodeReadyReport("READY\nRANK 0\nENV PMIX_RANK=0\n"
                                 "ENV OMPI_MCA_pmix_base_async_modex=1\n"
                                 "ENV OMPI_MCA_btl_tcp_port_min_v4=24007\nEND\n",
                                 {0});
    ASSERT_TRUE(got) << got.error().message;
    EXPECT_EQ(got->at(0).size(), 3u);
}

TEST(ReadyReport, SizeIsBoundedByTheLocalRanks) {
    std::string text = "READY\nRANK 0\n";
    for (int i = 0; i < 65; ++i)
        text += "ENV PMIX_V" + std::to_string(i) + "=x\n";
    text += "END\n";
    auto tooMany = decodeReadyReport(text, {0});
    ASSERT_FALSE(tooMany);
    EXPECT_NE(tooMany.error().message.find("too many variables"), std::string::npos);
    auto huge = decodeReadyReport(std::string(maxReadyReportBytes(1) + 1, 'x'), {0});
    ASSERT_FALSE(huge);
    EXPECT_NE(huge.error().message.find("larger than"), std::string::npos);
}
