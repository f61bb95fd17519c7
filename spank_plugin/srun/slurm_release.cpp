#include "srun/slurm_release.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

#include "hosts/hostlist.hpp"
#include "srun/job_cpu_ids.hpp"

extern "C" {
#include <slurm/slurm_errno.h>
}

// The one test every difference below is chosen by.
#define STEPMAP_SLURM_AT_LEAST(major, minor)                                                       \
    (SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(major, minor, 0))

namespace stepmap::plugin::slurm_release {

namespace {

#if STEPMAP_SLURM_AT_LEAST(25, 11)
slurm_step_id_t jobStepId(std::uint32_t job, std::uint32_t step = NO_VAL) {
    slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;
    id.job_id = job;
    id.step_id = step;
    return id;
}
#endif

// The pending callback the caller gave; libslurm's callback is a plain C
// function whose argument type differs by release.
void (*gOnPending)(std::uint32_t) = nullptr;

#if STEPMAP_SLURM_AT_LEAST(25, 11)
void pendingTrampoline(slurm_step_id_t *id) {
    if (gOnPending && id)
        gOnPending(id->job_id);
}
#else
void pendingTrampoline(std::uint32_t job) {
    if (gOnPending)
        gOnPending(job);
}
#endif

} // namespace

int lastError() {
    return errno;
}

int killJob(std::uint32_t job, int signal) {
#if STEPMAP_SLURM_AT_LEAST(26, 5)
    return slurm_kill_job(jobStepId(job), static_cast<std::uint16_t>(signal), 0);
#else
    return slurm_kill_job(job, static_cast<std::uint16_t>(signal), 0);
#endif
}

int killJobStep(std::uint32_t job, std::uint32_t step, int signal) {
#if STEPMAP_SLURM_AT_LEAST(25, 11)
    slurm_step_id_t id = jobStepId(job, step);
    return slurm_kill_job_step(&id, static_cast<std::uint16_t>(signal), 0);
#elif STEPMAP_SLURM_AT_LEAST(23, 11)
    return slurm_kill_job_step(job, step, static_cast<std::uint16_t>(signal), 0);
#else
    return slurm_kill_job_step(job, step, static_cast<std::uint16_t>(signal));
#endif
}

int completeJob(std::uint32_t job, std::uint32_t status) {
#if STEPMAP_SLURM_AT_LEAST(25, 11)
    slurm_step_id_t id = jobStepId(job);
    return slurm_complete_job(&id, status);
#else
    return slurm_complete_job(job, status);
#endif
}

std::uint32_t jobIdOf(const resource_allocation_response_msg_t &granted) {
#if STEPMAP_SLURM_AT_LEAST(25, 11)
    return granted.step_id.job_id;
#else
    return granted.job_id;
#endif
}

resource_allocation_response_msg_t *lookupAllocation(std::uint32_t job) {
    resource_allocation_response_msg_t *resp = nullptr;
#if STEPMAP_SLURM_AT_LEAST(26, 5)
    int rc = slurm_allocation_lookup(jobStepId(job), &resp);
#else
    int rc = slurm_allocation_lookup(job, &resp);
#endif
    if (rc != SLURM_SUCCESS) {
        if (resp)
            slurm_free_resource_allocation_response_msg(resp);
        return nullptr;
    }
    return resp;
}

resource_allocation_response_msg_t *allocateBlocking(const job_desc_msg_t &desc,
                                                     void (*onPending)(std::uint32_t job)) {
    gOnPending = onPending;
#if STEPMAP_SLURM_AT_LEAST(26, 5)
    // No interrupt fd: a signal (EINTR) ends the wait, as on older releases.
    resource_allocation_response_msg_t *granted =
        slurm_allocate_resources_blocking(&desc, 0, pendingTrampoline, -1);
#else
    resource_allocation_response_msg_t *granted =
        slurm_allocate_resources_blocking(&desc, 0, pendingTrampoline);
#endif
    const int error = errno;
    gOnPending = nullptr;
    errno = error;
    return granted;
}

int jobNodeReady(std::uint32_t job) {
#if STEPMAP_SLURM_AT_LEAST(26, 5)
    return slurm_job_node_ready(jobStepId(job));
#else
    return slurm_job_node_ready(job);
#endif
}

namespace {
#if STEPMAP_SLURM_AT_LEAST(23, 11)
constexpr const char *kCpusPerTask = "SLURM_CPUS_PER_TASK",
                     *kIgnoredCpusPerTask = "SRUN_CPUS_PER_TASK";
#else
constexpr const char *kCpusPerTask = "SRUN_CPUS_PER_TASK",
                     *kIgnoredCpusPerTask = "SLURM_CPUS_PER_TASK";
#endif
} // namespace

const char *cpusPerTaskVariable() {
    return kCpusPerTask;
}

const char *ignoredCpusPerTaskVariable() {
    return kIgnoredCpusPerTask;
}

slurm_conf_t *loadControllerConf() {
    slurm_conf_t *conf = nullptr;
    if (slurm_load_ctl_conf(0, &conf) != SLURM_SUCCESS)
        return nullptr;
    return conf;
}

void freeControllerConf(slurm_conf_t *conf) {
    if (!conf)
        return;
#if STEPMAP_SLURM_AT_LEAST(26, 5)
    slurm_free_conf(conf);
#else
    slurm_free_ctl_conf(conf);
#endif
}

std::uint16_t allocatedCpus(const node_info_t &node) {
#if STEPMAP_SLURM_AT_LEAST(25, 5)
    return node.alloc_cpus;
#else
    std::uint16_t allocated = 0;
    if (slurm_get_select_nodeinfo(node.select_nodeinfo, SELECT_NODEDATA_SUBCNT,
                                  NODE_STATE_ALLOCATED, &allocated) != SLURM_SUCCESS)
        return 0;
    return allocated;
#endif
}

Expected<std::map<std::string, std::string>> jobCpuIds(std::uint32_t job) {
    if (!job)
        return UserError{"no job id"};
#if STEPMAP_SLURM_AT_LEAST(24, 11)
    auto text = readJobDetail(job);
    if (!text)
        return text.error();
    return parseJobCpuIds(text.value());
#else
    job_info_msg_t *jobs = nullptr;
    if (slurm_load_job(&jobs, job, SHOW_DETAIL) != SLURM_SUCCESS || !jobs)
        return UserError{slurm_strerror(errno)};
    std::unique_ptr<job_info_msg_t, decltype(&slurm_free_job_info_msg)> owner(
        jobs, slurm_free_job_info_msg);
    if (jobs->record_count < 1 || !jobs->job_array[0].nodes)
        return UserError{"Slurm returned no record of job " + std::to_string(job)};
    const job_info_t &info = jobs->job_array[0];
    auto names = expandHostlist(info.nodes);
    if (!names)
        return UserError{"job " + std::to_string(job) + "'s nodes: " + names.error().message};
    std::map<std::string, std::string> byNode;
    for (const std::string &name : names.value()) {
        char buf[4096] = "";
        if (slurm_job_cpus_allocated_str_on_node(buf, sizeof buf, info.job_resrcs, name.c_str()) !=
            SLURM_SUCCESS)
            return UserError{"cannot read the job's CPUs on " + name};
        byNode[name] = buf;
    }
    return byNode;
#endif
}

} // namespace stepmap::plugin::slurm_release
