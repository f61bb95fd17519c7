#include "cli_request.hpp"

#include "base/quote.hpp"
#include "os/user_file.hpp"
#include "request/parastation_request.hpp"
#include "request/request_options.hpp"

namespace stepmap::cli {

namespace {

// stepmap-plan's messages show values as written and keep a parser's
// message that names its option already.
constexpr OptionWording kWording{.quoteValues = false, .mapFileNamesValue = true};

// --overbook, --loop-nodes-first, --nodes-sort and --tpp. Sorting by load or
// processes needs Slurm's node table, which stepmap-plan does not read.
std::optional<UserError> addParaStation(const CliOptions &options, PlanRequest &request) {
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
    return std::nullopt;
}

} // namespace

Expected<PlanRequest> buildRequest(const CliOptions &options) {
    RequestOptions written;
    written.host = options.host;
    written.hostfile = options.hostfile;
    written.apps = options.apps;
    auto request = stepmap::buildRequest(
        written, [](const std::string &path) { return readBoundedFile(path); }, kWording);
    if (!request)
        return request;
    if (auto error = addParaStation(options, request.value()))
        return *error;
    return request;
}

} // namespace stepmap::cli
