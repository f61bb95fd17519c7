#include "site/site_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "base/parse_number.hpp"
#include "base/quote.hpp"
#include "modexless/pinned_ports.hpp"
#include "os/unique_fd.hpp"
#include "os/user_file.hpp"
#include "protocol/modex/modex_mode.hpp"
#include "request/map_policy.hpp"
#include "site/serve_line.hpp"
#include "yaml/strict_yaml.hpp"

namespace stepmap::plugin {
namespace {

using yaml::Field;
using yaml::Place;
using yaml::StrictMap;

constexpr const char kServeLineFix[] =
    "write `serve: pmix` (or `serve: options`) at the start of a line of its own, the value plain "
    "or quoted on the same line, with no anchor, alias or tag: stepmap.so reads this line "
    "without a YAML parser";

// The keys of kSitePolicyKeys directly under `section` ("" for the top
// level), in order, once each.
std::vector<std::string> keysUnder(std::string_view section) {
    std::vector<std::string> keys;
    for (std::string_view path : kSitePolicyKeys) {
        std::string_view key = path;
        if (!section.empty()) {
            if (!path.starts_with(section) || path.size() <= section.size() ||
                path[section.size()] != '.')
                continue;
            key = path.substr(section.size() + 1);
        }
        key = key.substr(0, key.find('.'));
        if (std::find(keys.begin(), keys.end(), key) == keys.end())
            keys.emplace_back(key);
    }
    return keys;
}

std::string joined(const std::vector<std::string> &words) {
    std::string text;
    for (const auto &word : words)
        text += (text.empty() ? "" : ", ") + word;
    return text;
}

// The value of `key`, if given; a key left without a value is refused.
std::optional<Field> given(const StrictMap &map, const char *key) {
    auto field = map.find(key);
    if (field && field->first.IsNull())
        field->second.fail(map.keyMark(key), "no value; give one or remove the key");
    return field;
}

std::optional<Field> given(const std::optional<StrictMap> &map, const char *key) {
    return map ? given(*map, key) : std::nullopt;
}

// A section (defaults:, allow:, ...): a map of its known keys, or nothing
// (its keys all left out or commented out).
std::optional<StrictMap> section(const StrictMap &top, const char *name) {
    const auto field = top.find(name);
    if (!field || field->first.IsNull())
        return std::nullopt;
    const auto keys = keysUnder(name);
    if (!field->first.IsMap()) {
        field->second.fail(field->first, "expected a map of keys (" + joined(keys) +
                                             "), each on a line of its own indented below " + name +
                                             ":");
    }
    return StrictMap(field->first, field->second, keys, yaml::UnknownKey::NamedWithKnownKeys);
}

// A word the option's own parser accepts, kept as written.
template <class Parse>
std::optional<std::string> policyWord(const std::optional<StrictMap> &map, const char *key,
                                      const char *what, Parse parse) {
    const auto field = given(map, key);
    if (!field)
        return std::nullopt;
    std::string text = yaml::scalar(*field);
    const auto parsed = parse(text);
    if (!parsed)
        field->second.fail(field->first,
                           quoted(text) + " is not " + what + ": " + parsed.error().message);
    return text;
}

bool isAbsolutePath(const std::string &text) {
    return !text.empty() && text[0] == '/';
}

std::optional<std::string> absolutePath(const std::optional<Field> &field, const char *example) {
    if (!field)
        return std::nullopt;
    const std::string text = yaml::scalar(*field);
    if (!isAbsolutePath(text))
        field->second.fail(field->first, quoted(text) +
                                             " is not an absolute path; name it from /, e.g. " +
                                             example);
    return text;
}

std::optional<int> seconds(const std::optional<StrictMap> &map, const char *key) {
    const auto field = given(map, key);
    if (!field)
        return std::nullopt;
    const std::string text = yaml::scalar(*field);
    const auto value = detail::parseCount(text, 86400);
    if (!value)
        field->second.fail(field->first,
                           quoted(text) + " is not seconds between 1 and 86400; e.g. 60");
    return *value;
}

int limit(const std::optional<StrictMap> &map, const char *key, int most) {
    const auto field = given(map, key);
    if (!field)
        return 0;
    return yaml::smallNumber(*field, most, "0 means no limit");
}

bool allowed(const std::optional<StrictMap> &map, const char *key, bool builtIn = true) {
    const auto field = given(map, key);
    if (!field)
        return builtIn;
    return yaml::truth(*field);
}

std::optional<std::string> portRange(const std::optional<Field> &field) {
    if (!field)
        return std::nullopt;
    const std::string text = yaml::scalar(*field);
    const auto range = modexless::parsePortRange(text, "modex_ports");
    if (!range || range->first < 1024)
        field->second.fail(field->first, quoted(text) +
                                             " is not a range of TCP ports BASE-END within "
                                             "1024-65535; e.g. modex_ports: 24000-25999");
    return text;
}

LogLevel logLevel(const std::optional<StrictMap> &map) {
    const auto field = given(map, "level");
    if (!field)
        return LogLevel::Info;
    const std::string text = yaml::scalar(*field);
    if (text == "error")
        return LogLevel::Error;
    if (text == "debug")
        return LogLevel::Debug;
    if (text != "info")
        yaml::failNot(*field, text, "a log level; use error, info or debug");
    return LogLevel::Info;
}

ServedSteps served(const StrictMap &top) {
    const auto field = top.find("serve");
    if (!field)
        return ServedSteps::Options;
    const YAML::Mark key = top.keyMark("serve");
    if (key.column != 0 || !field->first.IsScalar() || field->first.Mark().line != key.line)
        field->second.fail(key, kServeLineFix);
    const std::string text = yaml::scalar(*field);
    if (text == "pmix")
        return ServedSteps::Pmix;
    if (text != "options")
        yaml::failNot(*field, text,
                      "options or pmix; serve: options serves the steps that use stepmap's "
                      "options, serve: pmix also every step that asks for PMIx");
    return ServedSteps::Options;
}

// The file is refused where stepmap.so's reading of the serve line
// (serve_line.hpp) and the YAML differ, e.g. a quoted key, an escape in a
// double-quoted value, a second `serve:` line inside a multi-line string.
void checkServeLine(std::string_view text, const YAML::Mark &serveKey, const Place &top,
                    ServedSteps serve) {
    std::size_t line = 0;
    const ServeHint hint = serveHintAt(text.data(), text.size(), &line);
    if (hint == (serve == ServedSteps::Pmix ? kServePmix : kServeOptions))
        return;
    YAML::Mark mark = serveKey;
    if (line != 0) {
        mark = YAML::Mark();
        mark.line = static_cast<int>(line - 1);
    }
    const char *read = hint == kServePmix      ? "serve: pmix"
                       : hint == kServeOptions ? "serve: options"
                                               : "neither serve: pmix nor serve: options";
    top.key("serve").fail(
        mark, std::string("stepmap.so reads this file as ") + read + ", YAML as serve: " +
                  (serve == ServedSteps::Pmix ? "pmix" : "options") + "; " + kServeLineFix);
}

SitePolicy readPolicy(std::string_view text, std::string_view fileName) {
    std::size_t itemBudget = text.size();
    const Place top(fileName, "", &itemBudget);
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    if (documents.size() > 1) {
        top.fail(documents[1],
                 "a second YAML document (after a line ---); the site policy file is one "
                 "document: merge the two or remove the second");
    }
    SitePolicy policy;
    policy.path = std::string(fileName);
    const YAML::Node root = documents.empty() ? YAML::Node() : documents[0];
    YAML::Mark serveKey = YAML::Mark::null_mark();
    if (!root.IsNull()) {
        if (!root.IsMap()) {
            top.fail(root, "expected a map of keys at the top level (" + joined(keysUnder("")) +
                               "), one `key: value` a line; see stepmap.yaml(5)");
        }
        if (root.Style() == YAML::EmitterStyle::Flow) {
            top.fail(root, "the top level is written in flow style ({...}); write one key a "
                           "line (block style): stepmap.so reads the serve: line without a "
                           "YAML parser");
        }
        const StrictMap map(root, top, keysUnder(""), yaml::UnknownKey::NamedWithKnownKeys);
        policy.serve = served(map);
        serveKey = map.keyMark("serve");

        const auto defaults = section(map, "defaults");
        policy.mapBy = policyWord(defaults, "map_by", "a mapping policy",
                                  [](const std::string &t) { return parseMapBy(t); });
        policy.rankBy = policyWord(defaults, "rank_by", "a ranking policy",
                                   [](const std::string &t) { return parseRankBy(t); });
        policy.bindTo = policyWord(defaults, "bind_to", "a binding policy",
                                   [](const std::string &t) { return parseBindTo(t); });
        policy.modex = policyWord(defaults, "modex", "a modex mode", [](const std::string &t) {
            return modex::parseModexMode(t, "--modex");
        });
        policy.withFt = policyWord(defaults, "with_ft", "a fault tolerance mode",
                                   [](const std::string &t) -> Expected<void> {
                                       if (t == "ulfm" || t == "none")
                                           return {};
                                       return UserError{"use ulfm or none"};
                                   });

        const auto allow = section(map, "allow");
        policy.allowOversubscribe = allowed(allow, "oversubscribe");
        policy.allowOverbook = allowed(allow, "overbook");
        policy.allowUserCpuMap = allowed(allow, "user_cpumap", false);

        const auto limits = section(map, "limits");
        policy.maxRanksPerNode = limit(limits, "ranks_per_node", kMaxRanksPerNodeLimit);
        policy.maxRanks = limit(limits, "ranks", kMaxRanksLimit);

        policy.profile = absolutePath(given(map, "profile"), "/etc/slurm/stepmap-profile.yaml");
        policy.modexPorts = portRange(given(map, "modex_ports"));

        const auto timeouts = section(map, "timeouts");
        policy.serverStartTimeoutSec = seconds(timeouts, "server_start");
        policy.dmodexTimeoutSec = seconds(timeouts, "direct_modex");

        const auto log = section(map, "log");
        policy.logDir = absolutePath(given(log, "dir"), "/var/log/stepmap");
        policy.logLevel = logLevel(log);
    }
    checkServeLine(text, serveKey, top, policy.serve);
    return policy;
}

UserError fileError(const std::string &path, const std::string &what) {
    return UserError{escaped(path, kShownPathBytes) + ": " + what};
}

std::string octalMode(mode_t mode) {
    char text[8];
    std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
    return text;
}

} // namespace

Expected<SitePolicy> parseSitePolicy(std::string_view text, std::string_view fileName) {
    return yaml::loadStrictly(fileName, [&] { return readPolicy(text, fileName); });
}

Expected<SitePolicy> readSitePolicy(const std::string &path) {
    int fd = -1;
    do {
        // O_NONBLOCK: a FIFO in its place is refused below, not waited on.
        fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    } while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fileError(path,
                         std::string("cannot open the site policy file: ") + std::strerror(errno));
    const os::UniqueFd file(fd);
    struct stat status {};
    if (fstat(file.get(), &status) != 0)
        return fileError(path,
                         std::string("cannot stat the site policy file: ") + std::strerror(errno));
    if (!S_ISREG(status.st_mode))
        return fileError(path, "the site policy file is not a regular file; name the file "
                               "itself in plugstack.conf's config=");
    if (status.st_uid != 0 && status.st_uid != geteuid()) {
        return fileError(path, "the site policy file is owned by uid " +
                                   std::to_string(status.st_uid) +
                                   ", who is neither root nor the user reading it (uid " +
                                   std::to_string(geteuid()) +
                                   ") and could change the policy for everyone; chown root " +
                                   escaped(path, kShownPathBytes));
    }
    if ((status.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
        return fileError(path,
                         "the site policy file is writable by " +
                             std::string((status.st_mode & S_IWOTH) ? "every user" : "its group") +
                             " (mode " + octalMode(status.st_mode) +
                             "), who could change the policy for everyone; chmod go-w " +
                             escaped(path, kShownPathBytes));
    }
    if (static_cast<std::uintmax_t>(status.st_size) > kMaxSitePolicyBytes)
        return fileError(path, "the site policy file is larger than " +
                                   formatByteSize(kMaxSitePolicyBytes) +
                                   "; a policy is a few dozen lines");
    auto text = readBoundedDescriptor(file.get(), kMaxSitePolicyBytes);
    if (!text) {
        return fileError(path, "cannot read the site policy file: " + text.error().message);
    }
    return parseSitePolicy(*text, path);
}

} // namespace stepmap::plugin
