#include "protocol/wire/spawn_payloads.hpp"

#include "protocol/wire/byte_buffer.hpp"
#include "protocol/wire/field_codec.hpp"

namespace stepmap::wire {

using fields::reader;
using fields::text;

namespace {

void putStrings(ByteWriter &w, const std::vector<std::string> &list) {
    w.u32(static_cast<std::uint32_t>(list.size()));
    for (const auto &s : list)
        w.blob(s);
}

bool getStrings(ByteReader &r, std::vector<std::string> &out, std::size_t maxCount,
                std::size_t maxSize) {
    auto count = r.u32();
    if (!count || *count > maxCount)
        return false;
    for (std::uint32_t i = 0; i < *count; ++i) {
        auto s = r.blob(maxSize);
        if (!s)
            return false;
        out.push_back(std::move(*s));
    }
    return true;
}

bool getString(ByteReader &r, std::string &out, std::size_t maxSize) {
    return fields::take(r.blob(maxSize), out);
}

} // namespace

void putInfo(ByteWriter &w, const SpawnInfo &info) {
    w.u32(static_cast<std::uint32_t>(info.size()));
    for (const auto &[key, value] : info) {
        w.blob(key);
        w.blob(value);
    }
}

bool getInfo(ByteReader &r, SpawnInfo &info) {
    auto count = r.u32();
    if (!count || *count > kMaxSpawnStrings)
        return false;
    for (std::uint32_t i = 0; i < *count; ++i) {
        std::string key, value;
        if (!getString(r, key, 511) || !getString(r, value, kMaxSpawnString))
            return false;
        info.emplace_back(std::move(key), std::move(value));
    }
    return true;
}

std::string encode(const SpawnRequestMsg &m) {
    ByteWriter w;
    w.u64(m.id);
    w.u32(m.rank);
    w.blob(m.parentNspace);
    w.u32(static_cast<std::uint32_t>(m.apps.size()));
    for (const auto &app : m.apps) {
        w.blob(app.cmd);
        putStrings(w, app.argv);
        putStrings(w, app.env);
        w.blob(app.cwd);
        w.u32(app.maxprocs);
        putInfo(w, app.info);
    }
    putInfo(w, m.info);
    return text(w);
}

std::optional<SpawnRequestMsg> decodeSpawnRequest(const std::string &s) {
    auto r = reader(s);
    SpawnRequestMsg m;
    if (!fields::get(r, m.id) || !fields::get(r, m.rank) ||
        !getString(r, m.parentNspace, kMaxNspace))
        return std::nullopt;
    auto apps = r.u32();
    if (!apps || *apps == 0 || *apps > kMaxSpawnApps)
        return std::nullopt;
    for (std::uint32_t a = 0; a < *apps; ++a) {
        SpawnApp app;
        if (!getString(r, app.cmd, kMaxSpawnString) ||
            !getStrings(r, app.argv, kMaxSpawnStrings, kMaxSpawnString) ||
            !getStrings(r, app.env, kMaxSpawnStrings, kMaxSpawnString) ||
            !getString(r, app.cwd, kMaxSpawnString) || !fields::get(r, app.maxprocs) ||
            !getInfo(r, app.info) || app.cmd.empty())
            return std::nullopt;
        m.apps.push_back(std::move(app));
    }
    if (!getInfo(r, m.info) || !r.atEnd())
        return std::nullopt;
    return m;
}

std::string encode(const SpawnReplyMsg &m) {
    return fields::encodeFields(m.id, m.ok, m.nspace, m.index, m.plan, m.message);
}

std::optional<SpawnReplyMsg> decodeSpawnReply(const std::string &s) {
    SpawnReplyMsg m;
    if (!fields::decodeFields(s, m.id, m.ok, m.nspace, m.index, m.plan, m.message) ||
        m.nspace.size() > kMaxNspace || m.ok == m.nspace.empty())
        return std::nullopt;
    return m;
}

std::string encode(const GuestStepMsg &m) {
    return fields::encodeFields(m.nspace, m.stepTag, m.plan, m.started);
}

std::optional<GuestStepMsg> decodeGuestStep(const std::string &s) {
    GuestStepMsg m;
    if (!fields::decodeFields(s, m.nspace, m.stepTag, m.plan, m.started) || m.nspace.empty() ||
        m.nspace.size() > kMaxNspace || m.stepTag.size() > 32)
        return std::nullopt;
    return m;
}

std::string encode(const JobBarrierMsg &m) {
    ByteWriter w;
    w.blob(m.label);
    w.u32(static_cast<std::uint32_t>(m.procs.size()));
    for (const auto &[nspace, rank] : m.procs) {
        w.blob(nspace);
        w.u32(rank);
    }
    fields::put(w, m.collect);
    w.blob(m.data);
    fields::put(w, m.assignContextId);
    return text(w);
}

std::optional<JobBarrierMsg> decodeJobBarrier(const std::string &s) {
    auto r = reader(s);
    JobBarrierMsg m;
    if (!getString(r, m.label, 1024))
        return std::nullopt;
    auto count = r.u32();
    if (!count || *count == 0 || *count > kMaxBarrierProcs)
        return std::nullopt;
    for (std::uint32_t i = 0; i < *count; ++i) {
        std::string nspace;
        std::uint32_t rank = 0;
        if (!getString(r, nspace, kMaxNspace) || !fields::get(r, rank))
            return std::nullopt;
        m.procs.emplace_back(std::move(nspace), rank);
    }
    if (!fields::get(r, m.collect) || !fields::get(r, m.data) ||
        !fields::get(r, m.assignContextId) || !r.atEnd() || m.label.empty())
        return std::nullopt;
    return m;
}

std::string encode(const JobBarrierDoneMsg &m) {
    ByteWriter w;
    w.blob(m.label);
    fields::put(w, m.ok);
    w.blob(m.data);
    w.blob(m.message);
    w.u32(static_cast<std::uint32_t>(m.steps.size()));
    for (const auto &step : m.steps) {
        w.blob(step.nspace);
        w.u32(step.index);
        w.blob(step.plan);
    }
    w.u64(m.contextId);
    return text(w);
}

std::optional<JobBarrierDoneMsg> decodeJobBarrierDone(const std::string &s) {
    auto r = reader(s);
    JobBarrierDoneMsg m;
    if (!getString(r, m.label, 1024) || !fields::get(r, m.ok) || !fields::get(r, m.data) ||
        !getString(r, m.message, 4096))
        return std::nullopt;
    auto count = r.u32();
    if (!count || *count > kMaxBarrierSteps)
        return std::nullopt;
    for (std::uint32_t i = 0; i < *count; ++i) {
        JobStepEntry step;
        if (!getString(r, step.nspace, kMaxNspace) || !fields::get(r, step.index) ||
            !fields::get(r, step.plan))
            return std::nullopt;
        m.steps.push_back(std::move(step));
    }
    auto contextId = r.u64();
    if (!contextId || !r.atEnd())
        return std::nullopt;
    m.contextId = *contextId;
    return m;
}

} // namespace stepmap::wire
