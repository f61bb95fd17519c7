#pragma once

// Whether a step's tasks will run in a mount namespace other than
// slurmstepd's. job_container/tmpfs (namespace/tmpfs from 25.11) gives each
// job a private /tmp and /dev/shm in a namespace of its own, held on an nsfs
// mount at <BasePath>/<node>/<job>/.ns. Without EntireStepInNS (or
// contain_spank) user_init and the server it starts stay outside it, and
// the tasks join it: what the server keeps in /tmp is not in the tasks'
// /tmp, so the server names its directory through /proc/<pid>/root.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace stepmap::plugin {

// Job `job`'s mount namespace ("mnt:[4026532180]", as /proc/PID/ns/mnt
// names it) from /proc/self/mountinfo text: the root of the nsfs mount that
// ends in /<job>/.ns. nullopt when the job has none.
std::optional<std::string> jobNamespace(std::string_view mountinfo, std::uint32_t job);

// True when the job has such a namespace and this process is not in it.
bool tasksInOtherMountNamespace(std::uint32_t job);

} // namespace stepmap::plugin
