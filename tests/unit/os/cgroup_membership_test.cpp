// Where slurmstepd's cgroups are (os/cgroup_membership.hpp), from the
// kernel's /proc/self/cgroup and /proc/self/mountinfo as cgroup v1, v2 and
// hybrid nodes show them; and moving a process of this test into this
// test's own cgroups (where a cgroup file system is mounted).

#include "os/cgroup_membership.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

using namespace stepmap::os;

namespace {

// A Slurm node with cgroup v1 (cgroup/v1, task/cgroup), as Debian 12's
// slurmd on a v1 host shows it, plus systemd's named and unified ones.
constexpr const char *kV1Mounts =
    "22 1 0:20 / /sys rw,nosuid - sysfs sysfs rw\n"
    "25 22 0:23 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755\n"
    "26 25 0:24 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate\n"
    "27 25 0:25 / /sys/fs/cgroup/systemd rw - cgroup cgroup rw,xattr,name=systemd\n"
    "30 25 0:28 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset\n"
    "31 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n"
    "32 25 0:30 / /sys/fs/cgroup/freezer rw - cgroup cgroup rw,freezer\n"
    "33 25 0:31 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n";

constexpr const char *kV1Self = "12:memory:/slurm/uid_1001/job_7/step_0\n"
                                "6:freezer:/slurm/uid_1001/job_7/step_0\n"
                                "4:cpu,cpuacct:/system.slice/slurmd.service\n"
                                "3:cpuset:/slurm/uid_1001/job_7/step_0\n"
                                "2:devices:/slurm/uid_1001/job_7/step_0\n"
                                "1:name=systemd:/system.slice/slurmd.service\n"
                                "0::/system.slice/slurmd.service\n";

} // namespace

TEST(CgroupPlaces, EveryMountedHierarchyOnceWithTheProcesssPath) {
    auto places = cgroupPlaces(kV1Self, kV1Mounts);
    ASSERT_TRUE(places) << places.error().message;
    // devices is not mounted here: left out.
    const std::vector<CgroupPlace> expected{
        {"/sys/fs/cgroup/memory", "slurm/uid_1001/job_7/step_0"},
        {"/sys/fs/cgroup/freezer", "slurm/uid_1001/job_7/step_0"},
        {"/sys/fs/cgroup/cpu,cpuacct", "system.slice/slurmd.service"},
        {"/sys/fs/cgroup/cpuset", "slurm/uid_1001/job_7/step_0"},
        {"/sys/fs/cgroup/systemd", "system.slice/slurmd.service"},
        {"/sys/fs/cgroup/unified", "system.slice/slurmd.service"},
    };
    EXPECT_EQ(*places, expected);
}

TEST(CgroupPlaces, CgroupV2AndMountsOfPartOfAHierarchy) {
    const struct {
        const char *self, *mounts;
        std::vector<CgroupPlace> expected;
    } cases[] = {
        // cgroup v2 (cgroup/v2): slurmstepd in the step's slurm cgroup.
        {"0::/system.slice/slurmstepd.scope/job_7/step_0/slurm\n",
         "40 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
         {{"/sys/fs/cgroup", "system.slice/slurmstepd.scope/job_7/step_0/slurm"}}},
        // A mount of the hierarchy's part from /slurm (a container's view).
        {"3:cpuset:/slurm/job_7/step_0\n",
         "30 1 0:28 /slurm /cg/cpuset rw - cgroup cgroup rw,cpuset\n",
         {{"/cg/cpuset", "job_7/step_0"}}},
        // The process is at the root of the mounted part.
        {"3:cpuset:/slurm\n",
         "30 1 0:28 /slurm /cg/cpuset rw - cgroup cgroup rw,cpuset\n",
         {{"/cg/cpuset", ""}}},
        // A mount of another part shows nothing of the process's cgroup;
        // nor does /slurmother, which only starts like /slurm.
        {"3:cpuset:/other/step_0\n",
         "30 1 0:28 /slurm /cg/cpuset rw - cgroup cgroup rw,cpuset\n",
         {}},
        {"3:cpuset:/slurmother\n",
         "30 1 0:28 /slurm /cg/cpuset rw - cgroup cgroup rw,cpuset\n",
         {}},
        // A v1 line never matches the v2 mount, nor v2 a v1 one.
        {"3:cpuset:/a\n0::/b\n",
         "40 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
         {{"/sys/fs/cgroup", "b"}}},
        // A mount point with a space, as mountinfo escapes it.
        {"0::/a\n",
         "40 1 0:26 / /mnt/cg\\040two rw - cgroup2 cgroup2 rw\n",
         {{"/mnt/cg two", "a"}}},
        // The same hierarchy mounted twice: the first mount.
        {"0::/a\n",
         "40 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n"
         "41 1 0:26 / /mnt/again rw - cgroup2 cgroup2 rw\n",
         {{"/sys/fs/cgroup", "a"}}},
    };
    for (const auto &c : cases) {
        auto places = cgroupPlaces(c.self, c.mounts);
        ASSERT_TRUE(places) << c.self << places.error().message;
        EXPECT_EQ(*places, c.expected) << c.self << c.mounts;
    }
}

TEST(CgroupPlaces, TextNotInTheKernelsFormatIsAnError) {
    const struct {
        const char *self, *mounts, *error;
    } cases[] = {
        {"cpuset /slurm\n", "",
         "/proc/self/cgroup has a line not in the kernel's format: "
         "'cpuset /slurm'"},
        {"3:cpuset:slurm\n", "",
         "/proc/self/cgroup has a line not in the kernel's format: "
         "'3:cpuset:slurm'"},
        {"0::/a\n", "40 1 0:26 / /sys/fs/cgroup rw cgroup2\n",
         "/proc/self/mountinfo has a line not in the kernel's format: "
         "'40 1 0:26 / /sys/fs/cgroup rw cgroup2'"},
    };
    for (const auto &c : cases) {
        auto places = cgroupPlaces(c.self, c.mounts);
        ASSERT_FALSE(places) << c.self;
        EXPECT_EQ(places.error().message, c.error);
    }
}

// Moving a child of this test into this test's own cgroups (where it
// already is) must succeed where cgroup files are writable (root), and
// leave the child where this process is.
TEST(MoveIntoOwnCgroups, AChildEndsInThisProcesssCgroups) {
    if (getuid() != 0)
        GTEST_SKIP() << "writing cgroup.procs needs root";
    pid_t child = fork();
    if (child == 0) {
        for (;;)
            pause();
    }
    auto moved = moveIntoOwnCgroups(child);
    auto read = [](const std::string &path) {
        std::ifstream in(path);
        std::ostringstream text;
        text << in.rdbuf();
        return text.str();
    };
    const std::string mine = read("/proc/self/cgroup");
    const std::string its = read("/proc/" + std::to_string(child) + "/cgroup");
    kill(child, SIGKILL);
    waitpid(child, nullptr, 0);
    ASSERT_TRUE(moved) << moved.error().message;
    EXPECT_EQ(its, mine);
    // A process that is gone (reaped) cannot be moved: the error names it.
    auto gone = moveIntoOwnCgroups(child);
    ASSERT_FALSE(gone);
    EXPECT_NE(gone.error().message.find("cannot move process " + std::to_string(child)),
              std::string::npos)
        << gone.error().message;
}
