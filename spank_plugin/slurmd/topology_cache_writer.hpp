#pragma once

// slurmd, as root, once when it starts (and on each reconfigure): has the
// server write the node's topology cache (topology/node_cache.hpp) in the
// site's topology_cache directory, so that no step's server discovers the
// machine again. Part of the entry (stepmap.so): libc only, no exceptions;
// nothing of stepmap stays in slurmd (the server does the work, in a child
// process, bounded in time). A failure is logged and costs nothing else:
// the servers then discover the machine as before.

namespace stepmap::plugin {

// ac/av: plugstack.conf's arguments (server=, topology_cache=).
void writeTopologyCacheFromSlurmd(int ac, char **av);

} // namespace stepmap::plugin
