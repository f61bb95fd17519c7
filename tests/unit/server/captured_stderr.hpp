#pragma once

// Points fd 2 (where the server's log lines go) at an unlinked temporary
// file while the object lives, for tests that read what was logged.

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace stepmap::test {

class CapturedStderr {
public:
    CapturedStderr() {
        std::fflush(stderr);
        char name[] = "/tmp/stepmap-stderr-XXXXXX";
        file_ = mkstemp(name);
        unlink(name);
        saved_ = dup(2);
        dup2(file_, 2);
    }
    ~CapturedStderr() {
        restore();
        close(file_);
    }
    CapturedStderr(const CapturedStderr &) = delete;
    CapturedStderr &operator=(const CapturedStderr &) = delete;

    // What reached the file so far, without flushing stdio first: a line
    // that stayed in stderr's buffer is missing.
    std::string text() const {
        std::string out;
        char buf[512];
        ssize_t n;
        for (off_t at = 0; (n = pread(file_, buf, sizeof buf, at)) > 0; at += n)
            out.append(buf, static_cast<std::size_t>(n));
        return out;
    }
    // Points fd 2 back where it was.
    void restore() {
        if (saved_ < 0)
            return;
        std::fflush(stderr);
        dup2(saved_, 2);
        close(saved_);
        saved_ = -1;
    }

private:
    int file_ = -1;
    int saved_ = -1;
};

} // namespace stepmap::test
