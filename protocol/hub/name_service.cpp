#include "protocol/hub/name_service.hpp"

#include <algorithm>

namespace stepmap::hub {

namespace {

std::size_t weight(const NameEntry &entry) {
    return entry.key.size() + entry.value.size();
}

// Whether some rank would see both names.
bool overlap(const NameEntry &a, const NameEntry &b) {
    if (a.scope == NameScope::Step || b.scope == NameScope::Step)
        return true;
    if (a.node != b.node)
        return false;
    if (a.scope == NameScope::Publisher && b.scope == NameScope::Publisher)
        return a.rank == b.rank;
    return true; // a node's name and one of that node's ranks' own
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

NameService::Names::iterator NameService::find(const std::string &key, const NameLookup &request) {
    auto [first, last] = names_.equal_range(key);
    for (auto it = first; it != last; ++it)
        if (visible(it->second, request))
            return it;
    return names_.end();
}

bool NameService::answer(const NameLookup &request, NameAnswer &out) {
    std::vector<Names::iterator> found;
    for (const std::string &key : request.keys)
        if (auto it = find(key, request); it != names_.end())
            found.push_back(it);
    const std::size_t all = request.keys.size();
    const std::size_t enough = !request.wait                                   ? 1
                               : request.atLeast == 0 || request.atLeast > all ? all
                                                                               : request.atLeast;
    if (found.empty() || found.size() < enough)
        return false;
    out.id = request.id;
    out.node = request.node;
    out.status = NameStatus::Ok;
    // The keys are distinct (lookup refuses repeats), and so are the names.
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
        auto [first, last] = names_.equal_range(entries[i].key);
        const bool taken = std::any_of(
            first, last, [&](const auto &named) { return overlap(named.second, entries[i]); });
        if (twice || taken) {
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
        if (answer(*it, done)) {
            result.completed.push_back(std::move(done));
            it = waiting_.erase(it);
        } else {
            ++it;
        }
    }
    return result;
}

std::size_t NameService::waitingBytes(std::uint32_t node) const {
    std::size_t bytes = 0;
    for (const NameLookup &w : waiting_)
        if (w.node == node)
            for (const std::string &key : w.keys)
                bytes += key.size();
    return bytes;
}

std::vector<NameAnswer> NameService::lookup(NameLookup request) {
    std::vector<NameAnswer> out(1);
    out[0].id = request.id;
    out[0].node = request.node;
    std::vector<std::string> sorted = request.keys;
    std::sort(sorted.begin(), sorted.end());
    if (sorted.empty() || sorted.front().empty() ||
        std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        out[0].status = NameStatus::Invalid;
        return out;
    }
    if (answer(request, out[0]))
        return out;
    if (!request.wait) {
        out[0].status = NameStatus::NotFound;
        return out;
    }
    const auto mine = std::count_if(waiting_.begin(), waiting_.end(),
                                    [&](const NameLookup &w) { return w.node == request.node; });
    std::size_t bytes = 0;
    for (const std::string &key : request.keys)
        bytes += key.size();
    if (static_cast<std::size_t>(mine) >= limits_.maxWaitingPerNode ||
        waitingBytes(request.node) + bytes > limits_.maxWaitingBytesPerNode) {
        out[0].status = NameStatus::TooMany;
        return out;
    }
    waiting_.push_back(std::move(request));
    return {};
}

NameStatus NameService::unpublish(std::uint32_t rank, const std::vector<std::string> &keys) {
    std::size_t removed = 0;
    for (auto it = names_.begin(); it != names_.end();) {
        const bool named =
            keys.empty() || std::find(keys.begin(), keys.end(), it->first) != keys.end();
        if (named && it->second.rank == rank) {
            bytes_ -= weight(it->second);
            it = names_.erase(it);
            ++removed;
        } else {
            ++it;
        }
    }
    return keys.empty() || removed > 0 ? NameStatus::Ok : NameStatus::NotFound;
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
