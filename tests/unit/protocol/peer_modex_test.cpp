// Direct modex between node servers (hub/peer_modex.hpp): real servers'
// PeerModex on one libuv loop over loopback, the node servers' PMIx side a
// fake host. What does not go directly must be handed back for the hub.

#include "protocol/hub/peer_modex.hpp"
#include "protocol/wire/frame_channel.hpp"
#include "protocol/wire/secret.hpp"

#include "reply_outcome.hpp"

#include <gtest/gtest.h>

#include <csignal>
#include <netinet/in.h>

#include <map>
#include <memory>

using namespace stepmap;

namespace {

constexpr hub::LinkStatuses kStatuses{0, -1000, -2000};

// Ranks 0-2: rank r on node r.
struct FakeHost : hub::LinkHost {
    std::uint32_t node = 0;
    bool answer = true;
    std::vector<hub::DataReply> unanswered;
    std::vector<std::string> lines;
    void localModex(std::uint32_t rank, hub::DataReply done) override {
        if (answer)
            done(0, "data of " + std::to_string(rank));
        else
            unanswered.push_back(std::move(done));
    }
    bool ownsRank(std::uint32_t rank) const override { return rank == node; }
    hub::LinkStatuses statuses() const override { return kStatuses; }
    std::string statusText(int status) const override { return "status " + std::to_string(status); }
    void log(const std::string &line) override { lines.push_back(line); }
    bool logged(const std::string &start) const {
        for (const auto &l : lines)
            if (l.rfind(start, 0) == 0)
                return true;
        return false;
    }
};

struct Answer {
    int status = 0;
    std::string data;
};

class PeerModexTest : public ::testing::Test {
public:
    static constexpr std::uint32_t kNodes = 3;

    void SetUp() override {
        // As the node server does (stepd_server/main.cpp): a peer that went
        // away fails a write with EPIPE.
        signal(SIGPIPE, SIG_IGN);
        uv_loop_init(&loop_);
        secret_ = *wire::decodeSecretHex(wire::generateSecretHex());
        // The socket each server reaches srun by: the peers' listeners take
        // its address.
        near_ = uvnet::makeHandle(uv_tcp_init, &loop_);
        sockaddr_in addr{};
        uv_ip4_addr("127.0.0.1", 0, &addr);
        ASSERT_EQ(uv_tcp_bind(near_.get(), reinterpret_cast<sockaddr *>(&addr), 0), 0);
    }

    void TearDown() override {
        peers_.clear();
        near_.reset();
        stranger_.reset();
        for (int i = 0; i < 1000 && uv_loop_close(&loop_) == UV_EBUSY; ++i)
            uv_run(&loop_, UV_RUN_NOWAIT);
    }

    // Every node's server, listening, with the address book of all.
    void start(std::size_t maxLinks = 256, std::size_t maxRequests = 4096, int handshakeMs = 2000) {
        std::string entries;
        for (std::uint32_t n = 0; n < kNodes; ++n) {
            hosts_[n].node = n;
            hub::PeerModex::Settings s;
            s.secret = secret_;
            s.nodeIndex = n;
            s.nodeCount = kNodes;
            s.maxLinks = maxLinks;
            s.maxRequestsPerPeer = maxRequests;
            s.handshakeDeadlineMs = handshakeMs;
            s.onAnswer = [this, n](std::uint64_t id, int status, std::string data) {
                answers_[n][id] = {status, std::move(data)};
            };
            s.onDetour = [this, n](std::uint64_t id) { detoured_[n].push_back(id); };
            peers_.push_back(
                std::make_unique<hub::PeerModex>(&loop_, std::move(s), hosts_[n], counted_[n]));
            entries += peers_.back()->listen(near_.get());
        }
        book_ = *hub::decodeAddressBook(entries, kNodes);
        for (auto &p : peers_)
            p->setAddressBook(book_);
    }

    template <class Pred> bool runUntil(Pred done, int seconds = 10) {
        return protocol_test::runLoopUntil(&loop_, done, seconds);
    }

    uv_loop_t loop_{};
    std::string secret_;
    uvnet::UvHandlePtr<uv_tcp_t> near_, stranger_;
    FakeHost hosts_[kNodes];
    timeline::ExchangeCounters counted_[kNodes];
    std::vector<std::unique_ptr<hub::PeerModex>> peers_;
    std::vector<std::optional<hub::PeerAddress>> book_;
    std::map<std::uint32_t, std::map<std::uint64_t, Answer>> answers_;
    std::map<std::uint32_t, std::vector<std::uint64_t>> detoured_;
};

} // namespace

TEST(AddressBook, EntriesRoundTripInNodeOrder) {
    const std::string bytes = hub::encodePeerAddress(hub::PeerAddress{"198.18.0.12", 40001}) +
                              hub::encodePeerAddress(std::nullopt) +
                              hub::encodePeerAddress(hub::PeerAddress{"fd00::3", 7});
    auto book = hub::decodeAddressBook(bytes, 3);
    ASSERT_TRUE(book);
    ASSERT_TRUE((*book)[0]);
    EXPECT_EQ((*book)[0]->host, "198.18.0.12");
    EXPECT_EQ((*book)[0]->port, 40001);
    EXPECT_FALSE((*book)[1]); // takes no direct requests
    EXPECT_EQ((*book)[2]->host, "fd00::3");
    EXPECT_EQ((*book)[2]->port, 7);
}

TEST(AddressBook, AMalformedBookIsRefused) {
    const std::string one = hub::encodePeerAddress(hub::PeerAddress{"10.0.0.1", 1});
    EXPECT_FALSE(hub::decodeAddressBook(one, 2));             // too short
    EXPECT_FALSE(hub::decodeAddressBook(one + one + "x", 2)); // too long
    std::string badFamily = one;
    badFamily[0] = 5;
    EXPECT_FALSE(hub::decodeAddressBook(badFamily, 1));
    std::string noPort = one;
    noPort[17] = noPort[18] = 0;
    EXPECT_FALSE(hub::decodeAddressBook(noPort, 1));
    // A name is no entry: the book holds numeric addresses only.
    EXPECT_EQ(hub::encodePeerAddress(hub::PeerAddress{"n1", 5}), hub::encodePeerAddress({}));
}

TEST_F(PeerModexTest, TheOwnersServerAnswersDirectly) {
    start();
    ASSERT_TRUE(peers_[0]->ask(1, 7, 1));
    ASSERT_TRUE(peers_[0]->ask(2, 8, 2));
    ASSERT_TRUE(runUntil([&] { return answers_[0].size() == 2; }));
    EXPECT_EQ(answers_[0][7].status, 0);
    EXPECT_EQ(answers_[0][7].data, "data of 1");
    EXPECT_EQ(answers_[0][8].data, "data of 2");
    EXPECT_EQ(counted_[1].modexAnswered, 1u);
    EXPECT_EQ(counted_[1].bytesSent, 9u);
    // The link stays for the next request.
    EXPECT_EQ(peers_[0]->openLinks(), 2u);
    ASSERT_TRUE(peers_[0]->ask(1, 9, 1));
    ASSERT_TRUE(runUntil([&] { return answers_[0].size() == 3; }));
    EXPECT_EQ(peers_[0]->openLinks(), 2u);
    EXPECT_TRUE(detoured_[0].empty());
}

TEST_F(PeerModexTest, WithoutAnAddressBookNothingGoesDirectly) {
    start();
    peers_[0]->setAddressBook({});
    EXPECT_FALSE(peers_[0]->ask(1, 1, 1));
    EXPECT_FALSE(peers_[0]->ask(0, 2, 0)); // its own node: never a link
}

TEST_F(PeerModexTest, ARequestForARankTheNodeDoesNotHoldEndsTheLinkAndGoesThroughTheHub) {
    start();
    ASSERT_TRUE(peers_[0]->ask(1, 5, 2)); // rank 2 is node 2's
    ASSERT_TRUE(runUntil([&] { return !detoured_[0].empty(); }));
    EXPECT_EQ(detoured_[0], std::vector<std::uint64_t>{5});
    EXPECT_TRUE(hosts_[1].logged("ending the direct-modex link from node index 0: a direct-modex "
                                 "request for rank 2, which is not this node's"));
    // That owner is asked through the hub from now on.
    EXPECT_FALSE(peers_[0]->ask(1, 6, 1));
}

TEST_F(PeerModexTest, AnOwnerThatCannotBeReachedIsAskedThroughTheHub) {
    start();
    // Node 1's server is gone: nothing listens at its address.
    peers_[1].reset();
    runUntil([] { return false; }, 0);
    ASSERT_TRUE(peers_[0]->ask(1, 3, 1) || !detoured_[0].empty());
    ASSERT_TRUE(runUntil([&] { return !detoured_[0].empty(); }));
    EXPECT_EQ(detoured_[0], std::vector<std::uint64_t>{3});
    EXPECT_FALSE(peers_[0]->ask(1, 4, 1));
}

TEST_F(PeerModexTest, AListenerThatNeverChallengesIsGivenUpOnAfterTheHandshakeDeadline) {
    start(256, 4096, 200);
    // A stranger's listener where node 2's server should be: it accepts
    // (the kernel does) and says nothing.
    stranger_ = uvnet::makeHandle(uv_tcp_init, &loop_);
    sockaddr_in addr{};
    uv_ip4_addr("127.0.0.1", 0, &addr);
    ASSERT_EQ(uv_tcp_bind(stranger_.get(), reinterpret_cast<sockaddr *>(&addr), 0), 0);
    ASSERT_EQ(
        uv_listen(reinterpret_cast<uv_stream_t *>(stranger_.get()), 8, [](uv_stream_t *, int) {}),
        0);
    sockaddr_storage at{};
    int len = sizeof at;
    uv_tcp_getsockname(stranger_.get(), reinterpret_cast<sockaddr *>(&at), &len);
    auto book = book_;
    book[2]->port = ntohs(reinterpret_cast<sockaddr_in *>(&at)->sin_port);
    peers_[0]->setAddressBook(book);
    ASSERT_TRUE(peers_[0]->ask(2, 11, 2));
    ASSERT_TRUE(runUntil([&] { return !detoured_[0].empty(); }, 5));
    EXPECT_EQ(detoured_[0], std::vector<std::uint64_t>{11});
    EXPECT_TRUE(hosts_[0].logged("direct-modex link to node index 2 ended (no challenge within "
                                 "200 ms)"));
}

TEST_F(PeerModexTest, TooManyUnansweredRequestsFromOnePeerEndTheLink) {
    start(256, 2);
    hosts_[1].answer = false;
    for (std::uint64_t id = 1; id <= 3; ++id)
        ASSERT_TRUE(peers_[0]->ask(1, id, 1));
    ASSERT_TRUE(runUntil([&] { return detoured_[0].size() == 3; }));
    EXPECT_TRUE(hosts_[1].logged("ending the direct-modex link from node index 0: more than 2 "
                                 "unanswered direct-modex requests"));
    // An answer the PMIx side gives late, for a link that is gone, goes
    // nowhere.
    ASSERT_EQ(hosts_[1].unanswered.size(), 2u);
    for (auto &done : hosts_[1].unanswered)
        done(0, "late");
    runUntil([] { return false; }, 0);
    EXPECT_TRUE(answers_[0].empty());
}

TEST_F(PeerModexTest, AtMostMaxLinksAreOpenAndOnlyIdleOnesMakeRoom) {
    start(1);
    hosts_[1].answer = false;
    ASSERT_TRUE(peers_[0]->ask(1, 1, 1));
    // The only link waits for an answer: node 2 is asked through the hub.
    EXPECT_FALSE(peers_[0]->ask(2, 2, 2));
    ASSERT_TRUE(runUntil([&] { return hosts_[1].unanswered.size() == 1; }));
    hosts_[1].unanswered[0](0, "data of 1");
    ASSERT_TRUE(runUntil([&] { return answers_[0].size() == 1; }));
    // Now idle, it gives way.
    ASSERT_TRUE(peers_[0]->ask(2, 3, 2));
    EXPECT_EQ(peers_[0]->openLinks(), 1u);
    ASSERT_TRUE(runUntil([&] { return answers_[0].size() == 2; }));
    EXPECT_EQ(answers_[0][3].data, "data of 2");
    EXPECT_TRUE(detoured_[0].empty());
}

TEST_F(PeerModexTest, ALinkFromAnotherStepsSecretIsNeverAnswered) {
    start();
    // A server of another step (another secret) asks node 1's server.
    hub::PeerModex::Settings s;
    s.secret = *wire::decodeSecretHex(wire::generateSecretHex());
    s.nodeIndex = 0;
    s.nodeCount = kNodes;
    std::vector<std::uint64_t> detoured;
    bool answered = false;
    s.onAnswer = [&](std::uint64_t, int, std::string) { answered = true; };
    s.onDetour = [&](std::uint64_t id) { detoured.push_back(id); };
    FakeHost host;
    timeline::ExchangeCounters counted;
    hub::PeerModex other(&loop_, std::move(s), host, counted);
    other.setAddressBook(book_);
    ASSERT_TRUE(other.ask(1, 1, 1));
    ASSERT_TRUE(runUntil([&] { return !detoured.empty(); }));
    EXPECT_FALSE(answered);
    EXPECT_EQ(counted_[1].modexAnswered, 0u);
}

TEST_F(PeerModexTest, ALeavingServerAnswersWhatItHoldsGone) {
    start();
    hosts_[1].answer = false;
    ASSERT_TRUE(peers_[0]->ask(1, 21, 1));
    ASSERT_TRUE(runUntil([&] { return hosts_[1].unanswered.size() == 1; }));
    peers_[1]->leave();
    ASSERT_TRUE(runUntil([&] { return answers_[0].count(21) > 0; }));
    EXPECT_EQ(answers_[0][21].status, hub::kHubRankGone);
    // The PMIx side's late answer goes nowhere; the link is closed.
    hosts_[1].unanswered[0](0, "late");
    ASSERT_TRUE(runUntil([&] { return peers_[0]->openLinks() == 0; }));
    EXPECT_EQ(answers_[0].size(), 1u);
}
