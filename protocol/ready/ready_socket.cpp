#include "protocol/ready/ready_socket.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>

namespace stepmap::ready {

bool writeReport(int fd, std::string_view text) {
    const char *p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        ssize_t n = write(fd, p, left);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return false;
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    return true;
}

bool reportComplete(std::string_view text) {
    // The server keeps its end open only until it has written the last line.
    return text.ends_with("\nEND\n") || (text.starts_with("ERROR ") && text.ends_with("\n"));
}

Expected<std::string> readReport(int fd, int timeoutSec, std::size_t cap) {
    std::string text;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeoutSec);
    char buf[4096];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now())
                        .count();
        if (left <= 0)
            return UserError{"the server did not report ready within " +
                             std::to_string(timeoutSec) + " s"};
        pollfd p{fd, POLLIN, 0};
        int rc = poll(&p, 1, static_cast<int>(std::min<long long>(left, INT_MAX)));
        if (rc <= 0)
            continue;
        ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return text;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > cap)
            return UserError{"the server's ready report is larger than " + std::to_string(cap) +
                             " bytes"};
        if (reportComplete(text))
            return text;
    }
}

} // namespace stepmap::ready
