// PmixHost's upcalls for name publishing (PMIx_Publish, _Lookup,
// _Unpublish: MPI_Publish_name, MPI_Lookup_name and the ports through which
// MPI_Comm_accept and MPI_Comm_connect meet) and for PMIx_Connect and
// _Disconnect (across steps: pmix_spawn.cpp). The names live in srun's hub
// (protocol/hub/name_service.hpp); values travel packed by PMIx itself, so
// any type a rank publishes comes back as it was.

#include "collective_label.hpp"
#include "pmix_host.hpp"
#include "protocol/hub/job_ids.hpp"
#include "protocol/hub/name_service.hpp"
#include "server_log.hpp"
#include "step_config.hpp"

#include <pmix.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace stepmap::server {

namespace {

using hub::NameScope;
using hub::NameStatus;

pmix_status_t toPmix(const std::optional<wire::NameReplyMsg> &reply) {
    if (!reply)
        return PMIX_ERR_UNREACH; // srun's hub is gone: the step is ending
    switch (static_cast<NameStatus>(reply->status)) {
    case NameStatus::Ok:
        return PMIX_SUCCESS;
    case NameStatus::Exists:
        return PMIX_EXISTS;
    case NameStatus::NotFound:
        return PMIX_ERR_NOT_FOUND;
    case NameStatus::TimedOut:
        return PMIX_ERR_TIMEOUT;
    case NameStatus::TooMany:
        return PMIX_ERR_OUT_OF_RESOURCE;
    case NameStatus::Invalid:
        return PMIX_ERR_BAD_PARAM;
    }
    return PMIX_ERROR;
}

std::optional<std::string> packValue(const pmix_value_t *value) {
    pmix_data_buffer_t buffer;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    if (PMIx_Data_pack(nullptr, &buffer, const_cast<pmix_value_t *>(value), 1, PMIX_VALUE) !=
        PMIX_SUCCESS) {
        PMIX_DATA_BUFFER_DESTRUCT(&buffer);
        return std::nullopt;
    }
    char *bytes = nullptr;
    size_t size = 0;
    PMIX_DATA_BUFFER_UNLOAD(&buffer, bytes, size);
    std::string out(bytes ? bytes : "", bytes ? size : 0);
    std::free(bytes);
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    return out;
}

bool unpackValue(const std::string &bytes, pmix_value_t *out) {
    if (bytes.empty())
        return false;
    pmix_data_buffer_t buffer;
    PMIX_DATA_BUFFER_CONSTRUCT(&buffer);
    char *copy = static_cast<char *>(std::malloc(bytes.size()));
    if (!copy)
        return false;
    std::memcpy(copy, bytes.data(), bytes.size());
    PMIX_DATA_BUFFER_LOAD(&buffer, copy, bytes.size());
    int32_t count = 1;
    const pmix_status_t rc = PMIx_Data_unpack(nullptr, &buffer, out, &count, PMIX_VALUE);
    PMIX_DATA_BUFFER_DESTRUCT(&buffer);
    return rc == PMIX_SUCCESS && count == 1;
}

// Directives PMIx or the caller add to a publish; everything else is data.
bool isDirective(const pmix_info_t &info) {
    for (const char *key :
         {PMIX_RANGE, PMIX_PERSISTENCE, PMIX_USERID, PMIX_GRPID, PMIX_TIMEOUT, PMIX_WAIT})
        if (PMIX_CHECK_KEY(&info, key))
            return true;
    return false;
}

pmix_data_range_t rangeOf(const pmix_info_t info[], size_t ninfo) {
    for (size_t i = 0; i < ninfo; ++i)
        if (PMIX_CHECK_KEY(&info[i], PMIX_RANGE) && info[i].value.type == PMIX_DATA_RANGE)
            return info[i].value.data.range;
    return PMIX_RANGE_SESSION;
}

// keys as strings; nothing when there are more than a request may carry.
std::optional<std::vector<std::string>> keyList(char **keys) {
    std::vector<std::string> out;
    for (std::size_t i = 0; keys && keys[i]; ++i) {
        if (i == wire::kMaxNamesPerRequest)
            return std::nullopt;
        out.emplace_back(keys[i]);
    }
    return out;
}

// What a publish, unpublish or lookup upcall gives PMIx back.
StepCollective::NameDone statusReply(pmix_op_cbfunc_t cbfunc, void *cbdata) {
    return [cbfunc, cbdata](std::optional<wire::NameReplyMsg> reply) {
        if (cbfunc)
            cbfunc(toPmix(reply), cbdata);
    };
}

// Who a connect or disconnect joins, to tell its barrier from others over
// the same nodes: the sorted ranks ("*": all), hashed when long.
std::string processLabel(const char *what, const pmix_proc_t procs[], size_t nprocs) {
    std::vector<pmix_rank_t> ranks;
    for (size_t i = 0; i < nprocs; ++i)
        ranks.push_back(procs[i].rank);
    std::sort(ranks.begin(), ranks.end());
    ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
    std::string list;
    for (pmix_rank_t r : ranks) {
        if (!list.empty())
            list += ",";
        list += r == PMIX_RANK_WILDCARD ? std::string("*") : std::to_string(r);
    }
    return collectiveLabel(what, list, ranks.size(), "ranks");
}

bool keysFit(const std::vector<std::string> &keys) {
    for (const std::string &key : keys)
        if (key.size() > wire::kMaxNameKey)
            return false;
    return true;
}

} // namespace

bool PmixHost::askNames(const pmix_proc_t *proc, wire::NameRequestMsg request,
                        StepCollective::NameDone done) {
    if (!proc || !PMIX_CHECK_NSPACE(proc->nspace, config_.nspace.c_str()) ||
        proc->rank >= config_.plan.ranks.size() ||
        config_.plan.ranks[proc->rank].node != config_.nodeIndex)
        return false;
    request.rank = hub::jobWide(config_.jobStep, proc->rank);
    inbox_.post([this, request = std::move(request), done = std::move(done)]() mutable {
        if (!collective_) {
            done(std::nullopt);
            return;
        }
        collective_->names(std::move(request), std::move(done));
    });
    return true;
}

// PMIx progress thread.
pmix_status_t PmixHost::publishUpcall(const pmix_proc_t *proc, const pmix_info_t info[],
                                      size_t ninfo, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = current();
        if (!self)
            return PMIX_ERR_NOT_AVAILABLE;
        wire::NameRequestMsg request;
        request.op = wire::NameOp::Publish;
        pmix_persistence_t persistence = PMIX_PERSIST_SESSION;
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_PERSISTENCE) && info[i].value.type == PMIX_PERSIST)
                persistence = info[i].value.data.persist;
            if (isDirective(info[i]))
                continue;
            auto packed = packValue(&info[i].value);
            const std::string key(info[i].key, strnlen(info[i].key, PMIX_MAX_KEYLEN));
            if (!packed || packed->size() > wire::kMaxNameValue ||
                request.keys.size() >= wire::kMaxNamesPerRequest) {
                logError("refused to publish '" + key + "': its value cannot be packed or is " +
                         "over " + std::to_string(wire::kMaxNameValue) + " bytes");
                return PMIX_ERR_BAD_PARAM;
            }
            request.keys.push_back(key);
            request.values.push_back(std::move(*packed));
        }
        if (request.keys.empty())
            return PMIX_ERR_BAD_PARAM;
        std::size_t total = 0;
        for (std::size_t i = 0; i < request.keys.size(); ++i)
            total += request.keys[i].size() + request.values[i].size();
        if (total > hub::NameService::Limits{}.maxBytes) {
            logError("refused to publish " + std::to_string(request.keys.size()) + " names of " +
                     std::to_string(total) + " bytes: a step holds " +
                     std::to_string(hub::NameService::Limits{}.maxBytes) + " bytes of names");
            return PMIX_ERR_OUT_OF_RESOURCE;
        }
        const pmix_data_range_t range = rangeOf(info, ninfo);
        request.scope =
            static_cast<std::uint8_t>(range == PMIX_RANGE_PROC_LOCAL ? NameScope::Publisher
                                      : range == PMIX_RANGE_LOCAL    ? NameScope::Node
                                                                     : NameScope::Step);
        request.firstRead = persistence == PMIX_PERSIST_FIRST_READ;
        return self->askNames(proc, std::move(request), statusReply(cbfunc, cbdata))
                   ? PMIX_SUCCESS
                   : PMIX_ERR_BAD_PARAM;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// PMIx progress thread.
pmix_status_t PmixHost::lookupUpcall(const pmix_proc_t *proc, char **keys, const pmix_info_t info[],
                                     size_t ninfo, pmix_lookup_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = current();
        if (!self)
            return PMIX_ERR_NOT_AVAILABLE;
        wire::NameRequestMsg request;
        request.op = wire::NameOp::Lookup;
        auto named = keyList(keys);
        if (!named || named->empty() || !keysFit(*named))
            return PMIX_ERR_BAD_PARAM;
        request.keys = std::move(*named);
        for (size_t i = 0; i < ninfo; ++i) {
            if (PMIX_CHECK_KEY(&info[i], PMIX_WAIT)) {
                // PMIx defines an int, the number of keys to wait for (0:
                // all); Open MPI passes a bool.
                if (info[i].value.type == PMIX_BOOL) {
                    request.wait = info[i].value.data.flag;
                } else if (info[i].value.type == PMIX_INT && info[i].value.data.integer >= 0) {
                    request.wait = true;
                    request.atLeast = static_cast<std::uint32_t>(info[i].value.data.integer);
                } else {
                    request.wait = true;
                }
            }
            if (PMIX_CHECK_KEY(&info[i], PMIX_TIMEOUT) && info[i].value.type == PMIX_INT &&
                info[i].value.data.integer > 0)
                request.timeoutSec = static_cast<std::uint32_t>(info[i].value.data.integer);
        }
        // A lookup searches the whole step; what each name was published
        // for still decides who sees it. Its PMIX_RANGE is not read: Open
        // MPI 5.0's MPI_Lookup_name passes an uninitialised one when the
        // program gives no "range" info, which read as LOCAL would hide
        // every other node's names (seen in CI: a port never found).
        request.scope = 0;
        const std::string nspace = self->config_.nspace;
        const bool asked = self->askNames(
            proc, std::move(request),
            [cbfunc, cbdata, nspace](std::optional<wire::NameReplyMsg> reply) {
                pmix_status_t status = toPmix(reply);
                if (!cbfunc)
                    return;
                if (status != PMIX_SUCCESS || reply->entries.empty()) {
                    cbfunc(status == PMIX_SUCCESS ? PMIX_ERR_NOT_FOUND : status, nullptr, 0,
                           cbdata);
                    return;
                }
                const size_t n = reply->entries.size();
                pmix_pdata_t *data = nullptr;
                PMIX_PDATA_CREATE(data, n);
                for (size_t i = 0; i < n; ++i) {
                    const auto &e = reply->entries[i];
                    PMIX_LOAD_PROCID(&data[i].proc,
                                     e.nspace.empty() ? nspace.c_str() : e.nspace.c_str(), e.rank);
                    PMIX_LOAD_KEY(data[i].key, e.key.c_str());
                    if (!unpackValue(e.value, &data[i].value))
                        status = PMIX_ERR_UNPACK_FAILURE;
                }
                cbfunc(status, status == PMIX_SUCCESS ? data : nullptr,
                       status == PMIX_SUCCESS ? n : 0, cbdata);
                PMIX_PDATA_FREE(data, n);
            });
        return asked ? PMIX_SUCCESS : PMIX_ERR_BAD_PARAM;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// PMIx progress thread.
pmix_status_t PmixHost::unpublishUpcall(const pmix_proc_t *proc, char **keys, const pmix_info_t[],
                                        size_t, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = current();
        if (!self)
            return PMIX_ERR_NOT_AVAILABLE;
        wire::NameRequestMsg request;
        request.op = wire::NameOp::Unpublish;
        auto named = keyList(keys); // none: every name the rank published
        if (!named || !keysFit(*named))
            return PMIX_ERR_BAD_PARAM;
        request.keys = std::move(*named);
        return self->askNames(proc, std::move(request), statusReply(cbfunc, cbdata))
                   ? PMIX_SUCCESS
                   : PMIX_ERR_BAD_PARAM;
    } catch (...) {
        return PMIX_ERROR;
    }
}

pmix_status_t PmixHost::joinProcesses(const char *what, const pmix_proc_t procs[], size_t nprocs,
                                      pmix_op_cbfunc_t cbfunc, void *cbdata) {
    for (size_t i = 0; i < nprocs; ++i)
        if (otherStep(procs[i])) {
            // A spawner and its children, or two steps that met by name.
            joinAcrossSteps(what, procs, nprocs, false, {},
                            [cbfunc, cbdata](pmix_status_t status, std::string) {
                                if (cbfunc)
                                    cbfunc(status, cbdata);
                            });
            return PMIX_SUCCESS;
        }
    std::string label = processLabel(what, procs, nprocs);
    inbox_.post([this, label = std::move(label), ranks = ranksNamed(procs, nprocs), cbfunc,
                 cbdata]() mutable {
        auto nodes = participants(ranks);
        if (!collective_) {
            if (cbfunc)
                cbfunc(PMIX_ERR_UNREACH, cbdata);
            return;
        }
        // Every participating node's server is asked once, as for a fence;
        // the processes are connected when all have been.
        collective_->barrier(label, std::move(nodes),
                             [cbfunc, cbdata](pmix_status_t status, std::string) {
                                 if (cbfunc)
                                     cbfunc(status, cbdata);
                             });
    });
    return PMIX_SUCCESS;
}

// PMIx progress thread.
pmix_status_t PmixHost::connectUpcall(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[],
                                      size_t, pmix_op_cbfunc_t cbfunc, void *cbdata) {
    try {
        PmixHost *self = current();
        return self ? self->joinProcesses("connect", procs, nprocs, cbfunc, cbdata)
                    : PMIX_ERR_NOT_AVAILABLE;
    } catch (...) {
        return PMIX_ERROR;
    }
}

// PMIx progress thread.
pmix_status_t PmixHost::disconnectUpcall(const pmix_proc_t procs[], size_t nprocs,
                                         const pmix_info_t[], size_t, pmix_op_cbfunc_t cbfunc,
                                         void *cbdata) {
    try {
        PmixHost *self = current();
        return self ? self->joinProcesses("disconnect", procs, nprocs, cbfunc, cbdata)
                    : PMIX_ERR_NOT_AVAILABLE;
    } catch (...) {
        return PMIX_ERROR;
    }
}

} // namespace stepmap::server
