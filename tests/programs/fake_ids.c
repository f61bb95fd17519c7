/* LD_PRELOAD shim for the security tests: the process claims the user and
 * group ids in FAKE_UID / FAKE_GID (what PMIx's native security believes
 * over TCP). */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned from_env(const char *name, unsigned fallback) {
    const char *v = getenv(name);
    return v ? (unsigned)strtoul(v, NULL, 10) : fallback;
}

uid_t getuid(void) {
    return from_env("FAKE_UID", 65534);
}
uid_t geteuid(void) {
    return from_env("FAKE_UID", 65534);
}
gid_t getgid(void) {
    return from_env("FAKE_GID", 65534);
}
gid_t getegid(void) {
    return from_env("FAKE_GID", 65534);
}
