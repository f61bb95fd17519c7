// The node server's per-step log: every line goes to stderr (which the
// plugin points at the step's log file when the site sets log_dir), one line
// per call, under the prefix naming the step and node, written at once.

#include "server_log.hpp"

#include "captured_stderr.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

using namespace stepmap::server;

using stepmap::test::CapturedStderr;

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
