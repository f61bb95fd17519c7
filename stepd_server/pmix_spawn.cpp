// PmixHost's job-wide side (hub/job_ids.hpp): PMIx_Spawn goes to srun,
// which starts the processes as a new step of the job; connects,
// disconnects and fences that name another step's processes meet through
// the job's hub; and the other steps' namespaces are registered here so
// that their ranks' data is asked of their nodes.

#include "collective_label.hpp"
#include "pmix_host.hpp"
#include "protocol/hub/job_ids.hpp"
#include "protocol/wire/message.hpp"
#include "server_log.hpp"
#include "step_config.hpp"

#include <pmix.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace stepmap::server {

namespace {

// The spawn keys stepmap reads, by the names srun's options use.
struct SpawnKey {
    const char *pmix;
    const char *name;
};
constexpr SpawnKey kSpawnKeys[] = {
    {PMIX_HOST, "host"},         {PMIX_HOSTFILE, "hostfile"},
    {PMIX_ADD_HOST, "add-host"}, {PMIX_ADD_HOSTFILE, "add-hostfile"},
    {PMIX_WDIR, "wdir"},         {PMIX_MAPBY, "map-by"},
    {PMIX_RANKBY, "rank-by"},    {PMIX_BINDTO, "bind-to"},
    {PMIX_PPR, "ppr"},
};

// The keys of info that stepmap reads, as text; the first bad one's
// complaint in `bad`.
void readSpawnKeys(const pmix_info_t info[], size_t ninfo,
                   std::vector<std::pair<std::string, std::string>> &out, std::string &bad) {
    for (size_t i = 0; i < ninfo; ++i) {
        // Seed 000's fifth key; Open MPI passes no MPI_Info key it does not
        // know, so only PMIx programs give it (a bool, or text).
        if (PMIX_CHECK_KEY(&info[i], "parent-mapping")) {
            if (info[i].value.type == PMIX_BOOL)
                out.emplace_back("parent-mapping", info[i].value.data.flag ? "true" : "false");
            else if (info[i].value.type == PMIX_STRING && info[i].value.data.string)
                out.emplace_back(
                    "parent-mapping",
                    std::string(info[i].value.data.string, strnlen(info[i].value.data.string, 16)));
            continue;
        }
        for (const SpawnKey &k : kSpawnKeys) {
            if (!PMIX_CHECK_KEY(&info[i], k.pmix))
                continue;
            if (info[i].value.type != PMIX_STRING || !info[i].value.data.string) {
                if (bad.empty())
                    bad = std::string("the spawn's ") + k.name + " is not a string";
                continue;
            }
            out.emplace_back(
                k.name, std::string(info[i].value.data.string,
                                    strnlen(info[i].value.data.string, wire::kMaxSpawnString)));
        }
    }
}

// argv or env as strings; one more than the wire takes says it is too long.
std::vector<std::string> stringList(char **list) {
    std::vector<std::string> out;
    for (std::size_t i = 0; list && list[i] && i <= wire::kMaxSpawnStrings; ++i)
        out.emplace_back(list[i], strnlen(list[i], wire::kMaxSpawnString + 1));
    return out;
}

// What the hub would refuse to read (and end this server's link for).
std::string beyondTheWire(const wire::SpawnRequestMsg &request) {
    const auto tooLong = [](const std::string &s) { return s.size() > wire::kMaxSpawnString; };
    for (std::size_t a = 0; a < request.apps.size(); ++a) {
        const auto &app = request.apps[a];
        const std::string which = "program " + std::to_string(a) + " of the spawn";
        if (app.argv.size() > wire::kMaxSpawnStrings || app.env.size() > wire::kMaxSpawnStrings ||
            app.info.size() > wire::kMaxSpawnStrings)
            return which + " has more than " + std::to_string(wire::kMaxSpawnStrings) +
                   " arguments, environment lines or keys";
        if (tooLong(app.cmd) || tooLong(app.cwd) ||
            std::any_of(app.argv.begin(), app.argv.end(), tooLong) ||
            std::any_of(app.env.begin(), app.env.end(), tooLong))
            return which + " has a name, directory, argument or environment line over " +
                   std::to_string(wire::kMaxSpawnString) + " bytes";
    }
    if (request.info.size() > wire::kMaxSpawnStrings)
        return "the spawn has more than " + std::to_string(wire::kMaxSpawnStrings) + " keys";
    if (wire::encode(request).size() > wire::kMaxFrameSize / 4)
        return "the spawn's programs, arguments and environments are over " +
               std::to_string(wire::kMaxFrameSize / 4 >> 20) + " MiB";
    return {};
}

} // namespace

bool PmixHost::otherStep(const pmix_proc_t &proc) const {
    return !PMIX_CHECK_NSPACE(proc.nspace, config_.nspace.c_str());
}

bool PmixHost::learnSteps(const std::vector<wire::JobStepEntry> &steps) {
    bool ok = true;
    for (const auto &step : steps) {
        if (step.nspace == config_.nspace || otherSteps_.count(step.nspace))
            continue;
        auto plan = decodePlan(step.plan, PlanLimits{.maxTextBytes = wire::kMaxFrameSize});
        auto registered =
            plan ? registerOtherNamespace(step.nspace, plan.value()) : Expected<void>(plan.error());
        if (!registered) {
            logError("the job's step " + step.nspace + ": " + registered.error().message);
            ok = false;
            continue;
        }
        otherSteps_[step.nspace] = step.index;
        logLine("registered the job's step " + step.nspace + " (" +
                std::to_string(plan->ranks.size()) + " ranks on " +
                std::to_string(plan->nodes.size()) + " nodes)");
    }
    return ok;
}

void PmixHost::joinAcrossSteps(const char *what, const pmix_proc_t procs[], size_t nprocs,
                               bool collect, std::string data, DataReply done) {
    wire::JobBarrierMsg barrier;
    barrier.label = acrossLabel(what, procs, nprocs, barrier.procs);
    barrier.collect = collect;
    barrier.data = std::move(data);
    barrierAcrossSteps(std::move(barrier),
                       [done = std::move(done)](pmix_status_t status, wire::JobBarrierDoneMsg m) {
                           done(status, std::move(m.data));
                       });
}

void PmixHost::barrierAcrossSteps(wire::JobBarrierMsg barrier, AcrossStepsDone done) {
    inbox_.post([this, barrier = std::move(barrier), done = std::move(done)]() mutable {
        if (!collective_) {
            done(PMIX_ERR_UNREACH, {});
            return;
        }
        const std::string label = barrier.label;
        logDebug("job-wide " + label);
        collective_->jobBarrier(std::move(barrier), [this, label, done = std::move(done)](
                                                        std::optional<wire::JobBarrierDoneMsg> m) {
            if (!m) {
                logError(label + " failed: the job's hub is gone");
                done(PMIX_ERR_UNREACH, {});
                return;
            }
            if (!m->ok) {
                logError(label + " refused: " + m->message);
                done(PMIX_ERR_BAD_PARAM, {});
                return;
            }
            const bool learned = learnSteps(m->steps);
            done(learned ? PMIX_SUCCESS : PMIX_ERROR, std::move(*m));
        });
    });
}

// PMIx progress thread.
pmix_status_t PmixHost::spawnUpcall(const pmix_proc_t *proc, const pmix_info_t jobInfo[],
                                    size_t njob, const pmix_app_t apps[], size_t napps,
                                    pmix_spawn_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = current();
        if (!self || !proc || self->otherStep(*proc) ||
            proc->rank >= self->config_.plan.ranks.size() ||
            self->config_.plan.ranks[proc->rank].node != self->config_.nodeIndex)
            return PMIX_ERR_BAD_PARAM;
        const std::uint32_t rank = proc->rank;
        wire::SpawnRequestMsg request;
        std::string bad;
        if (napps == 0 || napps > wire::kMaxSpawnApps)
            bad = "a spawn of " + std::to_string(napps) + " programs (1 to " +
                  std::to_string(wire::kMaxSpawnApps) + ")";
        readSpawnKeys(jobInfo, njob, request.info, bad);
        for (size_t a = 0; a < napps && bad.empty(); ++a) {
            const pmix_app_t &given = apps[a];
            wire::SpawnApp app;
            app.cmd = given.cmd ? std::string(given.cmd, strnlen(given.cmd, wire::kMaxSpawnString))
                                : std::string();
            app.argv = stringList(given.argv);
            app.env = stringList(given.env);
            app.cwd = given.cwd
                          ? std::string(given.cwd, strnlen(given.cwd, wire::kMaxSpawnString + 1))
                          : std::string();
            app.maxprocs = given.maxprocs > 0 ? static_cast<std::uint32_t>(given.maxprocs) : 0;
            readSpawnKeys(given.info, given.ninfo, app.info, bad);
            if (app.cmd.empty() && bad.empty())
                bad = "program " + std::to_string(a) + " of the spawn is not named";
            if (app.maxprocs == 0 && bad.empty())
                bad = "program " + std::to_string(a) + " of the spawn asks for no processes " +
                      "(maxprocs " + std::to_string(given.maxprocs) + ")";
            request.apps.push_back(std::move(app));
        }
        if (bad.empty())
            bad = beyondTheWire(request);
        if (!bad.empty()) {
            logError("rank " + std::to_string(rank) + ": spawn refused: " + bad);
            self->inbox_.post([self, rank, bad] {
                if (self->collective_)
                    self->collective_->notice(rank, "spawn refused: " + bad);
            });
            return PMIX_ERR_BAD_PARAM; // answered at once, no callback
        }
        request.rank = hub::jobWide(self->config_.jobStep, rank);
        request.parentNspace = self->config_.nspace;
        self->inbox_.post([self, rank, request = std::move(request), cbfunc, cbdata]() mutable {
            self->spawn(rank, std::move(request), cbfunc, cbdata);
        });
        return PMIX_SUCCESS;
    } catch (...) {
        return PMIX_ERROR;
    }
}

void PmixHost::spawn(std::uint32_t rank, wire::SpawnRequestMsg request, pmix_spawn_cbfunc_t cbfunc,
                     void *cbdata) {
    std::string what;
    for (const auto &app : request.apps)
        what += (what.empty() ? "" : " + ") + std::to_string(app.maxprocs) + " x " + app.cmd;
    logLine("rank " + std::to_string(rank) + " spawns " + what);
    if (!collective_) {
        cbfunc(PMIX_ERR_UNREACH, nullptr, cbdata);
        return;
    }
    collective_->spawn(std::move(request), [this, rank, what, cbfunc,
                                            cbdata](std::optional<wire::SpawnReplyMsg> reply) {
        if (!reply || !reply->ok) {
            const std::string why = reply ? reply->message : "srun's hub is gone";
            logError("rank " + std::to_string(rank) + ": the spawn of " + what + " failed: " + why);
            cbfunc(PMIX_ERR_JOB_FAILED_TO_LAUNCH, nullptr, cbdata);
            return;
        }
        // Known here before the caller hears of it: its first questions
        // about the children come right after.
        if (!learnSteps({{reply->nspace, reply->index, reply->plan}})) {
            cbfunc(PMIX_ERROR, nullptr, cbdata);
            return;
        }
        logLine("rank " + std::to_string(rank) + " spawned " + what + " as " + reply->nspace);
        pmix_nspace_t ns;
        PMIX_LOAD_NSPACE(ns, reply->nspace.c_str());
        cbfunc(PMIX_SUCCESS, ns, cbdata);
    });
}

} // namespace stepmap::server
