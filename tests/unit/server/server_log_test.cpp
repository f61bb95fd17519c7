// The node server's per-step log: every line goes to stderr (which the
// plugin points at the step's log file), one line per call, under the
// prefix naming the step and node, and reaches the file at once.

#include "server_log.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

using namespace stepmap::server;

namespace {

// Points fd 2 at a temporary file for the life of the object.
class CapturedStderr {
public:
    CapturedStderr() {
        std::fflush(stderr);
        char name[] = "/tmp/stepmap-server-log-XXXXXX";
        file_ = mkstemp(name);
        unlink(name);
        saved_ = dup(2);
        dup2(file_, 2);
    }
    ~CapturedStderr() {
        restore();
        close(file_);
    }
    // What reached the file so far, without flushing stdio first: a line
    // that stayed in stderr's buffer would be missing.
    std::string text() const {
        std::string out;
        char buf[512];
        ssize_t n;
        for (off_t at = 0; (n = pread(file_, buf, sizeof buf, at)) > 0; at += n)
            out.append(buf, static_cast<std::size_t>(n));
        return out;
    }
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

} // namespace

TEST(ServerLog, LinesCarryTheProgramNameUntilTheStepIsKnown) {
    CapturedStderr err;
    logLine("bad invocation: missing argument --nspace");
    EXPECT_EQ(err.text(), "stepmap-stepd: bad invocation: missing argument --nspace\n");
}

TEST(ServerLog, LinesCarryTheStepAndNodeOnceSet) {
    CapturedStderr err;
    setLogPrefix("stepmap-stepd[stepmap.12.0 n3]");
    logLine("step CPUs here: 0-3");
    logLine("stopping: signal 15");
    setLogPrefix("stepmap-stepd");
    EXPECT_EQ(err.text(), "stepmap-stepd[stepmap.12.0 n3]: step CPUs here: 0-3\n"
                          "stepmap-stepd[stepmap.12.0 n3]: stopping: signal 15\n");
}

TEST(ServerLog, EachLineIsWrittenAtOnce) {
    CapturedStderr err;
    // A fully buffered stderr would hold the line back; logLine must not.
    static char buffer[BUFSIZ];
    std::setvbuf(stderr, buffer, _IOFBF, sizeof buffer);
    logLine("first");
    std::string seen = err.text();
    std::setvbuf(stderr, nullptr, _IONBF, 0);
    EXPECT_EQ(seen, "stepmap-stepd: first\n");
}

TEST(ServerLog, TextIsWrittenAsGiven) {
    CapturedStderr err;
    logLine("100% of 2 ranks: %s %d");
    logLine("");
    EXPECT_EQ(err.text(), "stepmap-stepd: 100% of 2 ranks: %s %d\nstepmap-stepd: \n");
}
