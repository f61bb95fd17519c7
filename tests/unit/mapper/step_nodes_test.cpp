// How a step's nodes are chosen inside a job for srun's -N, -w and -x, and
// what a placement asks of Slurm's scheduler when srun has no allocation.

#include "hosts/host_list.hpp"
#include "hosts/step_nodes.hpp"
#include "request/allocation_shape.hpp"
#include "request/map_policy.hpp"

#include <gtest/gtest.h>

using namespace stepmap;

namespace {

Allocation fourNodes() {
    Allocation a;
    for (const char *name : {"n1", "n2", "n3", "n4"})
        a.nodes.push_back({name, 2, nullptr});
    return a;
}

std::vector<std::string> names(const Allocation &a) {
    std::vector<std::string> out;
    for (const auto &n : a.nodes)
        out.push_back(n.name);
    return out;
}

using Names = std::vector<std::string>;

} // namespace

TEST(NodeCount, SrunForms) {
    EXPECT_EQ(parseNodeCount("-N", "2").value(), (NodeCount{2, 2}));
    EXPECT_EQ(parseNodeCount("-N", "2-3").value(), (NodeCount{2, 3}));
    EXPECT_EQ(parseNodeCount("--nodes", "2-").value(), (NodeCount{2, std::nullopt}));
    for (const char *bad : {"", "0", "x", "3-2", "-2", "2-x"}) {
        auto r = parseNodeCount("--nodes", bad);
        ASSERT_FALSE(r) << bad;
        EXPECT_NE(r.error().message.find("--nodes '"), std::string::npos) << r.error().message;
    }
}

TEST(StepNodes, CountTakesTheFirstNodesOfTheJob) {
    StepNodeRequest req;
    req.count = NodeCount{2, 2};
    EXPECT_EQ(names(selectStepNodes(fourNodes(), req).value()), (Names{"n1", "n2"}));
}

TEST(StepNodes, NodelistNamesExactlyThoseInTheJobsOrder) {
    StepNodeRequest req;
    req.include = {"n4", "n3"};
    EXPECT_EQ(names(selectStepNodes(fourNodes(), req).value()), (Names{"n3", "n4"}));
}

TEST(StepNodes, NodelistFirstThenOthersUpToTheCount) {
    StepNodeRequest req;
    req.include = {"n4"};
    req.count = NodeCount{3, 3};
    EXPECT_EQ(names(selectStepNodes(fourNodes(), req).value()), (Names{"n1", "n2", "n4"}));
}

TEST(StepNodes, ExcludeRemovesNodes) {
    StepNodeRequest req;
    req.exclude = {"n1", "n3"};
    EXPECT_EQ(names(selectStepNodes(fourNodes(), req).value()), (Names{"n2", "n4"}));
    req.count = NodeCount{1, 1};
    EXPECT_EQ(names(selectStepNodes(fourNodes(), req).value()), (Names{"n2"}));
}

TEST(StepNodes, ErrorsNameTheOptionAndNode) {
    StepNodeRequest outside;
    outside.include = {"n9"};
    outside.includeOption = "--nodelist";
    auto r = selectStepNodes(fourNodes(), outside);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message, "--nodelist names node 'n9', which is not in the job's allocation "
                                 "(n1,n2,n3,n4); name nodes of the allocation, or drop --nodelist");

    StepNodeRequest tooMany;
    tooMany.count = NodeCount{5, 5};
    r = selectStepNodes(fourNodes(), tooMany);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              "-N asks for 5 nodes, but the job's allocation has only 4; ask for fewer nodes");

    StepNodeRequest both;
    both.include = {"n2"};
    both.exclude = {"n2"};
    r = selectStepNodes(fourNodes(), both);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("named by both -w and -x"), std::string::npos);

    StepNodeRequest all;
    all.exclude = {"n1", "n2", "n3", "n4"};
    r = selectStepNodes(fourNodes(), all);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("-x excludes every node"), std::string::npos);
}

TEST(AllocationShape, MapByNodeSpreadsAndPprNodeFixesTheNodes) {
    PlanRequest req;
    req.np = 4;
    req.map = parseMapBy("node").value();
    auto shape = allocationShapeFor(req).value();
    EXPECT_TRUE(shape.spread);
    EXPECT_EQ(shape.tasks, 4);
    EXPECT_FALSE(shape.nodes);

    req.map = parseMapBy("ppr:2:node").value();
    req.np = 5;
    shape = allocationShapeFor(req).value();
    EXPECT_FALSE(shape.spread);
    EXPECT_EQ(shape.nodes, 3);
    EXPECT_EQ(shape.tasksPerNode, 2);

    req.map = parseMapBy("slot:PE=2").value();
    shape = allocationShapeFor(req).value();
    EXPECT_EQ(shape.cpusPerTask, 2);
    EXPECT_FALSE(shape.spread);
}

TEST(AllocationShape, OnlyNodesTheUserNamedAreNamed) {
    PlanRequest req;
    req.host = parseHostOption("n3:2,n4,n3").value();
    auto shape = allocationShapeFor(req).value();
    EXPECT_EQ(shape.namedNodes, (Names{"n3", "n4"}));
    EXPECT_EQ(shape.namedBy, "--host");

    // "n3:2,n4,n3" puts 3 processes on n3: it needs 3 CPUs there.
    EXPECT_EQ(shape.processesPerNamedNode, 3);

    PlanRequest excluding;
    excluding.host = parseHostOption("!^n1").value();
    EXPECT_TRUE(allocationShapeFor(excluding).value().namedNodes.empty());
    EXPECT_EQ(allocationShapeFor(excluding).value().excludedNodes, (Names{"n1"}));

    PlanRequest relative;
    relative.host = parseHostOption("+n1").value();
    auto r = allocationShapeFor(relative);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("relative to an allocation, and srun has none yet"),
              std::string::npos);
}

TEST(AllocationShape, OversubscribeAndOverbookOvercommit) {
    PlanRequest req;
    req.map = parseMapBy("slot:OVERSUBSCRIBE").value();
    EXPECT_TRUE(allocationShapeFor(req).value().overcommit);
    PlanRequest overbook;
    overbook.overbook = true;
    EXPECT_TRUE(allocationShapeFor(overbook).value().overcommit);
    EXPECT_FALSE(allocationShapeFor(PlanRequest{}).value().overcommit);
}
