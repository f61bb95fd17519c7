// The job's CPU ids per node as srun reads them from scontrol on Slurm 24.11
// and later (the library call is gone there).

#include "srun/job_cpu_ids.hpp"

#include <gtest/gtest.h>

using stepmap::plugin::parseJobCpuIds;

TEST(JobCpuIds, GroupsOfAlikeNodesExpandToEachNode) {
    // scontrol -d -o show job: one line, the detail groups inside it.
    auto ids = parseJobCpuIds(
        "JobId=12 JobName=x UserId=smuser(1001) NumNodes=3 NumCPUs=5 ReqNodeList=(null) "
        "ExcNodeList=(null) NodeList=n[1-3] BatchHost=n1 Nodes=n[1-2] CPU_IDs=0-1 Mem=0 "
        "GRES= Nodes=n3 CPU_IDs=1 Mem=0 GRES= MinCPUsNode=1 Command=(null)\n");
    ASSERT_TRUE(ids) << ids.error().message;
    ASSERT_EQ(ids->size(), 3u);
    EXPECT_EQ(ids->at("n1"), "0-1");
    EXPECT_EQ(ids->at("n2"), "0-1");
    EXPECT_EQ(ids->at("n3"), "1");
}

TEST(JobCpuIds, MultiLineDetailAsWithoutOneLiner) {
    auto ids = parseJobCpuIds("   NodeList=n4\n     Nodes=n4 CPU_IDs=0,2-3 Mem=100 GRES=\n");
    ASSERT_TRUE(ids) << ids.error().message;
    EXPECT_EQ(ids->at("n4"), "0,2-3");
}

TEST(JobCpuIds, OtherNodeFieldsAreNotGroups) {
    // NumNodes=, ReqNodes= and a Nodes= not followed by CPU_IDs= are skipped.
    auto ids = parseJobCpuIds("NumNodes=2 ReqNodes=n9 Nodes=n1 CPU_IDs=3 Mem=0");
    ASSERT_TRUE(ids) << ids.error().message;
    EXPECT_EQ(ids->size(), 1u);
    EXPECT_EQ(ids->at("n1"), "3");
}

TEST(JobCpuIds, NoDetailIsAnError) {
    // A pending job (no resources yet) or scontrol without -d.
    auto ids = parseJobCpuIds("JobId=12 JobState=PENDING NodeList=(null)");
    ASSERT_FALSE(ids);
    EXPECT_NE(ids.error().message.find("no Nodes=... CPU_IDs="), std::string::npos);
}

TEST(JobCpuIds, MalformedValuesNameThemselves) {
    auto bad = parseJobCpuIds("Nodes=n1 CPU_IDs=0-1;rm Mem=0");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message.find("CPU_IDs=0-1;rm"), std::string::npos);
    auto badHosts = parseJobCpuIds("Nodes=n[3-1 CPU_IDs=0 Mem=0");
    ASSERT_FALSE(badHosts);
    EXPECT_NE(badHosts.error().message.find("Nodes=n[3-1"), std::string::npos);
}
