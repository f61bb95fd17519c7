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

bool TaskNoticeReader::feed(std::string_view bytes, std::vector<TaskExit> &out) {
    pending_.append(bytes);
    std::size_t nl;
    while ((nl = pending_.find('\n')) != std::string::npos) {
        std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        if (auto exit = decodeTaskExit(line))
            out.push_back(*exit);
    }
    return pending_.size() <= kMaxPending;
}

} // namespace stepmap::ready
