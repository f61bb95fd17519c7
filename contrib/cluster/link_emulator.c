// link_emulator: a network link's one-way delay, jitter, loss and rate, in
// user space, for the test cluster (contrib/cluster/link.sh). This kernel
// has no sch_netem ("Specified qdisc kind is unknown"), so a node's cable
// is cut at the bridge and this program carries every frame between the
// two ends: what arrives on A leaves on B, and the other way round, after
// the link's delay (each direction is a link of its own, as a cable is).
//
//   link_emulator IF_A IF_B [--delay-us N] [--jitter-us N] [--loss PERCENT]
//                 [--rate-mbit N]
//
// Frames keep their order in each direction (a frame never overtakes the
// one before it, so jitter delays but does not reorder: TCP sees a slower
// link, not a broken one). The rate is a serialisation delay: a frame
// leaves once the previous one has been sent at that rate. Loss drops a
// frame with the given probability before it is queued. GSO frames pass
// whole (PACKET_VNET_HDR on both sockets), counted at their full size.
// Stops on SIGTERM/SIGINT. Needs CAP_NET_RAW in the interfaces' namespace.
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

enum { kFrameMax = 65536 + 64, kQueueMax = 8192 };

struct frame {
    uint64_t due_ns;
    size_t len;
    unsigned char *data; // malloc'd, len bytes
};

// One direction: frames read from `in`, queued, written to `out`.
struct direction {
    int in, out;
    struct frame *queue; // ring of kQueueMax
    size_t head, count;
    uint64_t last_due_ns; // order is kept: no frame leaves before this
    uint64_t dropped, sent, overflow;
};

static volatile sig_atomic_t stopping;
static uint64_t delay_ns, jitter_ns, rate_bps;
static double loss;

static void on_signal(int sig) {
    (void)sig;
    stopping = 1;
}

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t random64(void) {
    uint64_t v = 0;
    if (getrandom(&v, sizeof v, 0) != sizeof v)
        v = (uint64_t)rand() << 32 | (uint64_t)rand();
    return v;
}

static int open_end(const char *name) {
    unsigned index = if_nametoindex(name);
    if (index == 0) {
        fprintf(stderr, "link_emulator: no interface %s here\n", name);
        exit(2);
    }
    int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, htons(ETH_P_ALL));
    if (fd < 0) {
        perror("link_emulator: socket(AF_PACKET)");
        exit(2);
    }
    int on = 1;
    // Whole GSO frames with their offload header, both ways; not the
    // frames this program itself sends out of the interface.
    if (setsockopt(fd, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof on) != 0 ||
        setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &on, sizeof on) != 0) {
        perror("link_emulator: setsockopt(SOL_PACKET)");
        exit(2);
    }
    struct sockaddr_ll where = {.sll_family = AF_PACKET,
                                .sll_protocol = htons(ETH_P_ALL),
                                .sll_ifindex = (int)index};
    if (bind(fd, (struct sockaddr *)&where, sizeof where) != 0) {
        fprintf(stderr, "link_emulator: bind to %s: %s\n", name, strerror(errno));
        exit(2);
    }
    struct packet_mreq promisc = {.mr_ifindex = (int)index, .mr_type = PACKET_MR_PROMISC};
    setsockopt(fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &promisc, sizeof promisc);
    return fd;
}

// Reads every frame waiting on d->in into the queue (or drops it). False
// once the interface is gone (link.sh removed it): the link is unplugged.
static bool take_in(struct direction *d) {
    static unsigned char buffer[kFrameMax];
    for (;;) {
        ssize_t n = recv(d->in, buffer, sizeof buffer, 0);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR || errno == ENETDOWN;
        struct frame *slot = &d->queue[(d->head + d->count) % kQueueMax];
        if (d->count == kQueueMax || !(slot->data = malloc((size_t)n))) {
            ++d->overflow;
            continue;
        }
        memcpy(slot->data, buffer, (size_t)n);
        if (loss > 0 && (double)(random64() >> 11) / 9007199254740992.0 < loss) {
            free(slot->data);
            ++d->dropped;
            continue;
        }
        uint64_t due = now_ns() + delay_ns;
        if (jitter_ns > 0)
            due += random64() % (2 * jitter_ns + 1) - jitter_ns;
        if (due < d->last_due_ns)
            due = d->last_due_ns;
        if (rate_bps > 0)
            due += (uint64_t)n * 8u * 1000000000u / rate_bps;
        d->last_due_ns = due;
        slot->due_ns = due;
        slot->len = (size_t)n;
        ++d->count;
    }
}

// Sends what is due; returns the time of the next frame (0: none queued).
static uint64_t send_due(struct direction *d, uint64_t now) {
    while (d->count > 0) {
        struct frame *f = &d->queue[d->head];
        if (f->due_ns > now)
            return f->due_ns;
        if (send(d->out, f->data, f->len, 0) >= 0)
            ++d->sent;
        else
            ++d->dropped; // a full queue below, or the far end is down
        free(f->data);
        d->head = (d->head + 1) % kQueueMax;
        --d->count;
    }
    return 0;
}

static uint64_t number(const char *text, const char *what) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0') {
        fprintf(stderr, "link_emulator: %s %s: expected a whole number\n", what, text);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: link_emulator IF_A IF_B [--delay-us N] [--jitter-us N] "
                        "[--loss PERCENT] [--rate-mbit N]\n");
        return 2;
    }
    for (int i = 3; i < argc; i += 2) {
        if (i + 1 >= argc) {
            fprintf(stderr, "link_emulator: %s needs a value\n", argv[i]);
            return 2;
        }
        if (strcmp(argv[i], "--delay-us") == 0)
            delay_ns = number(argv[i + 1], argv[i]) * 1000u;
        else if (strcmp(argv[i], "--jitter-us") == 0)
            jitter_ns = number(argv[i + 1], argv[i]) * 1000u;
        else if (strcmp(argv[i], "--rate-mbit") == 0)
            rate_bps = number(argv[i + 1], argv[i]) * 1000000u;
        else if (strcmp(argv[i], "--loss") == 0) {
            char *end = NULL;
            loss = strtod(argv[i + 1], &end) / 100.0;
            if (end == argv[i + 1] || *end != '\0' || loss < 0 || loss > 1) {
                fprintf(stderr, "link_emulator: --loss %s: expected a percentage 0-100\n",
                        argv[i + 1]);
                return 2;
            }
        } else {
            fprintf(stderr, "link_emulator: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    if (jitter_ns > delay_ns)
        jitter_ns = delay_ns; // a frame cannot leave before it came
    int a = open_end(argv[1]), b = open_end(argv[2]);
    struct direction ways[2] = {{.in = a, .out = b}, {.in = b, .out = a}};
    for (int i = 0; i < 2; ++i) {
        ways[i].queue = calloc(kQueueMax, sizeof(struct frame));
        if (!ways[i].queue) {
            fprintf(stderr, "link_emulator: out of memory\n");
            return 1;
        }
    }
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    printf("link_emulator: %s <-> %s delay %llu us jitter %llu us loss %.2f%% rate %llu Mbit/s\n",
           argv[1], argv[2], (unsigned long long)(delay_ns / 1000),
           (unsigned long long)(jitter_ns / 1000), loss * 100,
           (unsigned long long)(rate_bps / 1000000));
    fflush(stdout);
    while (!stopping) {
        uint64_t now = now_ns(), next = 0;
        for (int i = 0; i < 2; ++i) {
            uint64_t due = send_due(&ways[i], now);
            if (due != 0 && (next == 0 || due < next))
                next = due;
        }
        struct pollfd fds[2] = {{.fd = a, .events = POLLIN}, {.fd = b, .events = POLLIN}};
        struct timespec wait = {.tv_sec = 1}, *timeout = &wait;
        if (next != 0) {
            uint64_t left = next > now ? next - now : 0;
            wait.tv_sec = (time_t)(left / 1000000000u);
            wait.tv_nsec = (long)(left % 1000000000u);
        }
        if (ppoll(fds, 2, timeout, NULL) < 0 && errno != EINTR)
            break;
        // An error or hang-up on a packet socket: its interface went away.
        bool gone = (fds[0].revents | fds[1].revents) & (POLLERR | POLLHUP | POLLNVAL);
        if ((fds[0].revents & POLLIN) && !take_in(&ways[0]))
            gone = true;
        if ((fds[1].revents & POLLIN) && !take_in(&ways[1]))
            gone = true;
        if (gone) {
            printf("link_emulator: an interface went away (%s)\n", strerror(errno));
            break;
        }
    }
    printf("link_emulator: stopped; %s->%s sent %llu dropped %llu overflow %llu; "
           "%s->%s sent %llu dropped %llu overflow %llu\n",
           argv[1], argv[2], (unsigned long long)ways[0].sent,
           (unsigned long long)ways[0].dropped, (unsigned long long)ways[0].overflow, argv[2],
           argv[1], (unsigned long long)ways[1].sent, (unsigned long long)ways[1].dropped,
           (unsigned long long)ways[1].overflow);
    return 0;
}
