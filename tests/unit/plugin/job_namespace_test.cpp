// Finding a job's private mount namespace in slurmstepd's mount table, so
// that the node server names its directory where the tasks can reach it.

#include "stepd/job_namespace.hpp"

#include <gtest/gtest.h>

using stepmap::plugin::jobNamespace;

namespace {

// slurmstepd's /proc/self/mountinfo with job_container/tmpfs (as read on
// the test cluster, Slurm 22.05).
const char *kMountinfo =
    "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
    "133 22 8:1 /var/tmp/ns/n1 /var/tmp/ns/n1 rw,relatime - ext4 /dev/sda1 rw\n"
    "158 133 0:4 mnt:[4026532180] /var/tmp/ns/n1/3869/.ns rw - nsfs nsfs rw\n"
    "159 133 0:4 mnt:[4026532199] /var/tmp/ns/n1/13869/.ns rw - nsfs nsfs rw\n"
    "160 22 0:4 net:[4026532201] /run/netns/x rw shared:5 - nsfs nsfs rw\n";

} // namespace

TEST(JobNamespace, FindsTheJobsHolderByItsId) {
    EXPECT_EQ(jobNamespace(kMountinfo, 3869), "mnt:[4026532180]");
    EXPECT_EQ(jobNamespace(kMountinfo, 13869), "mnt:[4026532199]");
}

TEST(JobNamespace, OtherJobsAndOtherNamespacesAreNotIt) {
    EXPECT_EQ(jobNamespace(kMountinfo, 869), std::nullopt) << "suffix, not substring";
    EXPECT_EQ(jobNamespace(kMountinfo, 1), std::nullopt);
    EXPECT_EQ(jobNamespace("", 3869), std::nullopt);
    // A directory of that name that is not an nsfs mount.
    EXPECT_EQ(jobNamespace("40 22 8:1 /x /var/tmp/ns/n1/77/.ns rw - ext4 /dev/sda1 rw\n", 77),
              std::nullopt);
}

TEST(JobNamespace, EscapedMountPointsAndOptionalFields) {
    EXPECT_EQ(jobNamespace("158 133 0:4 mnt:[42] /var/tmp/my\\040ns/5/.ns rw shared:7 master:2 - "
                           "nsfs nsfs rw\n",
                           5),
              "mnt:[42]");
    // Truncated lines are skipped, not read past.
    EXPECT_EQ(jobNamespace("158 133 0:4 mnt:[42] /a/5/.ns rw -", 5), std::nullopt);
}
