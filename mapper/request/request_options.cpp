#include "request/request_options.hpp"

#include <utility>

#include "base/quote.hpp"
#include "hosts/host_list.hpp"
#include "request/map_policy.hpp"
#include "request/rankfile.hpp"

namespace stepmap {

namespace {

// What one call of buildRequest reads with and how it words its errors;
// `where` names the application context ("" with one).
struct Builder {
    const OptionFileReader &readFile;
    const OptionWording &wording;
    std::string where;

    // "--map-by 'x'" or "--map-by x".
    std::string named(std::string_view option, const std::string &value) const {
        return std::string(option) + " " + (wording.quoteValues ? quoted(value) : escaped(value));
    }

    // A parser's error, with the option and value it came from (unless the
    // parser's message already starts with the option, as most do).
    UserError refused(std::string_view option, const std::string &value,
                      const UserError &error) const {
        if (error.message.rfind(option, 0) == 0)
            return UserError{where + error.message};
        return UserError{where + named(option, value) + ": " + error.message};
    }

    Expected<std::string> read(std::string_view purpose, const std::string &path) const {
        auto text = readFile(path);
        if (!text)
            return unreadableFile(purpose, path, text.error());
        return text;
    }
};

// The directives of one application context, parsed; the sequence or
// rankfile read when the map names one.
struct ParsedApp {
    std::optional<int> np;
    std::optional<MapPolicy> map;
    std::optional<RankBy> rank;
    std::optional<BindPolicy> bind;
    std::optional<std::vector<SequenceEntry>> sequence;
    std::optional<Rankfile> rankfile;
};

// --map-by seq and rankfile: their FILE=, else the hostfile, read and parsed.
std::optional<UserError> readMapFile(const Builder &builder, const std::string &mapBy,
                                     const std::optional<std::string> &hostfile, ParsedApp &app) {
    const std::string path = !app.map->file.empty() ? app.map->file : hostfile.value_or("");
    if (path.empty())
        return UserError{builder.where + builder.named("--map-by", mapBy) +
                         " needs a file: add :FILE=path (or give --hostfile)"};
    const std::string purpose = builder.wording.mapFileNamesValue
                                    ? "--map-by " + escaped(mapBy) + " file"
                                    : "the --map-by file";
    auto text = builder.read(purpose, path);
    if (!text)
        return UserError{builder.where + text.error().message};
    if (app.map->by == MapBy::Seq) {
        auto sequence = parseSequenceFile(text.value(), path);
        if (!sequence)
            return UserError{builder.where + sequence.error().message};
        app.sequence = std::move(sequence.value());
    } else {
        auto rankfile = parseRankfile(text.value(), path);
        if (!rankfile)
            return UserError{builder.where + rankfile.error().message};
        app.rankfile = std::move(rankfile.value());
    }
    return std::nullopt;
}

// The value of `option`, when given, parsed into `out`.
template <class T, class Parser>
std::optional<UserError> parseGiven(const Builder &builder, std::string_view option,
                                    const std::optional<std::string> &value, Parser parse,
                                    std::optional<T> &out) {
    if (!value)
        return std::nullopt;
    auto parsed = parse(*value);
    if (!parsed)
        return builder.refused(option, *value, parsed.error());
    out = std::move(parsed.value());
    return std::nullopt;
}

Expected<ParsedApp> parseApp(const Builder &builder, const AppOptions &app,
                             const std::optional<std::string> &hostfile) {
    ParsedApp out;
    if (auto error = parseGiven(builder, "-n", app.np, parseProcessCount, out.np))
        return *error;
    if (auto error = parseGiven(builder, "--map-by", app.mapBy, parseMapBy, out.map))
        return *error;
    if (out.map && (out.map->by == MapBy::Seq || out.map->by == MapBy::Rankfile)) {
        if (auto error = readMapFile(builder, *app.mapBy, hostfile, out))
            return *error;
    }
    if (auto error = parseGiven(builder, "--rank-by", app.rankBy, parseRankBy, out.rank))
        return *error;
    if (auto error = parseGiven(builder, "--bind-to", app.bindTo, parseBindTo, out.bind))
        return *error;
    return out;
}

// The map of an application context (its sequence or rankfile with it) as
// the job's.
void setJobMap(ParsedApp &app, PlanRequest &request) {
    if (app.map)
        request.map = *app.map;
    if (app.sequence)
        request.sequence = std::move(*app.sequence);
    if (app.rankfile)
        request.rankfile = std::move(*app.rankfile);
}

// True when only the first application context gives this directive: it
// then applies to the whole job.
template <class Field> bool firstOnly(const std::vector<AppOptions> &apps, Field field) {
    for (std::size_t i = 1; i < apps.size(); ++i)
        if (apps[i].*field)
            return false;
    return true;
}

// MPMD: one AppRequest per context; a directive given only in the first
// context is the job's.
std::optional<UserError> addApps(const Builder &job, const RequestOptions &options,
                                 PlanRequest &request) {
    const std::vector<AppOptions> &apps = options.apps;
    const bool jobMap = firstOnly(apps, &AppOptions::mapBy);
    const bool jobRank = firstOnly(apps, &AppOptions::rankBy);
    const bool jobBind = firstOnly(apps, &AppOptions::bindTo);
    for (std::size_t i = 0; i < apps.size(); ++i) {
        Builder builder = job;
        builder.where = "application context " + std::to_string(i) + ": ";
        auto app = parseApp(builder, apps[i], options.hostfile);
        if (!app)
            return app.error();
        AppRequest out;
        out.np = app->np;
        if (i == 0 && jobMap) {
            setJobMap(app.value(), request);
        } else {
            out.map = app->map;
            out.sequence = std::move(app->sequence);
            out.rankfile = std::move(app->rankfile);
        }
        (i == 0 && jobRank ? request.rank : out.rank) = app->rank;
        (i == 0 && jobBind ? request.bind : out.bind) = app->bind;
        request.apps.push_back(std::move(out));
    }
    return std::nullopt;
}

} // namespace

UserError unreadableFile(std::string_view purpose, const std::string &path,
                         const UserError &reason) {
    return UserError{"cannot read " + std::string(purpose) + " " + quoted(path, kShownPathBytes) +
                     ": " + reason.message};
}

Expected<PlanRequest> buildRequest(const RequestOptions &options, const OptionFileReader &readFile,
                                   const OptionWording &wording) {
    const Builder builder{readFile, wording, ""};
    PlanRequest request;
    if (options.host) {
        auto host = parseHostOption(*options.host);
        if (!host)
            return builder.refused("--host", *options.host, host.error());
        request.host = std::move(host.value());
    }
    if (options.hostfile) {
        auto text = builder.read("--hostfile", *options.hostfile);
        if (!text)
            return text.error();
        auto hostfile = parseHostfile(text.value(), *options.hostfile);
        if (!hostfile)
            return hostfile.error();
        request.hostfile = std::move(hostfile.value());
    }
    if (options.apps.size() > 1) {
        if (auto error = addApps(builder, options, request))
            return *error;
        return request;
    }
    const AppOptions none;
    auto app = parseApp(builder, options.apps.empty() ? none : options.apps[0], options.hostfile);
    if (!app)
        return app.error();
    request.np = app->np;
    setJobMap(app.value(), request);
    request.rank = app->rank;
    request.bind = app->bind;
    return request;
}

} // namespace stepmap
