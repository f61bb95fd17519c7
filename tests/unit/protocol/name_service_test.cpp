// The step's published names as MPI programs rely on them: MPI_Publish_name
// and MPI_Lookup_name, and the ports MPI_Comm_accept/connect meet through
// (Open MPI publishes them first-read and looks them up waiting).

#include "protocol/hub/name_service.hpp"

#include <gtest/gtest.h>

using namespace stepmap::hub;

namespace {

NameEntry entry(const std::string &key, std::uint32_t rank, std::uint32_t node,
                const std::string &value, NameScope scope = NameScope::Step,
                bool firstRead = false) {
    return NameEntry{key, rank, node, scope, firstRead, value};
}

NameLookup ask(std::uint64_t id, std::uint32_t rank, std::uint32_t node,
               std::vector<std::string> keys, bool wait = false, bool nodeOnly = false,
               std::uint64_t deadlineMs = 0) {
    return NameLookup{.id = id,
                      .node = node,
                      .rank = rank,
                      .keys = std::move(keys),
                      .nodeOnly = nodeOnly,
                      .wait = wait,
                      .deadlineMs = deadlineMs};
}

} // namespace

TEST(NameService, ARankOnAnotherNodeFindsWhatWasPublished) {
    NameService names;
    ASSERT_EQ(names.publish({entry("ocean", 0, 0, "port-0")}).status, NameStatus::Ok);
    auto got = names.lookup(ask(7, 5, 2, {"ocean"}));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].id, 7u);
    EXPECT_EQ(got[0].node, 2u);
    EXPECT_EQ(got[0].status, NameStatus::Ok);
    ASSERT_EQ(got[0].entries.size(), 1u);
    EXPECT_EQ(got[0].entries[0].value, "port-0");
    EXPECT_EQ(got[0].entries[0].rank, 0u);
    // Still there for the next one (not first-read).
    EXPECT_EQ(names.lookup(ask(8, 6, 3, {"ocean"}))[0].status, NameStatus::Ok);
}

TEST(NameService, AnUnknownNameIsNotFoundAtOnceWithoutWait) {
    NameService names;
    auto got = names.lookup(ask(1, 0, 0, {"nothing"}));
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].status, NameStatus::NotFound);
}

TEST(NameService, APublishedNameCannotBePublishedAgainUntilUnpublished) {
    NameService names;
    ASSERT_EQ(names.publish({entry("svc", 0, 0, "a")}).status, NameStatus::Ok);
    EXPECT_EQ(names.publish({entry("svc", 1, 1, "b")}).status, NameStatus::Exists);
    // Another rank cannot remove it; its publisher can.
    names.unpublish(1, {"svc"});
    EXPECT_EQ(names.lookup(ask(1, 2, 0, {"svc"}))[0].entries.at(0).value, "a");
    names.unpublish(0, {"svc"});
    EXPECT_EQ(names.lookup(ask(2, 2, 0, {"svc"}))[0].status, NameStatus::NotFound);
    EXPECT_EQ(names.publish({entry("svc", 1, 1, "b")}).status, NameStatus::Ok);
}

TEST(NameService, APublishIsAllOrNothing) {
    NameService names;
    ASSERT_EQ(names.publish({entry("b", 0, 0, "1")}).status, NameStatus::Ok);
    EXPECT_EQ(names.publish({entry("a", 1, 0, "1"), entry("b", 1, 0, "2")}).status,
              NameStatus::Exists);
    EXPECT_EQ(names.lookup(ask(1, 0, 0, {"a"}))[0].status, NameStatus::NotFound);
    EXPECT_EQ(names.publish({entry("c", 1, 0, "1"), entry("c", 1, 0, "2")}).status,
              NameStatus::Exists);
    EXPECT_EQ(names.publish({entry("", 1, 0, "1")}).status, NameStatus::Invalid);
    EXPECT_EQ(names.size(), 1u);
}

TEST(NameService, AFirstReadNameGoesToOneReaderOnly) {
    NameService names;
    names.publish({entry("port:accept", 0, 0, "members", NameScope::Step, true)});
    EXPECT_EQ(names.lookup(ask(1, 4, 1, {"port:accept"}))[0].status, NameStatus::Ok);
    EXPECT_EQ(names.lookup(ask(2, 4, 1, {"port:accept"}))[0].status, NameStatus::NotFound);
    EXPECT_EQ(names.size(), 0u);
}

TEST(NameService, AWaitingLookupIsAnsweredByThePublishThatCompletesIt) {
    NameService names;
    EXPECT_TRUE(names.lookup(ask(9, 4, 1, {"x", "y"}, true)).empty());
    auto first = names.publish({entry("x", 0, 0, "1")});
    EXPECT_TRUE(first.completed.empty()); // y is still missing
    auto second = names.publish({entry("y", 0, 0, "2")});
    ASSERT_EQ(second.completed.size(), 1u);
    EXPECT_EQ(second.completed[0].id, 9u);
    EXPECT_EQ(second.completed[0].node, 1u);
    EXPECT_EQ(second.completed[0].entries.size(), 2u);
    EXPECT_EQ(names.waiting(), 0u);
}

TEST(NameService, WaitingLookupsTakeAFirstReadNameInArrivalOrder) {
    NameService names;
    names.lookup(ask(1, 4, 1, {"p"}, true));
    names.lookup(ask(2, 5, 2, {"p"}, true));
    auto done = names.publish({entry("p", 0, 0, "v", NameScope::Step, true)});
    ASSERT_EQ(done.completed.size(), 1u);
    EXPECT_EQ(done.completed[0].id, 1u);
    EXPECT_EQ(names.waiting(), 1u);
}

TEST(NameService, AWaitingLookupTimesOutAtItsDeadline) {
    NameService names;
    names.lookup(ask(3, 4, 1, {"late"}, true, false, 1000));
    names.lookup(ask(4, 4, 1, {"later"}, true, false, 0)); // no deadline
    EXPECT_TRUE(names.expire(999).empty());
    auto out = names.expire(1000);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 3u);
    EXPECT_EQ(out[0].status, NameStatus::TimedOut);
    EXPECT_EQ(names.waiting(), 1u);
    names.forgetNode(1);
    EXPECT_EQ(names.waiting(), 0u);
}

TEST(NameService, ScopesLimitWhoSeesAName) {
    NameService names;
    names.publish({entry("node-only", 0, 0, "n", NameScope::Node),
                   entry("mine", 0, 0, "m", NameScope::Publisher), entry("everyone", 2, 1, "e")});
    struct Row {
        std::uint32_t rank, node;
        std::string key;
        bool nodeOnly;
        NameStatus expected;
    };
    const Row rows[] = {
        {1, 0, "node-only", false, NameStatus::Ok},
        {3, 1, "node-only", false, NameStatus::NotFound},
        {0, 0, "mine", false, NameStatus::Ok},
        {1, 0, "mine", false, NameStatus::NotFound},
        {0, 0, "everyone", false, NameStatus::Ok},
        {0, 0, "everyone", true, NameStatus::NotFound}, // published on node 1
        {3, 1, "everyone", true, NameStatus::Ok},
    };
    for (const Row &row : rows)
        EXPECT_EQ(
            names.lookup(ask(1, row.rank, row.node, {row.key}, false, row.nodeOnly))[0].status,
            row.expected)
            << row.key << " asked by rank " << row.rank << " on node " << row.node;
}

TEST(NameService, WithoutWaitTheVisibleKeysComeBack) {
    NameService names;
    names.publish({entry("a", 0, 0, "1")});
    auto got = names.lookup(ask(1, 0, 0, {"a", "b"}));
    ASSERT_EQ(got[0].status, NameStatus::Ok);
    EXPECT_EQ(got[0].entries.size(), 1u);
}

TEST(NameService, LimitsRefuseInsteadOfGrowing) {
    NameService names(NameService::Limits{2, 100, 1});
    EXPECT_EQ(names.publish({entry("a", 0, 0, "1"), entry("b", 0, 0, "1")}).status, NameStatus::Ok);
    EXPECT_EQ(names.publish({entry("c", 0, 0, "1")}).status, NameStatus::TooMany);
    names.unpublish(0, {});
    EXPECT_EQ(names.publish({entry("big", 0, 0, std::string(200, 'x'))}).status,
              NameStatus::TooMany);
    EXPECT_TRUE(names.lookup(ask(1, 0, 0, {"z"}, true)).empty());
    auto second = names.lookup(ask(2, 0, 0, {"z"}, true));
    ASSERT_EQ(second.size(), 1u);
    EXPECT_EQ(second[0].status, NameStatus::TooMany);
    EXPECT_EQ(names.lookup(ask(3, 0, 0, {}))[0].status, NameStatus::Invalid);
}

TEST(NameService, AKeyNamedTwiceInOneLookupIsRefused) {
    NameService names;
    names.publish({entry("port", 0, 0, "v", NameScope::Step, true)});
    auto got = names.lookup(ask(1, 0, 0, {"port", "port"}));
    EXPECT_EQ(got.at(0).status, NameStatus::Invalid);
    EXPECT_EQ(names.size(), 1u); // still there for a proper lookup
    EXPECT_EQ(names.lookup(ask(2, 0, 0, {"port"}, true)).at(0).entries.size(), 1u);
}

TEST(NameService, AKeyIsUniqueOnlyWhereItsNamesWouldBeSeenTogether) {
    NameService names;
    // Each node its own "local" name, each rank its own "mine".
    EXPECT_EQ(names.publish({entry("local", 0, 0, "node 0", NameScope::Node)}).status,
              NameStatus::Ok);
    EXPECT_EQ(names.publish({entry("local", 2, 1, "node 1", NameScope::Node)}).status,
              NameStatus::Ok);
    EXPECT_EQ(names.publish({entry("mine", 0, 0, "rank 0", NameScope::Publisher)}).status,
              NameStatus::Ok);
    EXPECT_EQ(names.publish({entry("mine", 2, 1, "rank 2", NameScope::Publisher)}).status,
              NameStatus::Ok);
    EXPECT_EQ(names.lookup(ask(1, 3, 1, {"local"})).at(0).entries.at(0).value, "node 1");
    EXPECT_EQ(names.lookup(ask(2, 1, 0, {"local"})).at(0).entries.at(0).value, "node 0");
    EXPECT_EQ(names.lookup(ask(3, 2, 1, {"mine"})).at(0).entries.at(0).value, "rank 2");
    // Seen together: a step-wide name over them, or node 0's rank 1 taking
    // a name of its own its node already has.
    EXPECT_EQ(names.publish({entry("local", 5, 2, "all")}).status, NameStatus::Exists);
    EXPECT_EQ(names.publish({entry("local", 1, 0, "r1", NameScope::Publisher)}).status,
              NameStatus::Exists);
    EXPECT_EQ(names.publish({entry("mine", 1, 0, "r1", NameScope::Publisher)}).status,
              NameStatus::Ok);
}

TEST(NameService, UnpublishingANameOneDoesNotHoldIsNotFound) {
    NameService names;
    names.publish({entry("svc", 0, 0, "a")});
    EXPECT_EQ(names.unpublish(1, {"svc"}), NameStatus::NotFound);
    EXPECT_EQ(names.unpublish(0, {"other"}), NameStatus::NotFound);
    EXPECT_EQ(names.unpublish(1, {}), NameStatus::Ok); // all of rank 1's: none, fine
    EXPECT_EQ(names.unpublish(0, {"svc"}), NameStatus::Ok);
}

TEST(NameService, AWaitingLookupMayAskForSomeOfItsKeys) {
    NameService names;
    NameLookup two = ask(1, 0, 0, {"a", "b", "c"}, true);
    two.atLeast = 2;
    EXPECT_TRUE(names.lookup(two).empty());
    EXPECT_TRUE(names.publish({entry("a", 1, 0, "1")}).completed.empty());
    auto done = names.publish({entry("c", 1, 0, "3")}).completed;
    ASSERT_EQ(done.size(), 1u);
    EXPECT_EQ(done[0].entries.size(), 2u);
}

TEST(NameService, WaitingLookupsAreBoundedInBytesToo) {
    NameService names(NameService::Limits{100, 1000, 100, 10});
    EXPECT_TRUE(names.lookup(ask(1, 0, 0, {"0123456789"}, true)).empty());
    auto refused = names.lookup(ask(2, 0, 0, {"x"}, true));
    ASSERT_EQ(refused.size(), 1u);
    EXPECT_EQ(refused[0].status, NameStatus::TooMany);
    // Another node has its own budget.
    EXPECT_TRUE(names.lookup(ask(3, 1, 1, {"x"}, true)).empty());
}
