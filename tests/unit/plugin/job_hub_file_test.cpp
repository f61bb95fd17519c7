// The first srun of a job on a host makes its hub the job's; later ones
// find it and take indices of their own; a stale file is replaced; a
// directory others could open is not used (job_hub_file.hpp).

#include "protocol/hub/job_ids.hpp"
#include "srun/job_hub_file.hpp"

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace stepmap::plugin;

namespace {

class JobHubFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        char pattern[] = "/tmp/job-hub-file-test.XXXXXX";
        ASSERT_NE(mkdtemp(pattern), nullptr);
        base_ = pattern;
        setenv("TMPDIR", base_.c_str(), 1);
        dir_ = base_ + "/stepmap-" + std::to_string(getuid());
    }
    void TearDown() override {
        unsetenv("TMPDIR");
        std::filesystem::remove_all(base_);
    }
    std::string base_, dir_;
};

} // namespace

TEST_F(JobHubFileTest, TheFirstSrunsHubIsTheJobsAndLaterOnesTakeIndicesOfTheirOwn) {
    auto first = JobHubFile::claimOrFind(7, "10.0.0.1:4000", "aa");
    ASSERT_TRUE(first.owner) << first.why;
    EXPECT_FALSE(first.attached);
    struct stat st {};
    ASSERT_EQ(stat(dir_.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    ASSERT_EQ(stat((dir_ + "/job-7").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);

    auto second = JobHubFile::claimOrFind(7, "10.0.0.2:5000", "bb");
    ASSERT_TRUE(second.attached) << second.why;
    EXPECT_FALSE(second.owner);
    EXPECT_EQ(second.attached->address, "10.0.0.1:4000");
    EXPECT_EQ(second.attached->secretHex, "aa");
    EXPECT_EQ(second.attached->index, stepmap::hub::kFirstAttached);
    auto third = JobHubFile::claimOrFind(7, "10.0.0.3:6000", "cc");
    ASSERT_TRUE(third.attached);
    EXPECT_EQ(third.attached->index, stepmap::hub::kFirstAttached + 1);

    // Another job has its own.
    auto other = JobHubFile::claimOrFind(8, "10.0.0.4:7000", "dd");
    EXPECT_TRUE(other.owner);

    first.owner.reset(); // its srun ends: the file goes
    EXPECT_FALSE(std::filesystem::exists(dir_ + "/job-7"));
    auto next = JobHubFile::claimOrFind(7, "10.0.0.5:8000", "ee");
    EXPECT_TRUE(next.owner);
}

TEST_F(JobHubFileTest, AFileWhoseSrunIsGoneIsReplaced) {
    ASSERT_EQ(mkdir(dir_.c_str(), 0700), 0);
    {
        std::ofstream stale(dir_ + "/job-7");
        stale << "10.0.0.9:1 zz 2147483646\n"; // no such process
    }
    auto claimed = JobHubFile::claimOrFind(7, "10.0.0.1:4000", "aa");
    ASSERT_TRUE(claimed.owner) << claimed.why;
    auto found = JobHubFile::claimOrFind(7, "10.0.0.2:5000", "bb");
    ASSERT_TRUE(found.attached);
    EXPECT_EQ(found.attached->address, "10.0.0.1:4000");
}

TEST_F(JobHubFileTest, ADirectoryOthersCanOpenIsNotUsed) {
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    ASSERT_EQ(chmod(dir_.c_str(), 0755), 0);
    auto outcome = JobHubFile::claimOrFind(7, "10.0.0.1:4000", "aa");
    EXPECT_FALSE(outcome.owner);
    EXPECT_FALSE(outcome.attached);
    EXPECT_EQ(outcome.why, dir_ + " is not a directory of this user's that only it can open");
}
