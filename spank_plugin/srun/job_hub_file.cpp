#include "srun/job_hub_file.hpp"

#include "protocol/hub/job_ids.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <vector>

namespace stepmap::plugin {

namespace {

constexpr std::size_t kMaxFileBytes = 512;

// The user's own directory for the job files, or why there is none.
std::optional<std::string> userDirectory(std::string &why) {
    const char *tmp = std::getenv("TMPDIR");
    std::string base = tmp && tmp[0] == '/' && std::strlen(tmp) < 1024 ? tmp : "/tmp";
    const std::string dir = base + "/stepmap-" + std::to_string(getuid());
    if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
        why = dir + ": " + std::strerror(errno);
        return std::nullopt;
    }
    struct stat st {};
    if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077) != 0) {
        why = dir + " is not a directory of this user's that only it can open";
        return std::nullopt;
    }
    return dir;
}

// The file's text, if it is a regular file of this user's.
std::optional<std::string> readOwnFile(const std::string &path) {
    const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st {};
    char buffer[kMaxFileBytes + 1];
    ssize_t got = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid())
        got = read(fd, buffer, kMaxFileBytes);
    close(fd);
    if (got < 0)
        return std::nullopt;
    return std::string(buffer, static_cast<std::size_t>(got));
}

// The next index for another srun's step, from a counter next to the
// job's file (locked: sruns start at once in job scripts).
std::optional<std::uint32_t> nextIndex(const std::string &path) {
    const int fd = open((path + ".steps").c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return std::nullopt;
    std::optional<std::uint32_t> index;
    if (flock(fd, LOCK_EX) == 0) {
        char text[16] = {};
        const ssize_t got = pread(fd, text, sizeof text - 1, 0);
        unsigned long next = got > 0 ? std::strtoul(text, nullptr, 10) : hub::kFirstAttached;
        if (next >= hub::kFirstAttached && next <= hub::kLastStep) {
            index = static_cast<std::uint32_t>(next);
            const std::string after = std::to_string(next + 1);
            if (ftruncate(fd, 0) != 0 ||
                pwrite(fd, after.data(), after.size(), 0) != static_cast<ssize_t>(after.size()))
                index.reset();
        }
    }
    close(fd);
    return index;
}

// Files of this user's other jobs whose srun is gone (it crashed before
// removing its file).
void sweepStale(const std::string &dir, const std::string &keep) {
    DIR *d = opendir(dir.c_str());
    if (!d)
        return;
    std::vector<std::string> stale;
    while (dirent *e = readdir(d)) {
        const std::string name = e->d_name;
        if (name.rfind("job-", 0) != 0 || name.find('.') != std::string::npos || name == keep)
            continue;
        auto text = readOwnFile(dir + "/" + name);
        std::istringstream fields(text ? *text : "");
        std::string address, secret;
        long pid = 0;
        if (text && fields >> address >> secret >> pid && pid > 0 &&
            kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            stale.push_back(dir + "/" + name);
    }
    closedir(d);
    for (const auto &path : stale) {
        unlink(path.c_str());
        unlink((path + ".steps").c_str());
    }
}

} // namespace

JobHubFile::Outcome JobHubFile::claimOrFind(std::uint32_t jobId, const std::string &address,
                                            const std::string &secretHex) {
    Outcome out;
    auto dir = userDirectory(out.why);
    if (!dir)
        return out;
    const std::string path = *dir + "/job-" + std::to_string(jobId);
    const std::string mine = address + " " + secretHex + " " + std::to_string(getpid()) + "\n";
    for (int attempt = 0; attempt < 3; ++attempt) {
        // Written whole under another name, then linked: a reader never
        // sees half of it, and only one srun's link succeeds.
        const std::string draft = path + ".draft." + std::to_string(getpid());
        const int fd =
            open(draft.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0) {
            out.why = draft + ": " + std::strerror(errno);
            return out;
        }
        const bool written =
            write(fd, mine.data(), mine.size()) == static_cast<ssize_t>(mine.size());
        close(fd);
        const bool linked = written && link(draft.c_str(), path.c_str()) == 0;
        unlink(draft.c_str());
        if (linked) {
            unlink((path + ".steps").c_str()); // a new hub counts afresh
            sweepStale(*dir, "job-" + std::to_string(jobId));
            out.owner.reset(new JobHubFile(path, mine));
            return out;
        }
        auto text = readOwnFile(path);
        std::istringstream fields(text ? *text : "");
        std::string theirAddress, theirSecret;
        long pid = 0;
        if (fields >> theirAddress >> theirSecret >> pid && pid > 0 &&
            (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM)) {
            auto index = nextIndex(path);
            if (!index) {
                out.why = "the job has " +
                          std::to_string(hub::kLastStep - hub::kFirstAttached + 1) +
                          " sruns sharing its hub already";
                return out;
            }
            out.attached = Attached{theirAddress, theirSecret, *index};
            return out;
        }
        // Its srun is gone (or the file is damaged): replace it.
        unlink(path.c_str());
    }
    out.why = path + " kept changing";
    return out;
}

JobHubFile::~JobHubFile() {
    // Only if it is still ours (a later srun may have replaced a file it
    // found stale).
    if (readOwnFile(path_) == contents_) {
        unlink(path_.c_str());
        unlink((path_ + ".steps").c_str());
    }
}

} // namespace stepmap::plugin
