#include "protocol/hub/name_service.hpp"

#include <algorithm>

namespace stepmap::hub {

namespace {

std::size_t weight(const NameEntry &entry) {
    return entry.key.size() + entry.value.size();
}

} // namespace

bool NameService::visible(const NameEntry &entry, const NameLookup &request) const {
    switch (entry.scope) {
    case NameScope::Publisher:
        return entry.rank == request.rank && entry.node == request.node;
    case NameScope::Node:
        return entry.node == request.node;
    case NameScope::Step:
        return !request.nodeOnly || entry.node == request.node;
    }
    return false;
}

bool NameService::answer(const NameLookup &request, bool partialOk, NameAnswer &out) {
    std::vector<std::map<std::string, NameEntry>::iterator> found;
    for (const std::string &key : request.keys) {
        auto it = names_.find(key);
        if (it != names_.end() && visible(it->second, request))
            found.push_back(it);
        else if (!partialOk)
            return false;
    }
    if (found.empty())
        return false;
    out.id = request.id;
    out.node = request.node;
    out.status = NameStatus::Ok;
    for (auto it : found) {
        out.entries.push_back(it->second);
        if (it->second.firstRead) {
            bytes_ -= weight(it->second);
            names_.erase(it);
        }
    }
    return true;
}

NameService::Published NameService::publish(std::vector<NameEntry> entries) {
    Published result;
    std::size_t adding = 0;
    for (std::size_t i = 0; i < entries.size(); ++i) {
        if (entries[i].key.empty()) {
            result.status = NameStatus::Invalid;
            return result;
        }
        const bool twice = std::any_of(entries.begin(), entries.begin() + i,
                                       [&](const auto &e) { return e.key == entries[i].key; });
        if (twice || names_.count(entries[i].key)) {
            result.status = NameStatus::Exists;
            return result;
        }
        adding += weight(entries[i]);
    }
    if (names_.size() + entries.size() > limits_.maxNames || bytes_ + adding > limits_.maxBytes) {
        result.status = NameStatus::TooMany;
        return result;
    }
    for (NameEntry &entry : entries) {
        bytes_ += weight(entry);
        std::string key = entry.key;
        names_.emplace(std::move(key), std::move(entry));
    }
    // Waiting lookups in arrival order: an earlier one may take a
    // first-read name before a later one sees it.
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        NameAnswer done;
        if (answer(*it, false, done)) {
            result.completed.push_back(std::move(done));
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
    return result;
}

std::vector<NameAnswer> NameService::lookup(NameLookup request) {
    std::vector<NameAnswer> out(1);
    out[0].id = request.id;
    out[0].node = request.node;
    if (request.keys.empty() || std::any_of(request.keys.begin(), request.keys.end(),
                                            [](const auto &k) { return k.empty(); })) {
        out[0].status = NameStatus::Invalid;
        return out;
    }
    if (answer(request, !request.wait, out[0]))
        return out;
    if (!request.wait) {
        out[0].status = NameStatus::NotFound;
        return out;
    }
    const auto mine = std::count_if(waiting_.begin(), waiting_.end(),
                                    [&](const NameLookup &w) { return w.node == request.node; });
    if (static_cast<std::size_t>(mine) >= limits_.maxWaitingPerNode) {
        out[0].status = NameStatus::TooMany;
        return out;
    }
    waiting_.push_back(std::move(request));
    return {};
}

NameStatus NameService::unpublish(std::uint32_t rank, const std::vector<std::string> &keys) {
    for (auto it = names_.begin(); it != names_.end();) {
        const bool named =
            keys.empty() || std::find(keys.begin(), keys.end(), it->first) != keys.end();
        if (named && it->second.rank == rank) {
            bytes_ -= weight(it->second);
            it = names_.erase(it);
        } else {
            ++it;
        }
    }
    return NameStatus::Ok;
}

std::vector<NameAnswer> NameService::expire(std::uint64_t nowMs) {
    std::vector<NameAnswer> out;
    for (auto it = waiting_.begin(); it != waiting_.end();) {
        if (it->deadlineMs != 0 && it->deadlineMs <= nowMs) {
            out.push_back(NameAnswer{it->id, it->node, NameStatus::TimedOut, {}});
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
    return out;
}

void NameService::forgetNode(std::uint32_t node) {
    waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(),
                                  [&](const NameLookup &w) { return w.node == node; }),
                   waiting_.end());
}

} // namespace stepmap::hub
