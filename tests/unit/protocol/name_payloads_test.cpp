// The name service's payloads decode only as encode() writes them, and
// only with the fields that apply to the operation.

#include "protocol/wire/name_payloads.hpp"

#include <gtest/gtest.h>

using namespace stepmap::wire;

namespace {

NameRequestMsg request(NameOp op) {
    NameRequestMsg m;
    m.id = 9;
    m.op = op;
    m.rank = 3;
    m.keys = {"a", "b"};
    if (op == NameOp::Publish)
        m.values = {"1", "2"};
    return m;
}

} // namespace

TEST(NamePayloads, EachOperationRoundTrips) {
    for (NameOp op : {NameOp::Publish, NameOp::Lookup, NameOp::Unpublish}) {
        NameRequestMsg m = request(op);
        if (op == NameOp::Lookup) {
            m.wait = true;
            m.timeoutSec = 600;
            m.atLeast = 1;
            m.scope = 1;
        }
        if (op == NameOp::Publish) {
            m.firstRead = true;
            m.scope = 2;
        }
        auto back = decodeNameRequest(encode(m));
        ASSERT_TRUE(back) << static_cast<int>(op);
        EXPECT_EQ(encode(*back), encode(m));
        EXPECT_EQ(back->keys, m.keys);
        EXPECT_EQ(back->values, m.values);
    }
}

TEST(NamePayloads, FieldsThatDoNotApplyAreRefused) {
    struct Row {
        const char *what;
        NameRequestMsg m;
    };
    std::vector<Row> rows;
    auto add = [&](const char *what, NameOp op, auto change) {
        NameRequestMsg m = request(op);
        change(m);
        rows.push_back({what, m});
    };
    add("a first-read lookup", NameOp::Lookup, [](auto &m) { m.firstRead = true; });
    add("a lookup for one rank's names", NameOp::Lookup, [](auto &m) { m.scope = 2; });
    add("a waiting publish", NameOp::Publish, [](auto &m) { m.wait = true; });
    add("a publish with a timeout", NameOp::Publish, [](auto &m) { m.timeoutSec = 5; });
    add("an unpublish with a scope", NameOp::Unpublish, [](auto &m) { m.scope = 1; });
    add("an unpublish with a count", NameOp::Unpublish, [](auto &m) { m.atLeast = 1; });
    for (const Row &row : rows)
        EXPECT_FALSE(decodeNameRequest(encode(row.m))) << row.what;
}

TEST(NamePayloads, OnlyASuccessfulReplyCarriesEntries) {
    NameReplyMsg ok{1, 0, {{"k", 2, "v"}}};
    EXPECT_TRUE(decodeNameReply(encode(ok)));
    NameReplyMsg failed{1, 2, {{"k", 2, "v"}}};
    EXPECT_FALSE(decodeNameReply(encode(failed)));
    NameReplyMsg bad{1, 9, {}};
    EXPECT_FALSE(decodeNameReply(encode(bad)));
}
