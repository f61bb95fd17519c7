#pragma once

// The site policy file (stepmap.yaml(5)), named by plugstack.conf's
// `config=FILE`: what a site decides for every step stepmap serves. A value
// type; site_file.hpp reads it. Settings left out of the file keep the
// built-in values below. Precedence, highest first: the srun command line,
// the environment (PSI_*, options sbatch/salloc forward), this file, the
// built-in values.

#include <optional>
#include <string>

namespace stepmap::plugin {

// Which steps stepmap serves.
enum class ServedSteps {
    Options, // steps that use stepmap's options or PSI_* variables (built-in)
    Pmix,    // those, and every step that asks for PMIx (--mpi=pmix*,
             // SLURM_MPI_TYPE, MpiDefault): stepmap's server instead of Slurm's
};

enum class LogLevel { Error, Info, Debug };

struct SitePolicy {
    // The file it came from ("" when the site names none).
    std::string path;
    ServedSteps serve = ServedSteps::Options;

    // defaults: placement when the user gives none (checked with the same
    // parsers as the options, so a bad value fails the load).
    std::optional<std::string> mapBy;
    std::optional<std::string> rankBy;
    std::optional<std::string> bindTo;
    std::optional<std::string> modex;  // fence | async | profile
    std::optional<std::string> withFt; // ulfm | none (--with-ft)

    // allow: what users may ask for. With oversubscribe false a plan with
    // more ranks than a node's CPUs (:OVERSUBSCRIBE, -O, overload-allowed)
    // is refused; with overbook false, --overbook / PSI_OVERBOOK.
    bool allowOversubscribe = true;
    bool allowOverbook = true;
    // With user_cpumap true, ParaStation's __PSI_CPUMAP may reorder a node's
    // CPU-slots (psmgmt's allowUserMap); false (built in): it is refused.
    bool allowUserCpuMap = false;

    // limits: refused above these (0: no limit).
    int maxRanksPerNode = 0;
    int maxRanks = 0;

    // The settings plugstack.conf arguments also carry; each may be set in
    // one place only (a key in both is an error naming both).
    std::optional<std::string> profile;       // profile: FILE
    std::optional<std::string> modexPorts;    // modex_ports: BASE-END
    std::optional<int> serverStartTimeoutSec; // timeouts: server_start
    std::optional<int> dmodexTimeoutSec;      // timeouts: direct_modex
    std::optional<std::string> logDir;        // log: dir
    LogLevel logLevel = LogLevel::Info;       // log: level
};

} // namespace stepmap::plugin
