#pragma once

// How the sruns of one job on one host find the job's hub (protocol/hub/
// job_ids.hpp), so that their steps' ranks meet by name (MPI_Publish_name,
// MPI_Lookup_name) and connect (MPI_Comm_accept/connect) across sruns, as
// the ranks of one mpirun do: the first served srun of the job publishes
// its hub's address and secret in a file only its user can read
// ($TMPDIR or /tmp, stepmap-<uid>/job-<id>); a later one finds it there
// and its step joins that hub as a guest under an index of its own. The
// file goes when its srun ends (or is found stale: its srun is gone).
// Without a usable directory (not the user's own, or open to others)
// nothing is shared and each srun's step keeps its names to itself.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace stepmap::plugin {

class JobHubFile {
public:
    struct Attached {
        std::string address; // "HOST:PORT"
        std::string secretHex;
        std::uint32_t index = 0;
    };
    // This srun's hub (address, secret) becomes the job's, and the file
    // says so while the returned owner lives; or another srun's live one is
    // the job's (attached); or neither (why, for srun -v).
    struct Outcome {
        std::unique_ptr<JobHubFile> owner;
        std::optional<Attached> attached;
        std::string why;
    };
    static Outcome claimOrFind(std::uint32_t jobId, const std::string &address,
                               const std::string &secretHex);
    ~JobHubFile();
    JobHubFile(const JobHubFile &) = delete;
    JobHubFile &operator=(const JobHubFile &) = delete;

private:
    JobHubFile(std::string path, std::string contents)
        : path_(std::move(path)), contents_(std::move(contents)) {}
    std::string path_, contents_;
};

} // namespace stepmap::plugin
