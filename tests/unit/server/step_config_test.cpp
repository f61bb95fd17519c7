// The node server's invocation (argv from the plugin, STEPMAP_PLAN and
// STEPMAP_SECRET in its environment): every field read, defaults kept, and
// every bad input refused with a message naming it.

#include "step_config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <tuple>
#include <unistd.h>

using namespace stepmap;
using namespace stepmap::server;

namespace {

const std::string kSecretHex(64, 'a');

// Two nodes, two ranks each.
std::string twoNodePlan() {
    LaunchPlan plan;
    plan.nodes = {{"n1", 2, std::nullopt}, {"n2", 2, std::nullopt}};
    plan.ranks.resize(4);
    for (std::uint32_t r = 0; r < 4; ++r)
        plan.ranks[r].node = r / 2;
    assignLocalRanks(plan);
    return encodePlan(plan);
}

// watchPid, dmodexTimeoutSec, topologyXml, clientAuth, clientsElsewhere.
auto optionalFields(const StepConfig &c) {
    return std::make_tuple(c.watchPid, c.dmodexTimeoutSec, c.topologyXml, c.clientAuth,
                           c.clientsElsewhere);
}

// Sets the environment the plugin gives the server, and restores it.
class StepConfigTest : public ::testing::Test {
protected:
    void SetUp() override {
        setenv("STEPMAP_PLAN", twoNodePlan().c_str(), 1);
        setenv("STEPMAP_SECRET", kSecretHex.c_str(), 1);
    }
    void TearDown() override {
        unsetenv("STEPMAP_PLAN");
        unsetenv("STEPMAP_SECRET");
    }

    // The required arguments, then `extra`; a pair with an empty value is
    // removed from the required ones instead.
    static std::vector<std::string> arguments(std::vector<std::string> extra = {}) {
        std::vector<std::string> args = {"stepmap-stepd",
                                         "--step",
                                         "7.0",
                                         "--node-index",
                                         "1",
                                         "--tmpdir",
                                         "/tmp/sm-x",
                                         "--hub",
                                         "10.1.2.3:4567",
                                         "--ready-fd",
                                         "5",
                                         "--step-cores",
                                         "0-1"};
        args.insert(args.end(), extra.begin(), extra.end());
        return args;
    }
    static std::vector<std::string> without(const std::string &name) {
        auto args = arguments();
        for (std::size_t i = 1; i < args.size(); i += 2)
            if (args[i] == name) {
                args.erase(args.begin() + static_cast<long>(i),
                           args.begin() + static_cast<long>(i) + 2);
                break;
            }
        return args;
    }
    static Expected<StepConfig> parse(std::vector<std::string> args) {
        std::vector<char *> argv;
        for (auto &a : args)
            argv.push_back(a.data());
        argv.push_back(nullptr);
        return parseStepConfig(static_cast<int>(args.size()), argv.data());
    }
    static std::string refusal(std::vector<std::string> args) {
        auto c = parse(std::move(args));
        return c ? std::string("(accepted)") : c.error().message;
    }
};

} // namespace

TEST_F(StepConfigTest, ReadsEveryRequiredField) {
    auto c = parse(arguments());
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->stepTag, "7.0");
    EXPECT_EQ(c->nodeIndex, 1u);
    EXPECT_EQ(c->tmpdir, "/tmp/sm-x");
    EXPECT_EQ(c->hubHost, "10.1.2.3");
    EXPECT_EQ(c->hubPort, 4567);
    EXPECT_EQ(c->readyFd, 5);
    EXPECT_EQ(c->stepCores, "0-1");
    EXPECT_EQ(c->secret, std::string(32, '\xaa'));
    ASSERT_EQ(c->plan.nodes.size(), 2u);
    EXPECT_EQ(c->plan.nodes[1].name, "n2");
    ASSERT_EQ(c->plan.ranks.size(), 4u);
    EXPECT_EQ(c->plan.ranks[3].node, 1u);
    EXPECT_EQ(c->plan.ranks[3].localRank, 1u);
}

TEST_F(StepConfigTest, OptionalFieldsKeepTheirDefaults) {
    auto c = parse(arguments());
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(optionalFields(*c),
              std::make_tuple(0, 60, std::string(), std::string("munge"), false));
}

TEST_F(StepConfigTest, ReadsEveryOptionalField) {
    auto c = parse(
        arguments({"--watch-pid", "4242", "--dmodex-timeout", "7", "--topology-xml", "/x/t.xml",
                   "--client-auth", "native", "--client-mount-namespace", "other"}));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(optionalFields(*c),
              std::make_tuple(4242, 7, std::string("/x/t.xml"), std::string("native"), true));
    auto same = parse(arguments({"--client-mount-namespace", "same", "--client-auth", "munge"}));
    ASSERT_TRUE(same) << same.error().message;
    EXPECT_FALSE(same->clientsElsewhere);
    EXPECT_EQ(same->clientAuth, "munge");
}

TEST_F(StepConfigTest, ReadsTheModexModeItsPortsAndTheJobsInterfaceChoice) {
    auto c = parse(arguments({"--modex", "profile", "--modex-ports", "24000-25999",
                              "--site-modex-ports", "20000-29999", "--tcp-if-include", "eth0"}));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->modex, modex::ModexMode::Profile);
    EXPECT_EQ(c->modexPorts, "24000-25999");
    EXPECT_EQ(c->siteModexPorts, "20000-29999");
    EXPECT_EQ(c->tcpIfInclude, "eth0");
    EXPECT_TRUE(c->tcpIfExclude.empty());
    auto plain = parse(arguments());
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->modex, modex::ModexMode::Fence);
    EXPECT_FALSE(plain->profile);
}

// srun ships the profile in pieces; the server joins them. A damaged one is
// kept out with its reason, never a reason not to start.
TEST_F(StepConfigTest, TheProfileComesInPiecesAndADamagedOneIsDropped) {
    const std::string text = "# stepmap interconnect profile\nformat_version: 1\nnodes: []\n";
    setenv("STEPMAP_PROFILE", text.substr(0, 20).c_str(), 1);
    setenv("STEPMAP_PROFILE_1", text.substr(20, 20).c_str(), 1);
    setenv("STEPMAP_PROFILE_2", text.substr(40).c_str(), 1);
    auto c = parse(arguments());
    ASSERT_TRUE(c) << c.error().message;
    ASSERT_TRUE(c->profile) << c->profileProblem;
    EXPECT_TRUE(c->profile->nodes.empty());
    unsetenv("STEPMAP_PROFILE_2");
    auto cut = parse(arguments());
    ASSERT_TRUE(cut) << cut.error().message;
    EXPECT_FALSE(cut->profile);
    EXPECT_EQ(cut->profileProblem.rfind("STEPMAP_PROFILE:", 0), 0u) << cut->profileProblem;
    unsetenv("STEPMAP_PROFILE");
    unsetenv("STEPMAP_PROFILE_1");
}

TEST_F(StepConfigTest, RecoveryFromAFailedRankIsOnlyWithUlfm) {
    auto plain = parse(arguments());
    ASSERT_TRUE(plain);
    EXPECT_FALSE(plain->faultTolerant);
    auto ulfm = parse(arguments({"--with-ft", "ulfm"}));
    ASSERT_TRUE(ulfm) << ulfm.error().message;
    EXPECT_TRUE(ulfm->faultTolerant);
    auto none = parse(arguments({"--with-ft", "none"}));
    ASSERT_TRUE(none) << none.error().message;
    EXPECT_FALSE(none->faultTolerant);
    auto bad = parse(arguments({"--with-ft", "yes"}));
    ASSERT_FALSE(bad);
    EXPECT_EQ(bad.error().message, "bad --with-ft 'yes' (ulfm or none)");
}

// When slurmstepd began starting the server (srun -v's breakdown).
TEST_F(StepConfigTest, ReadsWhenSlurmstepdLaunchedTheServer) {
    auto unknown = parse(arguments());
    ASSERT_TRUE(unknown) << unknown.error().message;
    EXPECT_EQ(unknown->launchedAtUsec, 0);
    auto c = parse(arguments({"--launched-at", "1700000000123456"}));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->launchedAtUsec, 1700000000123456);
}

TEST_F(StepConfigTest, TheLastOfARepeatedArgumentWins) {
    auto c = parse(arguments({"--step", "8.1"}));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->stepTag, "8.1");
}

TEST_F(StepConfigTest, TheNamespaceFollowsFromTheSecretNotFromArgv) {
    // Every node server of the step derives the same name; another user,
    // who sees argv and the step's numbers, cannot.
    auto c = parse(arguments());
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->nspace.rfind("stepmap.7.0.", 0), 0u) << c->nspace;
    EXPECT_EQ(c->nspace.size(), std::string("stepmap.7.0.").size() + 16);
    EXPECT_EQ(parse(arguments())->nspace, c->nspace);
    setenv("STEPMAP_SECRET", std::string(64, 'b').c_str(), 1);
    auto other = parse(arguments());
    ASSERT_TRUE(other) << other.error().message;
    EXPECT_NE(other->nspace, c->nspace);
    EXPECT_EQ(other->nspace.rfind("stepmap.7.0.", 0), 0u);
}

TEST_F(StepConfigTest, AStepThatIsNotJobDotStepIsRefused) {
    for (const char *bad : {"7", "7.0.1", "stepmap.7.0", "7.x", "", "7.0 "})
        EXPECT_EQ(refusal(arguments({"--step", bad})),
                  std::string("bad --step '") + bad + "' (expected JOB.STEP, e.g. 12.0)")
            << bad;
}

TEST_F(StepConfigTest, TheHubHostIsEverythingBeforeTheLastColon) {
    auto c = parse(arguments({"--hub", "::1:80"}));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->hubHost, "::1");
    EXPECT_EQ(c->hubPort, 80);
}

TEST_F(StepConfigTest, UnknownAndValuelessArgumentsAreRefused) {
    EXPECT_EQ(refusal(arguments({"--verbose", "1"})), "unknown argument '--verbose'");
    EXPECT_EQ(refusal(arguments({"stray"})), "unknown argument 'stray'");
    EXPECT_EQ(refusal(arguments({"--watch-pid"})), "argument --watch-pid needs a value");
}

TEST_F(StepConfigTest, EachMissingRequiredArgumentIsNamed) {
    for (const char *name :
         {"--step", "--node-index", "--tmpdir", "--hub", "--ready-fd", "--step-cores"})
        EXPECT_EQ(refusal(without(name)), std::string("missing argument ") + name);
}

TEST_F(StepConfigTest, ValuesOutsideTheirBoundsOrSetsAreRefused) {
    const std::vector<std::pair<std::vector<std::string>, std::string>> refusals = {
        {{"--ready-fd", "-1"}, "bad --ready-fd '-1'"},
        {{"--ready-fd", "1048577"}, "bad --ready-fd '1048577'"},
        {{"--ready-fd", "3x"}, "bad --ready-fd '3x'"},
        {{"--watch-pid", "0"}, "bad --watch-pid '0'"},
        {{"--watch-pid", "1073741825"}, "bad --watch-pid '1073741825'"},
        {{"--launched-at", "0"}, "bad --launched-at '0'"},
        {{"--launched-at", "-5"}, "bad --launched-at '-5'"},
        {{"--launched-at", "4611686018427387905"}, "bad --launched-at '4611686018427387905'"},
        {{"--dmodex-timeout", "0"}, "bad --dmodex-timeout '0'"},
        {{"--dmodex-timeout", "86401"}, "bad --dmodex-timeout '86401'"},
        {{"--client-auth", "none"}, "bad --client-auth 'none' (munge or native)"},
        {{"--client-mount-namespace", "host"},
         "bad --client-mount-namespace 'host' (same or other)"},
        {{"--node-index", "2"}, "bad --node-index '2' for a plan of 2 nodes"},
        {{"--modex", "none"},
         "--modex=none is not a modex mode; use fence (the MPI library's own data exchange at "
         "MPI_Init), async (each peer's data fetched at first contact) or profile (no exchange: "
         "the data comes from the site's interconnect profile)"},
        {{"--modex", "profile"}, "--modex profile needs --modex-ports BASE-END"},
        {{"--node-index", "-1"}, "bad --node-index '-1' for a plan of 2 nodes"},
    };
    for (const auto &[extra, message] : refusals)
        EXPECT_EQ(refusal(arguments(extra)), message) << extra[0] << " " << extra[1];
    for (const char *hub : {"host", "host:0", "host:65536", "host:", "host:8x"})
        EXPECT_EQ(refusal(arguments({"--hub", hub})),
                  std::string("bad --hub '") + hub + "' (expected HOST:PORT)");
}

TEST_F(StepConfigTest, TheBoundsThemselvesAreAccepted) {
    for (std::vector<std::string> extra : {std::vector<std::string>{"--ready-fd", "0"},
                                           {"--ready-fd", "1048576"},
                                           {"--watch-pid", "1"},
                                           {"--watch-pid", "1073741824"},
                                           {"--dmodex-timeout", "1"},
                                           {"--dmodex-timeout", "86400"},
                                           {"--hub", "h:1"},
                                           {"--hub", "h:65535"},
                                           {"--node-index", "0"}})
        EXPECT_TRUE(parse(arguments(extra)))
            << extra[0] << " " << extra[1] << ": " << refusal(arguments(extra));
}

TEST_F(StepConfigTest, ThePlanMustBeSetAndValid) {
    unsetenv("STEPMAP_PLAN");
    EXPECT_EQ(refusal(arguments()), "STEPMAP_PLAN is not set");
    setenv("STEPMAP_PLAN", "SM1;garbage", 1);
    EXPECT_EQ(refusal(arguments()).rfind("STEPMAP_PLAN: invalid stepmap plan", 0), 0u)
        << refusal(arguments());
}

TEST_F(StepConfigTest, TheSecretMustBe64HexDigits) {
    const std::string message = "STEPMAP_SECRET is missing or not 64 hex digits";
    unsetenv("STEPMAP_SECRET");
    EXPECT_EQ(refusal(arguments()), message);
    setenv("STEPMAP_SECRET", std::string(63, 'a').c_str(), 1);
    EXPECT_EQ(refusal(arguments()), message);
    setenv("STEPMAP_SECRET", (std::string(63, 'a') + "g").c_str(), 1);
    EXPECT_EQ(refusal(arguments()), message);
}

TEST_F(StepConfigTest, ClientsInAnotherMountNamespaceReachTheDirectoryThroughProc) {
    auto c = parse(arguments());
    ASSERT_TRUE(c);
    EXPECT_EQ(clientTmpdir(*c), "/tmp/sm-x");
    c->clientsElsewhere = true;
    EXPECT_EQ(clientTmpdir(*c), "/proc/" + std::to_string(getpid()) + "/root/tmp/sm-x");
}
