// The site policy file (site/site_file.hpp, stepmap.yaml(5)):
// every key's effect, every refusal with its file, line and key path, the
// file checks, the serve line stepmap.so reads without YAML, and the example
// file contrib/site/stepmap.yaml.example.

#include "site/site_file.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "protocol/modex/modex_mode.hpp"
#include "request/map_policy.hpp"
#include "site/serve_line.hpp"
#include "site_config.hpp"

namespace stepmap::plugin {
namespace {

constexpr const char kFile[] = "/etc/slurm/stepmap.yaml";

SitePolicy parsed(const std::string &text) {
    auto policy = parseSitePolicy(text, kFile);
    EXPECT_TRUE(policy) << text << "\n" << (policy ? "" : policy.error().message);
    return policy ? *policy : SitePolicy{};
}

std::string refusal(const std::string &text) {
    auto policy = parseSitePolicy(text, kFile);
    EXPECT_FALSE(policy) << text;
    return policy ? "" : policy.error().message;
}

// Every field, so that two policies can be compared whole.
std::string described(const SitePolicy &p) {
    const auto opt = [](const auto &value) {
        std::ostringstream out;
        if (value)
            out << *value;
        else
            out << "-";
        return out.str();
    };
    std::ostringstream out;
    out << "path=" << p.path << " serve=" << static_cast<int>(p.serve) << " map_by=" << opt(p.mapBy)
        << " rank_by=" << opt(p.rankBy) << " bind_to=" << opt(p.bindTo) << " modex=" << opt(p.modex)
        << " oversubscribe=" << p.allowOversubscribe << " overbook=" << p.allowOverbook
        << " user_cpumap=" << p.allowUserCpuMap << " ranks_per_node=" << p.maxRanksPerNode
        << " ranks=" << p.maxRanks << " profile=" << opt(p.profile)
        << " modex_ports=" << opt(p.modexPorts) << " server_start=" << opt(p.serverStartTimeoutSec)
        << " direct_modex=" << opt(p.dmodexTimeoutSec) << " log_dir=" << opt(p.logDir)
        << " level=" << static_cast<int>(p.logLevel);
    return out.str();
}

TEST(SiteFile, AnEmptyFileIsTheBuiltInPolicy) {
    SitePolicy builtIn;
    builtIn.path = kFile;
    for (const char *text : {"", "\n\n", "# nothing set\n", "---\n", "---\n...\n", "~\n"})
        EXPECT_EQ(described(parsed(text)), described(builtIn)) << text;
    EXPECT_EQ(builtIn.serve, ServedSteps::Options);
    EXPECT_TRUE(builtIn.allowOversubscribe && builtIn.allowOverbook);
    EXPECT_FALSE(builtIn.allowUserCpuMap); // psmgmt's allowUserMap is off unless set
    EXPECT_EQ(builtIn.logLevel, LogLevel::Info);
}

struct Good {
    const char *key;
    std::string text;
    std::function<bool(const SitePolicy &)> holds;
};

const std::vector<Good> &goodValues() {
    static const std::vector<Good> rows = {
        {"serve", "serve: pmix\n", [](auto &p) { return p.serve == ServedSteps::Pmix; }},
        {"serve", "serve: options\n", [](auto &p) { return p.serve == ServedSteps::Options; }},
        {"defaults.map_by", "defaults:\n  map_by: ppr:2:package:PE=2\n",
         [](auto &p) { return p.mapBy == "ppr:2:package:PE=2"; }},
        {"defaults.map_by", "defaults: {map_by: node}\n",
         [](auto &p) { return p.mapBy == "node" && !p.rankBy; }},
        {"defaults.rank_by", "defaults:\n  rank_by: fill\n",
         [](auto &p) { return p.rankBy == "fill" && !p.mapBy; }},
        {"defaults.bind_to", "defaults:\n  bind_to: core:overload-allowed\n",
         [](auto &p) { return p.bindTo == "core:overload-allowed"; }},
        {"defaults.modex", "defaults:\n  modex: async\n",
         [](auto &p) { return p.modex == "async"; }},
        {"defaults.with_ft", "defaults:\n  with_ft: ulfm\n",
         [](auto &p) { return p.withFt == "ulfm" && !p.modex; }},
        {"allow.oversubscribe", "allow:\n  oversubscribe: false\n",
         [](auto &p) { return !p.allowOversubscribe && p.allowOverbook; }},
        {"allow.overbook", "allow:\n  overbook: false\n",
         [](auto &p) { return p.allowOversubscribe && !p.allowOverbook; }},
        {"allow.overbook", "allow: {overbook: true, oversubscribe: true}\n",
         [](auto &p) { return p.allowOversubscribe && p.allowOverbook; }},
        {"allow.user_cpumap", "allow:\n  user_cpumap: true\n",
         [](auto &p) { return p.allowUserCpuMap && p.allowOverbook; }},
        {"allow.user_cpumap", "allow: {user_cpumap: false}\n",
         [](auto &p) { return !p.allowUserCpuMap; }},
        {"limits.ranks_per_node", "limits:\n  ranks_per_node: 64\n",
         [](auto &p) { return p.maxRanksPerNode == 64 && p.maxRanks == 0; }},
        {"limits.ranks_per_node", "limits:\n  ranks_per_node: 1000000\n",
         [](auto &p) { return p.maxRanksPerNode == 1000000; }},
        {"limits.ranks", "limits:\n  ranks: 10000000\n",
         [](auto &p) { return p.maxRanks == 10000000 && p.maxRanksPerNode == 0; }},
        {"profile", "profile: /etc/slurm/stepmap-profile.yaml\n",
         [](auto &p) { return p.profile == "/etc/slurm/stepmap-profile.yaml"; }},
        {"modex_ports", "modex_ports: 24000-25999\n",
         [](auto &p) { return p.modexPorts == "24000-25999"; }},
        {"modex_ports", "modex_ports: '1024-65535'\n",
         [](auto &p) { return p.modexPorts == "1024-65535"; }},
        {"timeouts.server_start", "timeouts:\n  server_start: 120\n",
         [](auto &p) { return p.serverStartTimeoutSec == 120 && !p.dmodexTimeoutSec; }},
        {"timeouts.direct_modex", "timeouts:\n  direct_modex: 86400\n",
         [](auto &p) { return p.dmodexTimeoutSec == 86400 && !p.serverStartTimeoutSec; }},
        {"timeouts.direct_modex", "timeouts: {direct_modex: 1}\n",
         [](auto &p) { return p.dmodexTimeoutSec == 1; }},
        {"log.dir", "log:\n  dir: /var/log/stepmap\n",
         [](auto &p) { return p.logDir == "/var/log/stepmap" && p.logLevel == LogLevel::Info; }},
        {"log.level", "log:\n  level: debug\n",
         [](auto &p) { return p.logLevel == LogLevel::Debug && !p.logDir; }},
        {"log.level", "log:\n  level: error\n",
         [](auto &p) { return p.logLevel == LogLevel::Error; }},
        {"log.level", "log:\n  level: info\n",
         [](auto &p) { return p.logLevel == LogLevel::Info; }},
    };
    return rows;
}

TEST(SiteFile, EveryKeyTakesEffect) {
    for (const auto &row : goodValues()) {
        const SitePolicy policy = parsed(row.text);
        EXPECT_TRUE(row.holds(policy)) << row.text << described(policy);
        EXPECT_EQ(policy.path, kFile);
    }
}

TEST(SiteFile, EveryKnownKeyIsTested) {
    for (const char *key : kSitePolicyKeys) {
        bool tested = false;
        for (const auto &row : goodValues())
            tested = tested || std::string(row.key) == key;
        EXPECT_TRUE(tested) << key << " has no row in goodValues()";
    }
}

TEST(SiteFile, SectionsWithEveryKeyLeftOutAreEmpty) {
    SitePolicy builtIn;
    builtIn.path = kFile;
    EXPECT_EQ(described(parsed("defaults:\n#  map_by: core\nallow:\nlimits:\ntimeouts:\nlog:\n")),
              described(builtIn));
    EXPECT_EQ(described(parsed("defaults: {}\nallow: {}\n")), described(builtIn));
}

TEST(SiteFile, AllKeysTogether) {
    const SitePolicy p = parsed("serve: pmix\n"
                                "defaults:\n"
                                "  map_by: numa\n"
                                "  rank_by: span\n"
                                "  bind_to: numa\n"
                                "  modex: profile\n"
                                "allow: {oversubscribe: false, overbook: false}\n"
                                "limits:\n"
                                "  ranks_per_node: 128\n"
                                "  ranks: 4096\n"
                                "profile: /etc/slurm/p.yaml\n"
                                "modex_ports: 30000-30999\n"
                                "timeouts:\n"
                                "  server_start: 45\n"
                                "  direct_modex: 90\n"
                                "log:\n"
                                "  dir: /var/log/stepmap\n"
                                "  level: debug\n");
    EXPECT_EQ(described(p), "path=/etc/slurm/stepmap.yaml serve=1 map_by=numa rank_by=span "
                            "bind_to=numa modex=profile oversubscribe=0 overbook=0 user_cpumap=0 "
                            "ranks_per_node=128 ranks=4096 profile=/etc/slurm/p.yaml "
                            "modex_ports=30000-30999 server_start=45 direct_modex=90 "
                            "log_dir=/var/log/stepmap level=2");
}

std::string at(int line, const std::string &rest) {
    return std::string(kFile) + ":" + std::to_string(line) + ": " + rest;
}

TEST(SiteFile, BadValuesNameFileLineKeyAndFix) {
    struct Bad {
        std::string text, message;
    };
    const std::vector<Bad> rows = {
        {"serve: all\n",
         at(1, "serve: 'all' is not options or pmix; serve: options serves the steps that use "
               "stepmap's options, serve: pmix also every step that asks for PMIx")},
        {"# policy\ndefaults:\n  map_by: nod\n",
         at(3, "defaults.map_by: 'nod' is not a mapping policy: " +
                   parseMapBy("nod").error().message)},
        {"defaults:\n  rank_by: core\n",
         at(2, "defaults.rank_by: 'core' is not a ranking policy: " +
                   parseRankBy("core").error().message)},
        {"defaults:\n  bind_to: cores\n",
         at(2, "defaults.bind_to: 'cores' is not a binding policy: " +
                   parseBindTo("cores").error().message)},
        {"defaults: {modex: sync}\n",
         at(1, "defaults.modex: 'sync' is not a modex mode: " +
                   modex::parseModexMode("sync", "--modex").error().message)},
        {"defaults:\n  with_ft: checkpoint\n",
         at(2, "defaults.with_ft: 'checkpoint' is not a fault tolerance mode: use ulfm or none")},
        {"allow:\n  oversubscribe: yes\n",
         at(2, "allow.oversubscribe: 'yes' is not true or false")},
        {"allow:\n  overbook: 1\n", at(2, "allow.overbook: '1' is not true or false")},
        {"limits:\n  ranks_per_node: 1000001\n",
         at(2, "limits.ranks_per_node: '1000001' is above 1000000; 0 means no limit")},
        {"limits:\n  ranks_per_node: -1\n",
         at(2, "limits.ranks_per_node: '-1' is not a number; 0 means no limit")},
        {"limits:\n  ranks: 10000001\n",
         at(2, "limits.ranks: '10000001' is above 10000000; 0 means no limit")},
        {"profile: stepmap-profile.yaml\n",
         at(1, "profile: 'stepmap-profile.yaml' is not an absolute path; name it from /, e.g. "
               "/etc/slurm/stepmap-profile.yaml")},
        {"modex_ports: 900-1000\n",
         at(1, "modex_ports: '900-1000' is not a range of TCP ports BASE-END within 1024-65535; "
               "e.g. modex_ports: 24000-25999")},
        {"modex_ports: 41000\n",
         at(1, "modex_ports: '41000' is not a range of TCP ports BASE-END within 1024-65535; "
               "e.g. modex_ports: 24000-25999")},
        {"modex_ports: 30000-20000\n",
         at(1, "modex_ports: '30000-20000' is not a range of TCP ports BASE-END within "
               "1024-65535; e.g. modex_ports: 24000-25999")},
        {"timeouts:\n  server_start: 0\n",
         at(2, "timeouts.server_start: '0' is not seconds between 1 and 86400; e.g. 60")},
        {"timeouts:\n  direct_modex: 86401\n",
         at(2, "timeouts.direct_modex: '86401' is not seconds between 1 and 86400; e.g. 60")},
        {"timeouts:\n  direct_modex: 30s\n",
         at(2, "timeouts.direct_modex: '30s' is not seconds between 1 and 86400; e.g. 60")},
        {"log:\n  dir: log\n",
         at(2, "log.dir: 'log' is not an absolute path; name it from /, e.g. /var/log/stepmap")},
        {"log:\n  level: verbose\n",
         at(2, "log.level: 'verbose' is not a log level; use error, info or debug")},
        {"log:\n  level: ''\n",
         at(2, "log.level: '' is not a log level; use error, info or debug")},
        {"limits:\n  ranks: ~\n", at(2, "limits.ranks: no value; give one or remove the key")},
        {"profile:\n", at(1, "profile: no value; give one or remove the key")},
    };
    for (const auto &row : rows)
        EXPECT_EQ(refusal(row.text), row.message) << row.text;
}

TEST(SiteFile, WrongTypesAreRefused) {
    EXPECT_EQ(
        refusal("defaults: slot\n"),
        at(1,
           "defaults: expected a map of keys (map_by, rank_by, bind_to, modex, with_ft), each on "
           "a line of its own indented below defaults:"));
    EXPECT_EQ(refusal("allow:\n  - oversubscribe\n"),
              at(2, "allow: expected a map of keys (oversubscribe, overbook, user_cpumap), each on "
                    "a line of "
                    "its own indented below allow:"));
    EXPECT_EQ(refusal("defaults:\n  map_by: [slot]\n"),
              at(2, "defaults.map_by: expected a single value"));
    EXPECT_EQ(refusal("profile: {path: /etc/p.yaml}\n"), at(1, "profile: expected a single value"));
    EXPECT_EQ(refusal("log:\n  level:\n    name: info\n"),
              at(3, "log.level: expected a single value"));
    const std::string topLevel = "expected a map of keys at the top level (serve, defaults, "
                                 "allow, limits, profile, modex_ports, timeouts, log), one "
                                 "`key: value` a line; see stepmap.yaml(5)";
    EXPECT_EQ(refusal("- serve: pmix\n"), at(1, topLevel));
    EXPECT_EQ(refusal("# words\nserve pmix\n"), at(2, topLevel));
}

TEST(SiteFile, UnknownKeysListTheKnownOnes) {
    EXPECT_EQ(refusal("colour: blue\n"),
              at(1, "colour: unknown key; known: serve, defaults, allow, limits, profile, "
                    "modex_ports, timeouts, log"));
    EXPECT_EQ(
        refusal("defaults:\n  mapby: slot\n"),
        at(2, "defaults.mapby: unknown key; known: map_by, rank_by, bind_to, modex, with_ft"));
    EXPECT_EQ(refusal("allow: {oversubscribe: true, overbooking: true}\n"),
              at(1, "allow.overbooking: unknown key; known: oversubscribe, overbook, user_cpumap"));
    EXPECT_EQ(refusal("limits:\n  ranks: 1\n  nodes: 2\n"),
              at(3, "limits.nodes: unknown key; known: ranks_per_node, ranks"));
    EXPECT_EQ(refusal("timeouts:\n  dmodex: 2\n"),
              at(2, "timeouts.dmodex: unknown key; known: server_start, direct_modex"));
    EXPECT_EQ(refusal("log:\n  file: /x\n"), at(2, "log.file: unknown key; known: dir, level"));
}

TEST(SiteFile, RepeatedKeysAreRefused) {
    EXPECT_EQ(refusal("profile: /a\nprofile: /b\n"), at(2, "profile: repeated key"));
    EXPECT_EQ(refusal("limits:\n  ranks: 1\n  ranks: 2\n"), at(3, "limits.ranks: repeated key"));
}

TEST(SiteFile, SyntaxErrorsAndSecondDocumentsAreLocated) {
    EXPECT_TRUE(refusal("defaults:\n  map_by: [slot\n").starts_with(std::string(kFile) + ":3: "));
    EXPECT_TRUE(refusal("serve: 'pmix\n").starts_with(std::string(kFile) + ":"));
    const std::string second = "a second YAML document (after a line ---); the site policy file "
                               "is one document: merge the two or remove the second";
    EXPECT_EQ(refusal("serve: options\n---\nserve: pmix\n"), at(3, second));
    EXPECT_EQ(refusal("log: {level: info}\n---\n"), at(3, second));
}

// stepmap.so decides with serveHint; the plugin proper with the YAML. A text
// the parser accepts must read the same both ways.
TEST(SiteFile, TheServeLineReadsAsTheYaml) {
    const std::optional<ServedSteps> refused;
    const auto pmix = ServedSteps::Pmix;
    const auto options = ServedSteps::Options;
    struct Row {
        std::string text;
        std::optional<ServedSteps> serve; // nothing: refused
    };
    const std::vector<Row> rows = {
        {"serve: pmix\n", pmix},
        {"serve: pmix", pmix},
        {"serve: 'pmix'\n", pmix},
        {"serve: \"pmix\"  # comment\n", pmix},
        {"serve: pmix # stepmap's server for every PMIx step\n", pmix},
        {"serve: pmix   \n", pmix},
        {"serve:\tpmix\n", pmix},
        {"serve : pmix\n", pmix},
        {"serve: pmix\r\nlimits:\r\n  ranks: 4\r\n", pmix},
        {"\xEF\xBB\xBFserve: pmix\n", pmix},
        {"---\nserve: pmix\n", pmix},
        {"# serve: options\nlog:\n  level: info  # serve: options\nserve: pmix\n", pmix},
        {"serve: 'options' # not yet\n", options},
        {"serve: options\n", options},
        {"", options},
        {"# serve: pmix\n", options},
        {"log:\n  level: info\n", options},
        {"profile: /etc/serve: pmix\n", refused},
        {"serve :pmix\n", refused},
        {"serve:pmix\n", refused},
        {"serveX: pmix\n", refused},
        {"defaults:\n  serve: pmix\n", refused},
        {"log:\n  level: info\n  serve: pmix\n", refused},
        {"{serve: pmix}\n", refused},
        {"{}\n", refused},
        {"{log: {level: info}}\n", refused},
        {"serve:\n  pmix\n", refused},
        {"serve:\n", refused},
        {"serve: &a pmix\n", refused},
        {"serve: !!str pmix\n", refused},
        {"serve: \"pm\\x69x\"\n", refused},
        {"\"serve\": pmix\n", refused},
        {"'serve': pmix\n", refused},
        {"? serve\n: pmix\n", refused},
        {"serve: pmix\n---\nserve: options\n", refused},
        {"profile: \"/a\nserve: pmix\"\n", refused},
        {"profile: \"/a\nserve: options\"\nserve: pmix\n", refused},
        {"serve: PMIX\n", refused},
        {"serve: \"\"\n", refused},
        {"serve: [pmix]\n", refused},
    };
    for (const auto &row : rows) {
        const auto policy = parseSitePolicy(row.text, kFile);
        EXPECT_EQ(policy.ok(), row.serve.has_value())
            << row.text << (policy ? "" : "\n" + policy.error().message);
        if (!policy)
            continue;
        EXPECT_EQ(policy->serve, *row.serve) << row.text;
        const ServeHint hint = serveHint(row.text.data(), row.text.size());
        EXPECT_EQ(hint, policy->serve == ServedSteps::Pmix ? kServePmix : kServeOptions)
            << row.text;
    }
}

TEST(SiteFile, AServeLineYamlReadsOtherwiseSaysHowToWriteIt) {
    const std::string fix =
        "write `serve: pmix` (or `serve: options`) at the start of a line of its own, the value "
        "plain or quoted on the same line, with no anchor, alias or tag: stepmap.so reads this "
        "line without a YAML parser";
    EXPECT_EQ(refusal("serve:\n  pmix\n"), at(1, "serve: " + fix));
    EXPECT_EQ(refusal("serve: &a pmix\n"),
              at(1, "serve: stepmap.so reads this file as neither serve: pmix nor serve: "
                    "options, YAML as serve: pmix; " +
                        fix));
    EXPECT_EQ(
        refusal("\"serve\": pmix\n"),
        at(1, "serve: stepmap.so reads this file as serve: options, YAML as serve: pmix; " + fix));
    EXPECT_EQ(refusal("profile: \"/a\nserve: pmix\"\n"),
              at(2, "serve: stepmap.so reads this file as neither serve: pmix nor serve: "
                    "options, YAML as serve: options; " +
                        fix));
    EXPECT_EQ(refusal("{serve: pmix}\n"),
              at(1, "the top level is written in flow style ({...}); write one key a line "
                    "(block style): stepmap.so reads the serve: line without a YAML parser"));
}

TEST(ServeHint, ReadsTheFirstServeLine) {
    const auto hint = [](const std::string &text) { return serveHint(text.data(), text.size()); };
    EXPECT_EQ(hint(""), kServeOptions);
    EXPECT_EQ(hint("serve: pmix"), kServePmix);
    EXPECT_EQ(hint("serve: options\nserve: pmix\n"), kServeOptions);
    EXPECT_EQ(hint("serve: 'pmix' # x"), kServePmix);
    EXPECT_EQ(hint("serve: 'pmix' x"), kServeUnclear);
    EXPECT_EQ(hint("serve: 'pmix"), kServeUnclear);
    EXPECT_EQ(hint("serve: pmix#x"), kServeUnclear);
    EXPECT_EQ(hint("serve: "), kServeUnclear);
    EXPECT_EQ(hint("serves: pmix"), kServeOptions);
    EXPECT_EQ(hint(" serve: pmix"), kServeOptions);
    EXPECT_EQ(hint("{serve: options}"), kServeUnclear);
    EXPECT_EQ(hint("x: 1\r\nserve: pmix\r\n"), kServePmix);
    // The length bounds the text: no terminating NUL needed, NUL is a byte.
    EXPECT_EQ(serveHint("serve: pmixx", 11), kServePmix);
    EXPECT_EQ(hint(std::string("serve: pm\0ix", 12)), kServeUnclear);
    std::size_t line = 0;
    EXPECT_EQ(serveHintAt("a: 1\n\nserve: pmix\n", 18, &line), kServePmix);
    EXPECT_EQ(line, 3u);
    EXPECT_EQ(serveHintAt("a: 1\n", 5, &line), kServeOptions);
    EXPECT_EQ(line, 0u);
}

// Files in a directory of their own, removed with it, each with the mode
// the test gives (chmod, so the umask does not count).
class SiteFileOnDisk : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = std::filesystem::temp_directory_path() / "site_file_test.XXXXXX";
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string &name, const std::string &text, mode_t mode) {
        const std::string path = dir_ + "/" + name;
        std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
        EXPECT_EQ(chmod(path.c_str(), mode), 0) << path;
        return path;
    }

    std::string dir_;
};

TEST_F(SiteFileOnDisk, AFileOnlyItsOwnerCanWriteIsRead) {
    const std::string path = write("stepmap.yaml", "serve: pmix\n", 0644);
    const auto policy = readSitePolicy(path);
    ASSERT_TRUE(policy) << policy.error().message;
    EXPECT_EQ(policy->serve, ServedSteps::Pmix);
    EXPECT_EQ(policy->path, path);
    EXPECT_TRUE(readSitePolicy(write("private.yaml", "", 0600)));
    EXPECT_TRUE(readSitePolicy(write("read-only.yaml", "", 0444)));
}

TEST_F(SiteFileOnDisk, AFileOthersCanWriteIsRefused) {
    for (const auto &[mode, who] :
         std::vector<std::pair<mode_t, std::string>>{{0666, "every user"},
                                                     {0646, "every user"},
                                                     {0664, "its group"},
                                                     {0620, "its group"}}) {
        const std::string path = write("writable.yaml", "serve: pmix\n", mode);
        char octal[8];
        std::snprintf(octal, sizeof octal, "%04o", static_cast<unsigned>(mode));
        EXPECT_EQ(readSitePolicy(path).error().message,
                  path + ": the site policy file is writable by " + who + " (mode " + octal +
                      "), who could change the policy for everyone; chmod go-w " + path);
    }
}

TEST_F(SiteFileOnDisk, AFileOwnedByAnotherUserIsRefused) {
    if (geteuid() != 0)
        GTEST_SKIP() << "giving a file to another user needs root";
    const std::string path = write("theirs.yaml", "serve: pmix\n", 0644);
    ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
    EXPECT_EQ(readSitePolicy(path).error().message,
              path +
                  ": the site policy file is owned by uid 65534, who is neither root nor the "
                  "user reading it (uid 0) and could change the policy for everyone; chown "
                  "root " +
                  path);
}

TEST_F(SiteFileOnDisk, OnlyRegularFilesUpTo64KiBAreRead) {
    const std::string comment = "# " + std::string(98, 'x') + "\n";
    std::string full;
    while (full.size() + comment.size() <= kMaxSitePolicyBytes)
        full += comment;
    full += std::string(kMaxSitePolicyBytes - full.size() - 1, '#') + "\n";
    ASSERT_EQ(full.size(), kMaxSitePolicyBytes);
    EXPECT_TRUE(readSitePolicy(write("full.yaml", full, 0644)));
    const std::string big = write("big.yaml", full + "\n", 0644);
    EXPECT_EQ(readSitePolicy(big).error().message,
              big + ": the site policy file is larger than 64 KiB; a policy is a few dozen lines");

    EXPECT_EQ(readSitePolicy(dir_).error().message,
              dir_ + ": the site policy file is not a regular file; name the file itself in "
                     "plugstack.conf's config=");
    const std::string fifo = dir_ + "/fifo";
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    EXPECT_EQ(readSitePolicy(fifo).error().message,
              fifo + ": the site policy file is not a regular file; name the file itself in "
                     "plugstack.conf's config=");
    EXPECT_EQ(readSitePolicy(dir_ + "/missing.yaml").error().message,
              dir_ + "/missing.yaml: cannot open the site policy file: No such file or directory");
}

TEST_F(SiteFileOnDisk, ErrorsInTheFileNameIt) {
    const std::string path = write("bad.yaml", "serve: pmix\nlimits:\n  ranks: many\n", 0644);
    EXPECT_EQ(readSitePolicy(path).error().message,
              path + ":3: limits.ranks: 'many' is not a number; 0 means no limit");
}

std::string exampleText() {
    const char *path = std::getenv("STEPMAP_SITE_EXAMPLE");
    EXPECT_NE(path, nullptr) << "STEPMAP_SITE_EXAMPLE names contrib/site/stepmap.yaml.example";
    std::ifstream file(path ? path : "");
    EXPECT_TRUE(file) << path;
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// The example, installed as it is, changes nothing.
TEST(SiteFileExample, IsTheBuiltInPolicy) {
    const std::string text = exampleText();
    ASSERT_FALSE(text.empty());
    SitePolicy builtIn;
    builtIn.path = kFile;
    EXPECT_EQ(described(parsed(text)), described(builtIn));
}

// "#key: value" lines are settings left out; set, they are valid, and those
// with a built-in value (the plugstack.conf defaults) hold it.
TEST(SiteFileExample, ItsLeftOutSettingsAreValidAndHoldTheBuiltInValues) {
    const std::regex leftOut("^#( *[a-z_]+: .*)$");
    std::istringstream lines(exampleText());
    std::string uncommented, line;
    int settings = 0;
    while (std::getline(lines, line)) {
        std::smatch match;
        if (std::regex_match(line, match, leftOut)) {
            line = match[1];
            ++settings;
        }
        uncommented += line + "\n";
    }
    EXPECT_GE(settings, 8);
    const SitePolicy policy = parsed(uncommented);
    const auto builtIn = parseSiteConfig({}, "/x");
    ASSERT_TRUE(builtIn);
    EXPECT_EQ(policy.modexPorts, builtIn->modexPorts);
    EXPECT_EQ(policy.serverStartTimeoutSec, builtIn->serverStartTimeoutSec);
    EXPECT_EQ(policy.dmodexTimeoutSec, builtIn->dmodexTimeoutSec);
    EXPECT_EQ(policy.modex, "fence");
    // Every key is in the example, set or left out.
    for (const char *key : kSitePolicyKeys) {
        const std::string path = key;
        const std::string last = path.substr(path.rfind('.') + 1);
        EXPECT_NE(uncommented.find(last + ": "), std::string::npos) << key;
    }
}

} // namespace
} // namespace stepmap::plugin
