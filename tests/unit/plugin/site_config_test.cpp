// plugstack.conf arguments: defaults first, then each key=value validated;
// an unknown key or a bad value is an error naming both.

#include "site_config.hpp"

#include <gtest/gtest.h>

using namespace stepmap::plugin;

TEST(SiteConfig, Defaults) {
    auto c = parseSiteConfig({}, "/usr/libexec/stepmap-stepd");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->server, "/usr/libexec/stepmap-stepd");
    EXPECT_EQ(c->tmpdir, "/tmp");
    EXPECT_EQ(c->dmodexTimeoutSec, 60);
    EXPECT_TRUE(c->logDir.empty());
    EXPECT_TRUE(c->profile.empty());
    EXPECT_EQ(c->modexPorts, "24000-25999");
}

TEST(SiteConfig, ValuesOverrideDefaults) {
    auto c = parseSiteConfig({"server=/opt/s", "tmpdir=/var/tmp", "dmodex_timeout=5",
                              "hub_address=10.0.0.1", "log_dir=/var/log/stepmap",
                              "profile=/etc/slurm/stepmap-profile.yaml", "modex_ports=50000-50127"},
                             "/x");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->server, "/opt/s");
    EXPECT_EQ(c->tmpdir, "/var/tmp");
    EXPECT_EQ(c->dmodexTimeoutSec, 5);
    EXPECT_EQ(c->hubAddress, "10.0.0.1");
    EXPECT_EQ(c->logDir, "/var/log/stepmap");
    EXPECT_EQ(c->profile, "/etc/slurm/stepmap-profile.yaml");
    EXPECT_EQ(c->modexPorts, "50000-50127");
}

TEST(SiteConfig, ClientsAreAuthenticatedThroughMungeUnlessTheSiteSaysOtherwise) {
    auto d = parseSiteConfig({}, "/x");
    ASSERT_TRUE(d);
    EXPECT_EQ(d->clientAuth, "munge");
    auto n = parseSiteConfig({"client_auth=native"}, "/x");
    ASSERT_TRUE(n);
    EXPECT_EQ(n->clientAuth, "native");
}

TEST(SiteConfig, BadArgumentsAreErrorsNamingThem) {
    struct Case {
        std::string arg, message;
    };
    for (const auto &tc : std::vector<Case>{
             {"colour=blue", "unknown plugstack.conf argument 'colour' (value 'blue'); known: "
                             "server, tmpdir, log_dir, hub_address, client_auth, "
                             "dmodex_timeout, server_start_timeout, profile, modex_ports"},
             {"profile=profile.yaml", "plugstack.conf argument profile='profile.yaml' must be an "
                                      "absolute path"},
             {"modex_ports=41000", "plugstack.conf argument modex_ports='41000' must be a range "
                                   "of TCP ports BASE-END within 1024-65535, e.g. "
                                   "modex_ports=24000-25999"},
             {"modex_ports=900-1000", "plugstack.conf argument modex_ports='900-1000' must be a "
                                      "range of TCP ports BASE-END within 1024-65535, e.g. "
                                      "modex_ports=24000-25999"},
             {"modex_ports=5000-4000", "plugstack.conf argument modex_ports='5000-4000' must be "
                                       "a range of TCP ports BASE-END within 1024-65535, e.g. "
                                       "modex_ports=24000-25999"},
             {"client_auth=none", "plugstack.conf argument client_auth='none' must be munge "
                                  "(clients prove their user through munged) or native (trust "
                                  "the user a client claims: any local user could join a step)"},
             {"tmpdir", "plugstack.conf argument 'tmpdir' is not key=value"},
             {"tmpdir=relative", "plugstack.conf argument tmpdir='relative' must be an "
                                 "absolute path"},
             {"dmodex_timeout=0", "plugstack.conf argument dmodex_timeout='0' must be seconds "
                                  "between 1 and 86400"},
             {"dmodex_timeout=5s", "plugstack.conf argument dmodex_timeout='5s' must be "
                                   "seconds between 1 and 86400"},
         }) {
        auto c = parseSiteConfig({tc.arg}, "/x");
        ASSERT_FALSE(c) << tc.arg;
        EXPECT_EQ(c.error().message, tc.message);
    }
}
