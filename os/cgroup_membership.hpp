#pragma once

// Putting a process into the cgroups this process is in. slurmstepd starts
// a step's node server before Slurm has made the step's cgroups (its
// slurm_spank_init runs first), so root moves the server into slurmstepd's
// own cgroups once they are the step's, before any task is let go. Only
// what the kernel says of this process decides where: its /proc/self/cgroup
// and /proc/self/mountinfo, and cgroup.procs files reached from the
// hierarchy's mount without following a link or leaving its file system.

#include "base/expected.hpp"

#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

namespace stepmap::os {

// One hierarchy this process is in: where it is mounted and the process's
// cgroup below that mount ("" for the mount's own root).
struct CgroupPlace {
    std::string mountPoint;
    std::string relativePath;

    bool operator==(const CgroupPlace &) const = default;
};

// From the texts of /proc/self/cgroup and /proc/self/mountinfo: each
// hierarchy (v1 controllers or named ones, and v2) that is mounted here,
// once. A hierarchy that is not mounted, or whose mount shows another part
// of it, is left out; a line that is not the kernel's format is an error.
Expected<std::vector<CgroupPlace>> cgroupPlaces(std::string_view procCgroup,
                                                std::string_view mountInfo);

// Writes pid into the cgroup.procs of every place of this process. The
// caller guarantees pid names the process meant (the plugin's PidGuard).
Expected<void> moveIntoOwnCgroups(pid_t pid);

} // namespace stepmap::os
