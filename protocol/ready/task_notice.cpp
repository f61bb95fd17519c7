#include "protocol/ready/task_notice.hpp"

#include <cstdio>

namespace stepmap::ready {

namespace {

constexpr std::size_t kMaxPending = 64;

} // namespace

std::string encodeTaskExit(const TaskExit &exit) {
    return "X " + std::to_string(exit.rank) + " " + std::to_string(exit.status) + "\n";
}

std::optional<TaskExit> decodeTaskExit(const std::string &line) {
    unsigned rank = 0;
    int status = 0;
    char tail = 0;
    if (std::sscanf(line.c_str(), "X %u %d%c", &rank, &status, &tail) != 2)
        return std::nullopt;
    return TaskExit{rank, status};
}

std::string encodeTaskHold(const TaskHold &hold) {
    return "H " + std::to_string(hold.forkedUsec) + " " + std::to_string(hold.releasedUsec) + "\n";
}

std::optional<TaskHold> decodeTaskHold(const std::string &line) {
    long long forked = 0, released = 0;
    char tail = 0;
    constexpr long long kHourUsec = 3600LL * 1000 * 1000;
    if (std::sscanf(line.c_str(), "H %lld %lld%c", &forked, &released, &tail) != 2 || forked <= 0 ||
        released < forked || released - forked > kHourUsec)
        return std::nullopt;
    return TaskHold{forked, released};
}

bool TaskNoticeReader::feed(std::string_view bytes, std::vector<TaskExit> &out,
                            std::vector<TaskHold> *holds) {
    pending_.append(bytes);
    std::size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (auto exit = decodeTaskExit(line))
            out.push_back(*exit);
        else if (auto hold = holds ? decodeTaskHold(line) : std::nullopt)
            holds->push_back(*hold);
    }
    return pending_.size() <= kMaxPending;
}

} // namespace stepmap::ready
