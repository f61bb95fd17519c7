#pragma once

// After the ready report, the plugin in slurmstepd keeps its end of the
// ready socket to tell the server of a failed task, one line each:
//
//   X <rank> <status>     the task of rank ended with status (1-255)
//   H <forked> <released> the tasks were forked (the last one) and let go
//                         to exec at these times (microseconds since the
//                         epoch): how long they waited for the server,
//                         shown by srun -v
//
// The server reads them strictly: a malformed line is ignored, and more than
// 64 bytes without a line end ends the notices.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace stepmap::ready {

struct TaskExit {
    std::uint32_t rank = 0;
    int status = 0;
};

std::string encodeTaskExit(const TaskExit &exit);
std::optional<TaskExit> decodeTaskExit(const std::string &line);

struct TaskHold {
    std::int64_t forkedUsec = 0;
    std::int64_t releasedUsec = 0;
};

std::string encodeTaskHold(const TaskHold &hold);
// Both times positive, released not before forked and at most an hour after.
std::optional<TaskHold> decodeTaskHold(const std::string &line);

// Splits the byte stream into notices.
class TaskNoticeReader {
public:
    // The well-formed notices among the lines bytes complete; false once
    // too much is pending without a line end (stop reading then).
    // Holds go to holds if given.
    bool feed(std::string_view bytes, std::vector<TaskExit> &out,
              std::vector<TaskHold> *holds = nullptr);

private:
    std::string pending_;
};

} // namespace stepmap::ready
