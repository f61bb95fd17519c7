// Conformance with PRRTE's offline job maps (tests/fixtures/prrte-offline):
// every case of cases.tsv is planned by stepmap on the same allocation
// (-H node:slots defines the nodes, no resource manager), the same hwloc
// topology on every node and the same directives, printed as mpirun's job
// map and compared with PRRTE's golden output, normalized as the goldens
// are ("prterun-JOBID@N", "Total slots allocated N").
//
// Where stepmap deliberately differs, the case is listed in kExpectedDiffer
// with the reason (mapper/README.md, "Deliberate differences"); such a case
// must still differ, so the list cannot go stale.
//
// Usage: prrte_offline_test <prrte-offline dir> [case-name-substring]
// Exit: 0 all as expected, 1 a failure or missing reference data.

#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "node_topology.hpp"
#include "plan/job_map.hpp"
#include "planner/planner.hpp"
#include "request/map_policy.hpp"

namespace {

using namespace stepmap;

// How much of a listed golden may differ.
enum class Differs {
    Placement, // anything
    Bindings,  // the bound CPUs only: nodes, ranks and apps still match
};

struct ExpectedDifference {
    Differs scope;
    const char *reason;
};

// mapper/README.md, "Deliberate differences from PRRTE", item 1.
constexpr const char *kByNodeReason =
    "the second application maps 14 processes by node onto nodes with 0, 2 and 8 free slots, "
    "oversubscription allowed. PRRTE gives every node the average (14/3) without looking at "
    "free slots, so node0 - already full - takes 5 more while node2 keeps 4 slots idle. stepmap "
    "maps by node as seed 002 describes it: round robin over the nodes with free slots first "
    "(node1 2, node2 8), and only then on around all nodes past their slots (node0 2, node1 3, "
    "node2 9 in all).";
// The goldens come from a newer PRRTE than Open MPI 5.0's mpirun
// (tests/conformance/prrte_live runs that one); where the two disagree,
// stepmap does what the mpirun users run does.
constexpr const char *kWholeObjectReason =
    "a later application's process is bound to its whole object. The newer PRRTE that printed "
    "these goldens binds it to the object's CPUs the earlier applications left (core:L1-43); "
    "Open MPI 5.0's mpirun binds to the whole object (core:L0-43), and stepmap does what "
    "that mpirun does (mapper/README.md).";

// Golden file name (without directory) -> why stepmap's map differs: the
// same three goldens of every topology.
std::map<std::string, ExpectedDifference> expectedDifferences() {
    std::map<std::string, ExpectedDifference> differ;
    for (const char *topology : {"test-topo", "test-topo2", "turin-4gpu", "turin-4gpu-nvml"}) {
        const std::string suffix = std::string(".") + topology + ".";
        differ["perapp" + suffix + "jobqual.map"] = {Differs::Placement, kByNodeReason};
        differ["perapp" + suffix + "map.node-slot.map"] = {Differs::Bindings, kWholeObjectReason};
        differ["perapp" + suffix + "map.three.map"] = {Differs::Bindings, kWholeObjectReason};
    }
    return differ;
}
const std::map<std::string, ExpectedDifference> kExpectedDiffer = expectedDifferences();

// A job map without its " Bound: ..." sets.
std::string withoutBindings(const std::string &map) {
    std::string out;
    std::istringstream in(map);
    std::string line;
    while (std::getline(in, line)) {
        const std::size_t at = line.find(" Bound: ");
        out += (at == std::string::npos ? line : line.substr(0, at)) + "\n";
    }
    return out;
}

struct Case {
    std::string golden;
    std::string topology;
    std::string hosts;
    std::string np;
    std::string mapBy;
    std::string rankBy;
    std::string bindTo;
    std::string note;
};

std::vector<std::string> split(const std::string &text, char separator) {
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(text);
    while (std::getline(in, part, separator))
        parts.push_back(part);
    if (!text.empty() && text.back() == separator)
        parts.push_back("");
    return parts;
}

std::string readFile(const std::string &path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string normalize(std::string map) {
    const std::string label = "Total slots allocated ";
    const std::size_t at = map.find(label);
    if (at != std::string::npos) {
        const std::size_t digits = at + label.size();
        const std::size_t end = map.find_first_not_of("0123456789", digits);
        map = map.substr(0, digits) + "N" + map.substr(end);
    }
    return map;
}

std::string basename(const std::string &path) {
    const std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Builds the request of one case; an error names the column.
Expected<PlanRequest> request(const Case &c) {
    PlanRequest result;
    const std::vector<std::string> counts = split(c.np, ';');
    const std::vector<std::string> maps = split(c.mapBy, ';');
    const std::vector<std::string> ranks = split(c.rankBy, ';');
    const std::vector<std::string> binds = split(c.bindTo, ';');
    const bool perApp = maps.size() > 1 || ranks.size() > 1 || binds.size() > 1;
    for (const std::string &count : counts) {
        auto np = parseProcessCount(count);
        if (!np)
            return np.error();
        result.apps.push_back(AppRequest{np.value()});
    }
    const auto directive = [&](const std::vector<std::string> &values, std::size_t app, auto parse,
                               auto &jobField, auto appField) -> std::optional<UserError> {
        if (!perApp) {
            if (values[0] == "-")
                return std::nullopt;
            auto parsed = parse(values[0]);
            if (!parsed)
                return parsed.error();
            jobField = parsed.value();
            return std::nullopt;
        }
        const std::string &value = values.size() == 1 ? values[0] : values[app];
        if (value == "-")
            return std::nullopt;
        auto parsed = parse(value);
        if (!parsed)
            return parsed.error();
        result.apps[app].*appField = parsed.value();
        return std::nullopt;
    };
    for (std::size_t a = 0; a < result.apps.size(); ++a) {
        if (auto error = directive(maps, a, parseMapBy, result.map, &AppRequest::map))
            return *error;
        if (auto error = directive(ranks, a, parseRankBy, result.rank, &AppRequest::rank))
            return *error;
        if (auto error = directive(binds, a, parseBindTo, result.bind, &AppRequest::bind))
            return *error;
        if (!perApp)
            break;
    }
    if (result.apps.size() == 1) {
        result.np = result.apps[0].np;
        result.apps.clear();
    }
    return result;
}

} // namespace

int main(int argc, char **argv) {
    if (argc < 2) {
        std::cerr << "usage: prrte_offline_test <prrte-offline dir> [filter]\n";
        return 2;
    }
    const std::string dir = argv[1];
    const std::string filter = argc > 2 ? argv[2] : "";
    std::ifstream table(dir + "/cases.tsv");
    if (!table) {
        std::cout << "FAIL: no " << dir << "/cases.tsv (the goldens live in tests/fixtures)\n";
        return 1;
    }
    std::vector<Case> cases;
    std::string line;
    std::getline(table, line); // header
    while (std::getline(table, line)) {
        if (line.empty())
            continue;
        std::vector<std::string> fields = split(line, '\t');
        fields.resize(8);
        cases.push_back(Case{fields[0], fields[1], fields[2], fields[3], fields[4], fields[5],
                             fields[6], fields[7]});
    }

    std::map<std::string, std::shared_ptr<const NodeModel>> models;
    int passed = 0;
    int differed = 0;
    int failed = 0;
    for (const Case &c : cases) {
        const std::string name = basename(c.golden);
        if (!filter.empty() && name.find(filter) == std::string::npos)
            continue;
        const auto fail = [&](const std::string &why) {
            std::cout << "FAIL " << name << ": " << why << "\n";
            ++failed;
        };
        if (!models.count(c.topology)) {
            auto topology = topology::NodeTopology::fromXmlFile(dir + "/" + c.topology);
            if (!topology) {
                fail(topology.error().message);
                continue;
            }
            auto model = topology->nodeModel();
            if (!model) {
                fail(model.error().message);
                continue;
            }
            models[c.topology] = model.value();
        }
        Allocation allocation;
        for (const std::string &host : split(c.hosts, ',')) {
            const std::size_t colon = host.find(':');
            allocation.nodes.push_back(AllocatedNode{
                host.substr(0, colon), std::stoi(host.substr(colon + 1)), models[c.topology]});
        }
        auto req = request(c);
        if (!req) {
            fail("bad case: " + req.error().message);
            continue;
        }
        const std::string golden = readFile(dir + "/" + c.golden);
        std::string actual;
        auto result = planJob(allocation, req.value());
        if (!result) {
            actual = "ERROR: " + result.error().message + "\n";
        } else {
            const JobMapHeader header = reportedJobMapHeader(result->report, "prterun-JOBID@N");
            actual = normalize(
                formatJobMap(result->plan, header, allocation,
                             JobMapOptions{BoundStyle::Prrte, result->report.hwthreadCpus}));
        }
        const auto differ = kExpectedDiffer.find(name);
        if (actual == golden) {
            if (differ != kExpectedDiffer.end()) {
                fail("listed as differing (" + std::string(differ->second.reason) +
                     ") but now matches PRRTE; "
                     "remove it from kExpectedDiffer");
                continue;
            }
            std::cout << "PASS " << name << "\n";
            ++passed;
            continue;
        }
        if (differ != kExpectedDiffer.end() && differ->second.scope == Differs::Bindings &&
            withoutBindings(actual) != withoutBindings(golden)) {
            fail("listed as differing in its bindings only (" + std::string(differ->second.reason) +
                 "), but nodes, ranks or apps differ too\n--- golden\n" + golden + "--- stepmap\n" +
                 actual);
            continue;
        }
        if (differ != kExpectedDiffer.end()) {
            std::cout << "DIFFERS (expected) " << name << ": " << differ->second.reason << "\n";
            if (!filter.empty())
                std::cout << "--- golden\n" << golden << "--- stepmap\n" << actual;
            ++differed;
            continue;
        }
        fail("the job map differs from PRRTE's\n--- golden\n" + golden + "--- stepmap\n" + actual);
    }
    std::cout << passed << " match PRRTE, " << differed << " differ as documented, " << failed
              << " fail\n";
    return failed == 0 ? 0 : 1;
}
