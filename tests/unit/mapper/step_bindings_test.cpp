// Bindings resolved on a node against the CPUs the step holds there.

#include "plan/launch_plan.hpp"
#include "plan/step_bindings.hpp"

#include <gtest/gtest.h>

using namespace stepmap;

namespace {

// Two ranks on node 0 bound to CPUs {0,1} and {2,3}; one rank on node 1.
LaunchPlan twoPackages(BindingRequest request) {
    LaunchPlan plan;
    plan.nodes = {{"n1", 4, std::nullopt}, {"n2", 4, std::nullopt}};
    plan.bindings = {{{0, 1}, {0, 1}}, {{2, 3}, {2, 3}}};
    plan.ranks = {{0, 0, 0, 0, 0}, {0, 1, 1, 0, 1}, {1, 0, 0, 0, 0}};
    plan.bindingRequest = request;
    return plan;
}

std::vector<std::uint32_t> cpusOf(const LaunchPlan &plan, std::uint32_t rank) {
    const CpuBinding *b = plan.bindingOf(rank);
    return b ? b->os : std::vector<std::uint32_t>{};
}

} // namespace

TEST(StepBindings, AllInsideTheStepStaysAsPlanned) {
    for (auto request : {BindingRequest::Default, BindingRequest::Objects, BindingRequest::Cpus}) {
        LaunchPlan plan = twoPackages(request);
        const LaunchPlan before = plan;
        auto r = resolveBindingsOnNode(plan, 0, {0, 1, 2, 3});
        ASSERT_TRUE(r);
        EXPECT_EQ(plan, before);
    }
}

TEST(StepBindings, ObjectsNarrowToTheirCpusInsideTheStep) {
    LaunchPlan plan = twoPackages(BindingRequest::Objects);
    auto r = resolveBindingsOnNode(plan, 0, {1, 2});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->narrowed, 2u);
    EXPECT_EQ(cpusOf(plan, 0), (std::vector<std::uint32_t>{1}));
    EXPECT_EQ(cpusOf(plan, 1), (std::vector<std::uint32_t>{2}));
    // The other node's rank is untouched.
    EXPECT_EQ(cpusOf(plan, 2), (std::vector<std::uint32_t>{0, 1}));
}

TEST(StepBindings, DefaultBindingOutsideTheStepLeavesTheRankUnbound) {
    LaunchPlan plan = twoPackages(BindingRequest::Default);
    auto r = resolveBindingsOnNode(plan, 0, {0});
    ASSERT_TRUE(r);
    EXPECT_EQ(r->unbound, 1u);
    EXPECT_EQ(cpusOf(plan, 0), (std::vector<std::uint32_t>{0}));
    EXPECT_EQ(plan.bindingOf(1), nullptr);
}

TEST(StepBindings, RequestedObjectWithNoCpuInTheStepIsAnError) {
    LaunchPlan plan = twoPackages(BindingRequest::Objects);
    auto r = resolveBindingsOnNode(plan, 0, {0});
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message,
              "rank 1 on n1 is bound to CPUs 2-3, but the step holds only CPUs 0 there; "
              "--bind-to names an object with no CPU in the step. Bind to a larger object or "
              "none");
}

TEST(StepBindings, ExactCpusMustAllBeInTheStep) {
    LaunchPlan plan = twoPackages(BindingRequest::Cpus);
    auto r = resolveBindingsOnNode(plan, 0, {0, 1, 2});
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message.find("rank 1 on n1 is bound to CPUs 2-3, but the step holds "
                                     "only CPUs 0-2 there"),
              std::string::npos);
}

TEST(StepBindings, TheRequestTravelsInThePlan) {
    for (auto request : {BindingRequest::Default, BindingRequest::Objects, BindingRequest::Cpus})
        for (bool over : {false, true}) {
            LaunchPlan plan = twoPackages(request);
            plan.oversubscribed = over;
            auto decoded = decodePlan(encodePlan(plan));
            ASSERT_TRUE(decoded) << decoded.error().message;
            EXPECT_EQ(decoded->bindingRequest, request);
            EXPECT_EQ(decoded->oversubscribed, over);
        }
}

TEST(StepBindings, OneRankResolvesAsTheNodeDoes) {
    // task_init resolves only its own rank; the node server all of them.
    for (auto request : {BindingRequest::Default, BindingRequest::Objects}) {
        LaunchPlan node = twoPackages(request);
        ASSERT_TRUE(resolveBindingsOnNode(node, 0, {1, 2}));
        const LaunchPlan planned = twoPackages(request);
        for (std::uint32_t rank : {0u, 1u}) {
            auto one = bindingWithinStep(planned, rank, {1, 2});
            ASSERT_TRUE(one);
            ASSERT_TRUE(one->has_value());
            EXPECT_EQ((*one)->os, cpusOf(node, rank));
        }
    }
    auto unbound = bindingWithinStep(twoPackages(BindingRequest::Default), 1, {0});
    ASSERT_TRUE(unbound);
    EXPECT_FALSE(unbound->has_value());
    EXPECT_FALSE(bindingWithinStep(twoPackages(BindingRequest::Cpus), 1, {0}));
}
