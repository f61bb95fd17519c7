// What --modex and the site's interconnect profile put in srun's
// environment (srun/modex_environment.hpp): a table of modes and profiles.

#include "srun/modex_environment.hpp"

#include "job_variables.hpp"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {
namespace {

// The site's profile at /etc/profile.yaml has entries for n1 and n2.
Expected<topology::Profile> readProfile(const std::string &path) {
    if (path != "/etc/profile.yaml")
        return UserError{path + ": No such file or directory"};
    topology::Profile profile;
    for (const char *name : {"n1", "n2"}) {
        topology::NodeProfile node;
        node.name = name;
        node.method = "sysfs";
        profile.nodes.push_back(node);
    }
    return profile;
}

SiteConfig site(const std::string &profile, std::optional<std::string> modexDefault = {}) {
    SiteConfig config;
    config.profile = profile;
    config.policy.path = "/etc/stepmap.yaml";
    config.policy.modex = modexDefault;
    return config;
}

const std::string kNoProfile =
    "--modex=profile needs the site's interconnect profile, and plugstack.conf names none "
    "(profile=FILE, made with stepmap-profile make); use --modex=async";

TEST(ModexEnvironment, Table) {
    struct Case {
        std::string what;
        std::optional<std::string> modex;
        SiteConfig site;
        std::vector<std::string> nodes;
        std::size_t environmentBytes;
        std::optional<std::string> modexVariable; // SLURM_STEPMAP_MODEX
        bool profileServed;
        std::vector<std::string> verbose;
        std::vector<std::string> info;
        std::string error; // empty: succeeds
    };
    const std::size_t big = 1 << 20;
    const Case cases[] = {
        {"fence, no profile", std::nullopt, site(""), {"n1"}, big, std::nullopt, false, {}, {}, ""},
        {"async", "async", site(""), {"n1"}, big, "async:24000-25999", false, {}, {}, ""},
        {"the site's default",
         std::nullopt,
         site("", "async"),
         {"n1"},
         big,
         "async:24000-25999",
         false,
         {},
         {},
         ""},
        {"a bad mode",
         "x",
         site(""),
         {"n1"},
         big,
         std::nullopt,
         false,
         {},
         {},
         "--modex=x is not a modex mode; use fence (the MPI library's own data exchange at "
         "MPI_Init), async (each peer's data fetched at first contact) or profile "},
        {"profile without one",
         "profile",
         site(""),
         {"n1"},
         big,
         std::nullopt,
         false,
         {},
         {},
         kNoProfile},
        {"the profile served",
         std::nullopt,
         site("/etc/profile.yaml"),
         {"n2", "n3"},
         big,
         std::nullopt,
         true,
         {},
         {},
         ""},
        {"--modex=profile",
         "profile",
         site("/etc/profile.yaml"),
         {"n1"},
         big,
         "profile:24000-25999",
         true,
         {},
         {},
         ""},
        {"no entry for the nodes",
         std::nullopt,
         site("/etc/profile.yaml"),
         {"n7"},
         big,
         std::nullopt,
         false,
         {"not serving the site's interconnect profile: /etc/profile.yaml has no entry for the "
          "step's nodes"},
         {},
         ""},
        {"no entry, --modex=profile",
         "profile",
         site("/etc/profile.yaml"),
         {"n7"},
         big,
         std::nullopt,
         false,
         {},
         {},
         "--modex=profile cannot use the site's interconnect profile: /etc/profile.yaml has no "
         "entry for the step's nodes; use --modex=async, or ask the site to update the profile"},
        {"an unreadable profile is said always",
         std::nullopt,
         site("/etc/gone.yaml"),
         {"n1"},
         big,
         std::nullopt,
         false,
         {},
         {"not serving the site's interconnect profile: /etc/gone.yaml: No such file or "
          "directory"},
         ""},
        {"too big for the environment",
         std::nullopt,
         site("/etc/profile.yaml"),
         {"n1", "n2"},
         10,
         std::nullopt,
         false,
         {"(too big)"},
         {},
         ""},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        auto settings = modexEnvironment(c.modex, c.site, c.nodes, readProfile, c.environmentBytes);
        if (!c.error.empty()) {
            ASSERT_FALSE(settings);
            EXPECT_EQ(settings.error().message.rfind(c.error, 0), 0u) << settings.error().message;
            continue;
        }
        ASSERT_TRUE(settings) << settings.error().message;
        std::optional<std::string> modexVariable;
        bool profileServed = false;
        for (const EnvironmentChange &change : settings->changes) {
            if (change.name == kModexVariable)
                modexVariable = change.value;
            if (change.name == kProfileVariables[0])
                profileServed = true;
        }
        EXPECT_EQ(modexVariable, c.modexVariable);
        EXPECT_EQ(profileServed, c.profileServed);
        if (c.verbose == std::vector<std::string>{"(too big)"}) {
            ASSERT_EQ(settings->verbose.size(), 1u);
            EXPECT_NE(settings->verbose[0].find("more than the 10 the job environment can carry"),
                      std::string::npos)
                << settings->verbose[0];
        } else {
            EXPECT_EQ(settings->verbose, c.verbose);
        }
        EXPECT_EQ(settings->info, c.info);
    }
}

} // namespace
} // namespace stepmap::plugin
