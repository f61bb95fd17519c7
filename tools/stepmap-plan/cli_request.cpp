#include "cli_request.hpp"

#include "base/quote.hpp"
#include "cli_files.hpp"
#include "hosts/host_list.hpp"
#include "request/map_policy.hpp"
#include "request/parastation_request.hpp"
#include "request/rankfile.hpp"

namespace stepmap::cli {

namespace {

// The parser's message, prefixed with the option and value unless it names
// the option already.
UserError named(const std::string &where, const std::string &option, const std::string &value,
                const UserError &error) {
    if (error.message.rfind(option, 0) == 0)
        return UserError{where + error.message};
    return UserError{where + option + " " + escaped(value) + ": " + error.message};
}

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

Expected<ParsedApp> parseApp(const CliApp &app, const std::optional<std::string> &hostfile,
                             const std::string &where) {
    ParsedApp out;
    if (app.np) {
        auto np = parseProcessCount(*app.np);
        if (!np)
            return named(where, "-n", *app.np, np.error());
        out.np = np.value();
    }
    if (app.mapBy) {
        auto map = parseMapBy(*app.mapBy);
        if (!map)
            return named(where, "--map-by", *app.mapBy, map.error());
        out.map = map.value();
        if (map->by == MapBy::Seq || map->by == MapBy::Rankfile) {
            const std::string path = !map->file.empty() ? map->file : hostfile.value_or("");
            if (path.empty())
                return UserError{where + "--map-by " + escaped(*app.mapBy) +
                                 " needs a file: add :FILE=path (or give --hostfile)"};
            auto text = readTextFile(path, "--map-by " + escaped(*app.mapBy) + " file");
            if (!text)
                return UserError{where + text.error().message};
            if (map->by == MapBy::Seq) {
                auto sequence = parseSequenceFile(text.value(), path);
                if (!sequence)
                    return UserError{where + sequence.error().message};
                out.sequence = std::move(sequence.value());
            } else {
                auto rankfile = parseRankfile(text.value(), path);
                if (!rankfile)
                    return UserError{where + rankfile.error().message};
                out.rankfile = std::move(rankfile.value());
            }
        }
    }
    if (app.rankBy) {
        auto rank = parseRankBy(*app.rankBy);
        if (!rank)
            return named(where, "--rank-by", *app.rankBy, rank.error());
        out.rank = rank.value();
    }
    if (app.bindTo) {
        auto bind = parseBindTo(*app.bindTo);
        if (!bind)
            return named(where, "--bind-to", *app.bindTo, bind.error());
        out.bind = bind.value();
    }
    return out;
}

// True when only the first application context gives this directive: it
// then applies to the whole job.
template <class Field> bool firstOnly(const std::vector<CliApp> &apps, Field field) {
    for (std::size_t i = 1; i < apps.size(); ++i)
        if (apps[i].*field)
            return false;
    return true;
}

} // namespace

bool needsHardware(const PlanRequest &request) {
    auto objectMap = [](const MapPolicy &m) {
        return m.by != MapBy::Slot && m.by != MapBy::Node && m.by != MapBy::Default &&
               m.by != MapBy::Seq;
    };
    auto binds = [](const std::optional<BindPolicy> &b) { return b && b->to != BindTo::None; };
    if (objectMap(request.map) || binds(request.bind) || request.map.pe)
        return true;
    for (const AppRequest &app : request.apps)
        if ((app.map && (objectMap(*app.map) || app.map->pe)) || binds(app.bind))
            return true;
    return false;
}

Expected<PlanRequest> buildRequest(const CliOptions &options) {
    PlanRequest request;
    if (options.host) {
        auto host = parseHostOption(*options.host);
        if (!host)
            return named("", "--host", *options.host, host.error());
        request.host = std::move(host.value());
    }
    if (options.hostfile) {
        auto text = readTextFile(*options.hostfile, "--hostfile");
        if (!text)
            return text.error();
        auto hostfile = parseHostfile(text.value(), *options.hostfile);
        if (!hostfile)
            return hostfile.error();
        request.hostfile = std::move(hostfile.value());
    }
    request.overbook = options.overbook;
    ParaStationRequest &ps = request.parastation;
    ps.loopNodesFirst = options.loopNodesFirst;
    if (options.nodesSort) {
        auto sort = parseNodesSort(*options.nodesSort, "--nodes-sort");
        if (!sort)
            return sort.error();
        ps.nodesSort = sort.value();
        if (needsNodeFigures(ps.nodesSort))
            return UserError{"--nodes-sort " + escaped(*options.nodesSort) +
                             ": sorting by load or processes needs Slurm's node table, which "
                             "stepmap-plan does not read; use --nodes-sort NONE (or leave it out)"};
    }
    if (options.tpp) {
        auto threads = parseThreadsPerProcess(*options.tpp, "--tpp");
        if (!threads)
            return threads.error();
        ps.threadsPerProcess = threads.value();
    }

    const std::vector<CliApp> &apps = options.apps;
    if (apps.size() == 1) {
        auto app = parseApp(apps[0], options.hostfile, "");
        if (!app)
            return app.error();
        request.np = app->np;
        if (app->map)
            request.map = *app->map;
        request.rank = app->rank;
        request.bind = app->bind;
        if (app->sequence)
            request.sequence = std::move(*app->sequence);
        if (app->rankfile)
            request.rankfile = std::move(*app->rankfile);
        return request;
    }
    // MPMD: a directive given only in the first context is the job's.
    const bool jobMap = firstOnly(apps, &CliApp::mapBy);
    const bool jobRank = firstOnly(apps, &CliApp::rankBy);
    const bool jobBind = firstOnly(apps, &CliApp::bindTo);
    for (std::size_t i = 0; i < apps.size(); ++i) {
        const std::string where = "application context " + std::to_string(i) + ": ";
        auto app = parseApp(apps[i], options.hostfile, where);
        if (!app)
            return app.error();
        AppRequest out;
        out.np = app->np;
        if (i == 0 && jobMap) {
            if (app->map)
                request.map = *app->map;
            if (app->sequence)
                request.sequence = std::move(*app->sequence);
            if (app->rankfile)
                request.rankfile = std::move(*app->rankfile);
        } else {
            out.map = app->map;
            out.sequence = std::move(app->sequence);
            out.rankfile = std::move(app->rankfile);
        }
        if (i == 0 && jobRank)
            request.rank = app->rank;
        else
            out.rank = app->rank;
        if (i == 0 && jobBind)
            request.bind = app->bind;
        else
            out.bind = app->bind;
        request.apps.push_back(std::move(out));
    }
    return request;
}

} // namespace stepmap::cli
