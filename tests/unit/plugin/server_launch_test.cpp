// Starting the node server from slurmstepd (spank_plugin/stepd/server_launch.hpp)
// with /bin/sh as the server: the report on the ready socket, the drop to
// the job's user, the failures the plugin names. The drop needs root: as
// another user those cases are skipped and the launch must fail cleanly.

#include "stepd/server_launch.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sys/stat.h>

#include <cstdio>
#include <map>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

constexpr uid_t kNobody = 65534;

ServerLaunch shellServer(const std::string &script, int timeoutSec = 10) {
    ServerLaunch l;
    l.executable = "/bin/sh";
    l.args = {"-c", script, "stepmap-stepd", "{fd}"};
    l.environ = {"PATH=/usr/bin:/bin"};
    l.uid = kNobody;
    l.gid = kNobody;
    l.timeoutSec = timeoutSec;
    l.localRanks = {0};
    return l;
}

// A child of this test that sleeps, and ignores SIGTERM if asked.
ServerProcess sleeper(bool ignoreTerm) {
    pid_t pid = fork();
    if (pid == 0) {
        if (ignoreTerm)
            signal(SIGTERM, SIG_IGN);
        for (;;)
            pause();
    }
    return ServerProcess(pid, os::UniqueFd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0))));
}

int reap(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return status;
}

} // namespace

TEST(ServerLaunch, ReportedEnvironmentAsTheJobsUser) {
    if (getuid() != 0)
        GTEST_SKIP() << "the drop to the job's user needs root";
    // $1 is the ready socket's number, as "{fd}" passes it.
    auto running = launchServer(shellServer(
        "printf 'READY\\nRANK 0\\nENV PMIX_UID=%s\\nENV PMIX_CWD=%s\\nENV PMIX_FD=%s\\nEND\\n' "
        "\"$(id -u)\" \"$(pwd)\" \"$1\" >&\"$1\"; exec sleep 30"));
    ASSERT_TRUE(running) << running.error().message;
    EXPECT_TRUE(running->process);
    EXPECT_TRUE(running->notices);
    const std::map<std::uint32_t, ready::ClientEnvironment> expected{
        {0, {{"PMIX_UID", "65534"}, {"PMIX_CWD", "/"}, {"PMIX_FD", "3"}}}};
    EXPECT_EQ(running->clientEnv, expected);
    running->process.stop(2000);
    EXPECT_FALSE(running->process);
}

TEST(ServerLaunch, AServerThatSaysNothingFails) {
    auto running = launchServer(shellServer("exit 0"));
    ASSERT_FALSE(running);
    EXPECT_EQ(running.error().message,
              "the server exited before it was ready (see the node's log; exit codes 120-127 mean "
              "it could not drop privileges, set up or be executed)");
}

// slurmstepd forks the tasks while the server starts: spawning does not wait
// for the report, which is read later. Here the server reports only once a
// file appears, made after spawnServer returned.
TEST(ServerLaunch, SpawningDoesNotWaitForTheReport) {
    if (getuid() != 0)
        GTEST_SKIP() << "the drop to the job's user needs root";
    char dir[] = "/tmp/stepmap-spawn-XXXXXX";
    ASSERT_TRUE(mkdtemp(dir));
    chmod(dir, 0755);
    const std::string go = std::string(dir) + "/go";
    auto starting = spawnServer(shellServer("while [ ! -e " + go +
                                            " ]; do sleep 0.01; done; "
                                            "printf 'READY\\nRANK 0\\nENV PMIX_RANK=0\\nEND\\n' "
                                            ">&\"$1\"; exec sleep 30"));
    ASSERT_TRUE(starting) << starting.error().message;
    EXPECT_TRUE(starting->process);
    std::fclose(std::fopen(go.c_str(), "w"));
    auto running = awaitServer(std::move(starting.value()));
    unlink(go.c_str());
    rmdir(dir);
    ASSERT_TRUE(running) << running.error().message;
    const std::map<std::uint32_t, ready::ClientEnvironment> expected{{0, {{"PMIX_RANK", "0"}}}};
    EXPECT_EQ(running->clientEnv, expected);
    running->process.stop(2000);
}

// The server's directory and log are made as the job's user before it
// runs (root makes nothing where users write); its stderr is the log.
TEST(ServerLaunch, DirectoryAndLogAreTheJobUsers) {
    if (getuid() != 0)
        GTEST_SKIP() << "the drop to the job's user needs root";
    char parent[] = "/tmp/stepmap-files-XXXXXX";
    ASSERT_TRUE(mkdtemp(parent));
    chmod(parent, 01777);
    ServerLaunch l = shellServer("echo said >&2; printf 'READY\\nRANK 0\\nEND\\n' >&\"$1\"; "
                                 "exec sleep 30");
    l.directory = std::string(parent) + "/server";
    l.logPath = std::string(parent) + "/server.log";
    auto running = launchServer(std::move(l));
    ASSERT_TRUE(running) << running.error().message;
    running->process.stop(2000);
    struct stat dir {
    }, log{};
    ASSERT_EQ(stat((std::string(parent) + "/server").c_str(), &dir), 0);
    ASSERT_EQ(stat((std::string(parent) + "/server.log").c_str(), &log), 0);
    EXPECT_EQ(dir.st_uid, kNobody);
    EXPECT_EQ(dir.st_gid, kNobody);
    EXPECT_EQ(dir.st_mode & 0777, 0700u);
    EXPECT_EQ(log.st_uid, kNobody);
    EXPECT_EQ(log.st_mode & 0777, 0600u);
    std::FILE *f = std::fopen((std::string(parent) + "/server.log").c_str(), "r");
    char text[16] = {};
    ASSERT_TRUE(f);
    EXPECT_TRUE(std::fgets(text, sizeof text, f));
    std::fclose(f);
    EXPECT_STREQ(text, "said\n");

    // A directory of that name already there (someone made it first): no
    // server; a log already there: the server runs without it.
    ServerLaunch again = shellServer("exit 0");
    again.directory = std::string(parent) + "/server";
    auto refused = launchServer(std::move(again));
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().message, "cannot make its directory " + std::string(parent) +
                                           "/server as the job's user: File exists");
    ServerLaunch logTaken = shellServer("printf 'READY\\nRANK 0\\nEND\\n' >&\"$1\"; exec sleep 30");
    logTaken.directory = std::string(parent) + "/server2";
    logTaken.logPath = std::string(parent) + "/server.log";
    auto starting = spawnServer(std::move(logTaken));
    ASSERT_TRUE(starting) << starting.error().message;
    EXPECT_EQ(starting->logProblem,
              "cannot create the server's log " + std::string(parent) + "/server.log: File exists");
    auto withoutLog = awaitServer(std::move(starting.value()));
    ASSERT_TRUE(withoutLog) << withoutLog.error().message;
    withoutLog->process.stop(2000);
    for (const char *name : {"/server", "/server2"})
        rmdir((std::string(parent) + name).c_str());
    unlink((std::string(parent) + "/server.log").c_str());
    rmdir(parent);
}

// Placing a starting server moves it into this process's cgroups and lets
// its guard go, once only. (Here it was forked in them already; that it
// leaves the node's root cpuset for the step's is e2e: test_spine.)
TEST(ServerLaunch, PlacingMovesTheServerIntoTheseCgroups) {
    if (getuid() != 0)
        GTEST_SKIP() << "the drop to the job's user and cgroup.procs need root";
    auto starting = spawnServer(shellServer("sleep 30"));
    ASSERT_TRUE(starting) << starting.error().message;
    EXPECT_TRUE(starting->guard);
    auto placed = placeServer(*starting);
    ASSERT_TRUE(placed) << placed.error().message;
    EXPECT_FALSE(starting->guard);
    auto cgroupOf = [](const std::string &pid) {
        std::FILE *f = std::fopen(("/proc/" + pid + "/cgroup").c_str(), "r");
        std::string text;
        char buf[512];
        while (f && std::fgets(buf, sizeof buf, f))
            text += buf;
        if (f)
            std::fclose(f);
        return text;
    };
    EXPECT_EQ(cgroupOf(std::to_string(starting->process.pid())), cgroupOf("self"));
    auto twice = placeServer(*starting);
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().message, "the server's process is no longer guarded");
    starting->process.stop(2000);
}

// What the server says (or does not) and the plugin's error for it.
TEST(ServerLaunch, FailuresNameTheReason) {
    if (getuid() != 0)
        GTEST_SKIP() << "the drop to the job's user needs root";
    const struct {
        const char *script;
        int timeoutSec;
        const char *error;
    } cases[] = {
        {"printf 'ERROR no topology\\n' >&\"$1\"", 10, "no topology"},
        // Stopped after the timeout.
        {"exec sleep 30", 1, "the server did not report ready within 1 s"},
        {"printf 'READY\\nRANK 5\\nEND\\n' >&\"$1\"", 10,
         "the server's ready report is malformed at line 2 ('RANK 5'): not a rank of this node"},
    };
    for (const auto &c : cases) {
        auto running = launchServer(shellServer(c.script, c.timeoutSec));
        ASSERT_FALSE(running) << c.script;
        EXPECT_EQ(running.error().message, c.error);
    }
}

// SIGTERM first; SIGKILL for a process that has not gone after the wait.
TEST(ServerProcess, StopEndsTheProcess) {
    for (const bool ignoresTerm : {false, true}) {
        ServerProcess p = sleeper(ignoresTerm);
        const pid_t pid = p.pid();
        ASSERT_TRUE(p);
        usleep(100 * 1000); // let it set up its signals first
        p.stop(200);
        EXPECT_FALSE(p);
        int status = reap(pid);
        ASSERT_TRUE(WIFSIGNALED(status));
        EXPECT_EQ(WTERMSIG(status), ignoresTerm ? SIGKILL : SIGTERM);
    }
}

TEST(ServerProcess, ForgetLeavesItRunning) {
    ServerProcess p = sleeper(false);
    const pid_t pid = p.pid();
    p.forget();
    EXPECT_FALSE(p);
    p.stop(10); // nothing to stop any more
    EXPECT_EQ(kill(pid, 0), 0);
    kill(pid, SIGKILL);
    reap(pid);
}

TEST(RunAsUser, WorkRunsAsTheUserOnly) {
    const bool asNobody = runAsUser(
        kNobody, kNobody, [] { return getuid() == kNobody && geteuid() == kNobody; }, 5000);
    // Without root the drop fails, and so does the work.
    EXPECT_EQ(asNobody, getuid() == 0);
    if (getuid() == 0) {
        EXPECT_FALSE(runAsUser(
            kNobody, kNobody, [] { return false; }, 5000));
        EXPECT_FALSE(runAsUser(
            kNobody, kNobody, []() -> bool { throw std::runtime_error("x"); }, 5000));
    }
}

TEST(JobSoftLimits, FromSlurmsVariables) {
    const std::map<std::string, std::string> env{{"SLURM_RLIMIT_CORE", "0"},
                                                 {"SLURM_RLIMIT_NOFILE", "U1024"},
                                                 {"SLURM_RLIMIT_STACK", "8x"},
                                                 {"SLURM_RLIMIT_AS", ""},
                                                 {"SLURM_RLIMIT_BOGUS", "1"}};
    auto limits = jobSoftLimits([&](const char *name) -> std::optional<std::string> {
        auto it = env.find(name);
        return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    const std::vector<std::pair<int, rlim_t>> expected{{RLIMIT_CORE, 0}, {RLIMIT_NOFILE, 1024}};
    EXPECT_EQ(limits, expected);
}
