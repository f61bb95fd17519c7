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
    EXPECT_EQ(c->fenceFanOut, 16);
    EXPECT_EQ(c->fenceTimeoutSec, 300);
}

TEST(SiteConfig, ValuesOverrideDefaults) {
    auto c = parseSiteConfig({"server=/opt/s", "tmpdir=/var/tmp", "dmodex_timeout=5",
                              "hub_address=10.0.0.1", "log_dir=/var/log/stepmap",
                              "profile=/etc/slurm/stepmap-profile.yaml", "modex_ports=50000-50127",
                              "fence_fanout=0", "task_env=A=1;B_2=x=y;C="},
                             "/x");
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(c->server, "/opt/s");
    EXPECT_EQ(c->tmpdir, "/var/tmp");
    EXPECT_EQ(c->dmodexTimeoutSec, 5);
    EXPECT_EQ(c->hubAddress, "10.0.0.1");
    EXPECT_EQ(c->logDir, "/var/log/stepmap");
    EXPECT_EQ(c->profile, "/etc/slurm/stepmap-profile.yaml");
    EXPECT_EQ(c->modexPorts, "50000-50127");
    EXPECT_EQ(c->fenceFanOut, 0);
    using Vars = std::vector<std::pair<std::string, std::string>>;
    EXPECT_EQ(c->taskEnv, (Vars{{"A", "1"}, {"B_2", "x=y"}, {"C", ""}}));
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
                             "server, config, tmpdir, log_dir, hub_address, client_auth, "
                             "dmodex_timeout, server_start_timeout, profile, modex_ports, "
                             "fence_fanout, fence_timeout, task_env, spawn_timeout, relay_ports, "
                             "topology_cache"},
             {"topology_cache=run/stepmap",
              "plugstack.conf argument topology_cache='run/stepmap' must be the absolute path "
              "of a directory only root may write (default /run/stepmap), or none (every "
              "step's server discovers the node's topology itself)"},
             {"fence_timeout=1d", "plugstack.conf argument fence_timeout='1d' must be seconds "
                                  "between 1 and 86400, or 0 for no deadline"},
             {"task_env=1X=2", "plugstack.conf argument task_env='1X=2' must be NAME=VALUE "
                               "pairs joined by ';' (at most 64, names of letters, digits and "
                               "'_'), e.g. task_env=UCX_TLS=rc,sm;PMIX_MCA_gds=hash"},
             {"task_env=NOVALUE", "plugstack.conf argument task_env='NOVALUE' must be "
                                  "NAME=VALUE pairs joined by ';' (at most 64, names of "
                                  "letters, digits and '_'), e.g. "
                                  "task_env=UCX_TLS=rc,sm;PMIX_MCA_gds=hash"},
             {"fence_fanout=1025", "plugstack.conf argument fence_fanout='1025' must be a number "
                                   "of children per node server from 0 (every fence through "
                                   "srun) to 1024, e.g. fence_fanout=16"},
             {"relay_ports=80-90", "plugstack.conf argument relay_ports='80-90' must be a range "
                                   "of TCP ports BASE-END within 1024-65535 that every node "
                                   "leaves free, e.g. relay_ports=26000-26999, or none (every "
                                   "node server joins srun directly)"},
             {"fence_fanout=-1", "plugstack.conf argument fence_fanout='-1' must be a number "
                                 "of children per node server from 0 (every fence through "
                                 "srun) to 1024, e.g. fence_fanout=16"},
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

// config=FILE: the site file's settings join plugstack.conf's; each setting
// is made in one place only.
namespace site_file {

using stepmap::Expected;
using stepmap::UserError;
using stepmap::plugin::SitePolicy;

SitePolicyReader reading(SitePolicy policy, std::string *asked = nullptr) {
    return [policy, asked](const std::string &path) -> Expected<SitePolicy> {
        if (asked)
            *asked = path;
        return policy;
    };
}

TEST(SiteConfigFile, MergesTheFilesSettings) {
    SitePolicy p;
    p.profile = "/etc/slurm/profile.yaml";
    p.modexPorts = "30000-30999";
    p.logDir = "/var/log/stepmap";
    p.dmodexTimeoutSec = 7;
    p.serverStartTimeoutSec = 9;
    p.mapBy = "node";
    std::string asked;
    auto c = parseSiteConfig({"config=/etc/slurm/stepmap.yaml", "tmpdir=/var/tmp"}, "/x",
                             reading(p, &asked));
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_EQ(asked, "/etc/slurm/stepmap.yaml");
    EXPECT_EQ(c->policy.path, "/etc/slurm/stepmap.yaml");
    EXPECT_EQ(c->profile, "/etc/slurm/profile.yaml");
    EXPECT_EQ(c->modexPorts, "30000-30999");
    EXPECT_EQ(c->logDir, "/var/log/stepmap");
    EXPECT_EQ(c->dmodexTimeoutSec, 7);
    EXPECT_EQ(c->serverStartTimeoutSec, 9);
    EXPECT_EQ(c->tmpdir, "/var/tmp");
    EXPECT_EQ(c->policy.mapBy, std::optional<std::string>("node"));
}

TEST(SiteConfigFile, WithoutConfigNothingIsRead) {
    bool read = false;
    auto c = parseSiteConfig({"tmpdir=/tmp"}, "/x", [&](const std::string &) {
        read = true;
        return Expected<SitePolicy>(SitePolicy{});
    });
    ASSERT_TRUE(c);
    EXPECT_FALSE(read);
    EXPECT_EQ(c->policy.serve, stepmap::plugin::ServedSteps::Options);
}

TEST(SiteConfigFile, ASettingInBothPlacesIsRefused) {
    struct Case {
        const char *argument;
        void (*set)(SitePolicy &);
        const char *key;
    };
    for (const Case &tc : {
             Case{"profile=/p", [](SitePolicy &p) { p.profile = "/q"; }, "profile"},
             Case{"modex_ports=24000-24999", [](SitePolicy &p) { p.modexPorts = "25000-25999"; },
                  "modex_ports"},
             Case{"log_dir=/a", [](SitePolicy &p) { p.logDir = "/b"; }, "log.dir"},
             Case{"dmodex_timeout=5", [](SitePolicy &p) { p.dmodexTimeoutSec = 6; },
                  "timeouts.direct_modex"},
             Case{"server_start_timeout=5", [](SitePolicy &p) { p.serverStartTimeoutSec = 6; },
                  "timeouts.server_start"},
         }) {
        SitePolicy p;
        tc.set(p);
        auto c = parseSiteConfig({tc.argument, "config=/etc/s.yaml"}, "/x", reading(p));
        ASSERT_FALSE(c) << tc.argument;
        const std::string name =
            std::string(tc.argument).substr(0, std::string(tc.argument).find('='));
        EXPECT_EQ(c.error().message, "plugstack.conf argument " + name + "= and " + tc.key +
                                         " in /etc/s.yaml both set it; keep one of them");
    }
}

TEST(SiteConfigFile, TheFilesErrorIsTheLoadsError) {
    auto c = parseSiteConfig({"config=/etc/s.yaml"}, "/x", [](const std::string &) {
        return Expected<SitePolicy>(UserError{"/etc/s.yaml:3: defaults.colour: unknown key"});
    });
    ASSERT_FALSE(c);
    EXPECT_EQ(c.error().message, "/etc/s.yaml:3: defaults.colour: unknown key");
}

TEST(SiteConfigFile, ConfigMustBeAbsoluteAndGivenOnce) {
    auto relative = parseSiteConfig({"config=stepmap.yaml"}, "/x", reading({}));
    ASSERT_FALSE(relative);
    EXPECT_EQ(relative.error().message,
              "plugstack.conf argument config='stepmap.yaml' must be an absolute path");
    auto twice = parseSiteConfig({"config=/a", "config=/b"}, "/x", reading({}));
    ASSERT_FALSE(twice);
    EXPECT_EQ(twice.error().message, "plugstack.conf argument config= is given twice; keep one");
}

TEST(SiteConfigFile, ADefaultModexOfProfileNeedsAProfile) {
    SitePolicy p;
    p.modex = "profile";
    auto without = parseSiteConfig({"config=/etc/s.yaml"}, "/x", reading(p));
    ASSERT_FALSE(without);
    EXPECT_EQ(without.error().message,
              "/etc/s.yaml: defaults.modex: profile needs the site's interconnect profile; name "
              "it (profile: FILE here, or profile=FILE in plugstack.conf), or choose fence or "
              "async");
    EXPECT_TRUE(parseSiteConfig({"config=/etc/s.yaml", "profile=/etc/p.yaml"}, "/x", reading(p)));
    p.profile = "/etc/p.yaml";
    EXPECT_TRUE(parseSiteConfig({"config=/etc/s.yaml"}, "/x", reading(p)));
}

} // namespace site_file
