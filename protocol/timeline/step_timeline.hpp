#pragma once

// Where a step's start-up and teardown time goes: the moments a node server
// passes on its way (marks, wall-clock microseconds), recorded on the node,
// sent to srun's hub when the server leaves, and read there with srun's own
// marks (critical_path.hpp). Wall clocks of different hosts may differ by
// their NTP error; durations within one node do not depend on it.

#include "base/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace stepmap::timeline {

enum class Mark : std::uint8_t {
    Launched = 1,   // slurmstepd's plugin began starting the server
    Running,        // the server's main() began
    TopologyLoaded, // the step's hardware is known
    PmixRegistered, // PMIx initialised, namespace and local clients registered
    Ready,          // the clients' environment handed to slurmstepd
    Joined,         // welcomed by srun's hub
    FenceEntered,   // index: this node's fence number; all local ranks are in
    FenceDone,      // index: that fence completed here
    Leaving,        // the server stops (its tasks are done)
    ProfileAgreed,  // every node's say on the interconnect profile is in
    TasksForked,    // slurmstepd forked this node's last task, held before exec
    TasksReleased,  // ... and let the tasks exec (the server was ready)
};
inline constexpr std::uint8_t kLastMark = static_cast<std::uint8_t>(Mark::TasksReleased);

struct Event {
    Mark mark = Mark::Running;
    std::uint32_t index = 0;
    std::int64_t usec = 0; // CLOCK_REALTIME

    bool operator==(const Event &) const = default;
};

// Microseconds since the epoch, now.
std::int64_t nowUsec();

// A node server's marks, bounded: fences beyond kMaxFences are not
// recorded (a long job fences often; its start is what is measured).
class Recorder {
public:
    static constexpr std::uint32_t kMaxFences = 16;
    // Every other mark once, each recorded fence twice (in, done): the
    // last mark (Leaving) must still fit after the fences.
    static constexpr std::size_t kMaxEvents = (kLastMark - 2) + 2 * kMaxFences;

    void record(Mark mark, std::uint32_t index = 0) { record(mark, index, nowUsec()); }
    void record(Mark mark, std::uint32_t index, std::int64_t usec);
    const std::vector<Event> &events() const { return events_; }

private:
    std::vector<Event> events_;
};

// The wire form (a Timeline frame's payload) and its strict inverse. srun
// reads it from the network, and every number in it drives srun's work at
// exit (critical_path.hpp loops over the fences): anything a Recorder cannot
// have written is refused, with the reason: unknown marks, a fence index of
// Recorder::kMaxFences or more, an index on a mark that has none, more than
// Recorder::kMaxEvents events, a time past 2^62 us, trailing bytes.
std::string encodeEvents(const std::vector<Event> &events);
Expected<std::vector<Event>> decodeEvents(const std::string &payload);

} // namespace stepmap::timeline
