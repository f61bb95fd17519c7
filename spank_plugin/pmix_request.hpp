#pragma once

// Whether an srun asks for PMIx, for a site whose stepmap.yaml says
// `serve: pmix`: then stepmap's server serves the step instead of Slurm's
// mpi/pmix. Header-only and libc-only: the entry object (stepmap_entry.cpp,
// no C++ runtime) and the plugin proper read it alike.

#include <dlfcn.h>
#include <string.h>

extern "C" {
#include <slurm/slurm.h>
}

namespace stepmap::plugin {

// An MPI type that is one of Slurm's PMIx plugins ("pmix", "pmix_v4", ...).
inline bool isPmixType(const char *type) {
    return type && strncmp(type, "pmix", 4) == 0 && (type[4] == '\0' || type[4] == '_');
}

// slurm.conf's MpiDefault as the srun process read it (slurm_init runs
// before the SPANK plugins load): libslurm's own configuration, looked up by
// name since the public headers do not declare it; nullptr if not found.
inline const char *slurmMpiDefault() {
    const auto *conf = static_cast<const slurm_conf_t *>(dlsym(RTLD_DEFAULT, "slurm_conf"));
    return conf ? conf->mpi_default : nullptr;
}

// The MPI type srun will use: --mpi's value if given, else SLURM_MPI_TYPE,
// else MpiDefault (srun's own order).
inline const char *effectiveMpiType(const char *commandLine, const char *environment) {
    if (commandLine)
        return commandLine;
    if (environment)
        return environment;
    return slurmMpiDefault();
}

} // namespace stepmap::plugin
