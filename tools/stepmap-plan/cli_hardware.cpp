#include "cli_hardware.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "base/input_limits.hpp"
#include "base/quote.hpp"
#include "hosts/node_model.hpp"
#include "node_topology.hpp"
#include "os/user_file.hpp"

namespace stepmap::cli {

namespace {

// The largest topology XML read: a machine of kMaxCpusPerNode PUs with its
// caches and devices fits.
constexpr std::size_t kMaxTopologyBytes = std::size_t{64} << 20;

// A positive count of a node's parts; one above kMaxCpusPerNode (however
// many digits) reads as kMaxCpusPerNode + 1, so that the node is too large.
std::optional<std::int64_t> partCount(std::string_view text) {
    if (text.empty() || text.find_first_not_of("0123456789") != std::string_view::npos)
        return std::nullopt;
    std::int64_t value = 0;
    for (char c : text)
        value = std::min<std::int64_t>(value * 10 + (c - '0'), kMaxCpusPerNode + 1);
    if (value < 1)
        return std::nullopt;
    return value;
}

// The PUs a synthetic description ("package:2 core:8 pu:2", or "2 8 2")
// gives a node: the product of its levels' arities, counted before hwloc
// builds anything (saturating above kMaxCpusPerNode). Attributes in
// parentheses are skipped; hwloc checks the rest.
std::int64_t syntheticPuCount(std::string_view description) {
    std::int64_t count = 1;
    int depth = 0;
    std::string word;
    const auto takeWord = [&] {
        const std::string_view arity = std::string_view(word).substr(word.rfind(':') + 1);
        const std::size_t digits = std::min(arity.find_first_not_of("0123456789"), arity.size());
        if (digits > 0) {
            const auto parts = partCount(arity.substr(0, digits));
            count = std::min<std::int64_t>(count * parts.value_or(1), kMaxCpusPerNode + 1);
        }
        word.clear();
    };
    for (char c : description) {
        if (c == '(')
            ++depth;
        else if (c == ')' && depth > 0)
            --depth;
        else if (depth > 0)
            continue;
        else if (c == ' ' || c == '\t' || c == '\n')
            takeWord();
        else
            word += c;
    }
    takeWord();
    return count;
}

// An XML topology file, read bounded (hwloc would read /dev/zero forever).
Expected<topology::NodeTopology> readTopology(const std::string &path) {
    auto xml = readBoundedFile(path, kMaxTopologyBytes);
    if (!xml)
        return UserError{"cannot read the file: " + xml.error().message};
    return topology::NodeTopology::fromXmlText(xml.value());
}

// A synthetic topology, refused before hwloc builds it when too large.
Expected<topology::NodeTopology> buildSynthetic(const std::string &description) {
    if (syntheticPuCount(description) > kMaxCpusPerNode)
        return UserError{"a node of more than " + std::to_string(kMaxCpusPerNode) +
                         " PUs; stepmap models nodes of at most that many"};
    return topology::NodeTopology::fromSynthetic(description);
}

Expected<SlurmNodeShape> parseShape(const std::string &text) {
    const UserError bad{"--slurm-shape " + quoted(text) +
                        ": expected SOCKETS:CORES:THREADS, positive numbers (e.g. 2:8:2)"};
    const std::size_t first = text.find(':');
    if (first == std::string::npos)
        return bad;
    const std::size_t second = text.find(':', first + 1);
    if (second == std::string::npos)
        return bad;
    auto sockets = partCount(std::string_view(text).substr(0, first));
    auto cores = partCount(std::string_view(text).substr(first + 1, second - first - 1));
    auto threads = partCount(std::string_view(text).substr(second + 1));
    if (!sockets || !cores || !threads)
        return bad;
    if (*sockets * *cores * *threads > kMaxCpusPerNode)
        return UserError{"--slurm-shape " + quoted(text) + ": a node of more than " +
                         std::to_string(kMaxCpusPerNode) +
                         " CPUs; stepmap models nodes of at most that many"};
    SlurmNodeShape shape;
    shape.sockets = static_cast<int>(*sockets);
    shape.coresPerSocket = static_cast<int>(*cores);
    shape.threadsPerCore = static_cast<int>(*threads);
    return shape;
}

// Makes the model of a node holding `ids` (Slurm's abstract ids = logical
// PU indices; none: the whole node).
class ModelSource {
public:
    static Expected<ModelSource> make(const CliOptions &options) {
        ModelSource source;
        if (options.slurmShape) {
            auto shape = parseShape(*options.slurmShape);
            if (!shape)
                return shape.error();
            source.shape_ = shape.value();
            source.option_ = "--slurm-shape " + quoted(*options.slurmShape);
            return source;
        }
        auto topology = options.topologyFile ? readTopology(*options.topologyFile)
                                             : buildSynthetic(*options.synthetic);
        source.option_ = options.topologyFile
                             ? "--topology " + quoted(*options.topologyFile, kShownPathBytes)
                             : "--synthetic " + quoted(*options.synthetic);
        if (!topology)
            return UserError{source.option_ + ": " + topology.error().message};
        source.topology_ = std::make_shared<topology::NodeTopology>(std::move(topology.value()));
        return source;
    }

    Expected<std::shared_ptr<const NodeModel>>
    model(const std::optional<std::vector<std::uint32_t>> &ids, const std::string &node) {
        const std::string key = ids ? formatIdList(*ids) : "*";
        auto found = cache_.find(key);
        if (found != cache_.end())
            return found->second;
        auto built = build(ids, node);
        if (!built)
            return built.error();
        cache_[key] = built.value();
        return built.value();
    }

private:
    Expected<std::shared_ptr<const NodeModel>>
    build(const std::optional<std::vector<std::uint32_t>> &ids, const std::string &node) const {
        if (shape_) {
            auto built = buildSlurmNodeModel(*shape_, ids.value_or(std::vector<std::uint32_t>{}));
            if (!built)
                return UserError{option_ + ", node " + node + ": " + built.error().message};
            return built.value();
        }
        std::vector<std::uint32_t> osPus;
        if (ids) {
            for (std::uint32_t logical : *ids) {
                auto os = topology_->osIndex(HwLevel::Pu, logical);
                if (!os)
                    return UserError{option_ + ": node " + node + " holds CPU id " +
                                     std::to_string(logical) + ", which the topology lacks (" +
                                     std::to_string(topology_->count(HwLevel::Pu)) +
                                     " PUs); give the nodes' real topology"};
                osPus.push_back(*os);
            }
        }
        auto built = topology_->nodeModel(osPus);
        if (!built)
            return UserError{option_ + ", node " + node + ": " + built.error().message};
        return built.value();
    }

    std::optional<SlurmNodeShape> shape_;
    std::shared_ptr<topology::NodeTopology> topology_;
    std::string option_;
    std::map<std::string, std::shared_ptr<const NodeModel>> cache_;
};

} // namespace

bool hardwareGiven(const CliOptions &options) {
    return options.topologyFile || options.synthetic || options.slurmShape;
}

Expected<void> addHardware(CliAllocation &allocation, const CliOptions &options, bool attach) {
    const int given =
        (options.topologyFile ? 1 : 0) + (options.synthetic ? 1 : 0) + (options.slurmShape ? 1 : 0);
    if (given > 1)
        return UserError{"give the node hardware once: --topology, --synthetic or --slurm-shape"};
    if (given == 0)
        return {};
    auto source = ModelSource::make(options);
    if (!source)
        return source.error();
    for (std::size_t i = 0; i < allocation.allocation.nodes.size(); ++i) {
        AllocatedNode &node = allocation.allocation.nodes[i];
        auto model = source->model(allocation.cpuIds[i], node.name);
        if (!model)
            return model.error();
        if (!allocation.slotsGiven[i])
            node.slots = static_cast<int>(model.value()->objects(HwLevel::Core).size());
        if (attach)
            node.model = model.value();
    }
    return {};
}

} // namespace stepmap::cli
