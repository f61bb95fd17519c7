#include "cli_hardware.hpp"

#include <charconv>
#include <map>
#include <memory>
#include <optional>

#include "node_model.hpp"
#include "node_topology.hpp"

namespace stepmap::cli {

namespace {

std::optional<int> positive(std::string_view text) {
    int value = 0;
    const char *end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (ec != std::errc() || ptr != end || value < 1)
        return std::nullopt;
    return value;
}

Expected<SlurmNodeShape> parseShape(const std::string &text) {
    const UserError bad{"--slurm-shape '" + text +
                        "': expected SOCKETS:CORES:THREADS, positive numbers (e.g. 2:8:2)"};
    const std::size_t first = text.find(':');
    if (first == std::string::npos)
        return bad;
    const std::size_t second = text.find(':', first + 1);
    if (second == std::string::npos)
        return bad;
    auto sockets = positive(std::string_view(text).substr(0, first));
    auto cores = positive(std::string_view(text).substr(first + 1, second - first - 1));
    auto threads = positive(std::string_view(text).substr(second + 1));
    if (!sockets || !cores || !threads)
        return bad;
    SlurmNodeShape shape;
    shape.sockets = *sockets;
    shape.coresPerSocket = *cores;
    shape.threadsPerCore = *threads;
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
            source.option_ = "--slurm-shape " + *options.slurmShape;
            return source;
        }
        auto topology = options.topologyFile
                            ? topology::NodeTopology::fromXmlFile(*options.topologyFile)
                            : topology::NodeTopology::fromSynthetic(*options.synthetic);
        source.option_ = options.topologyFile ? "--topology " + *options.topologyFile
                                              : "--synthetic '" + *options.synthetic + "'";
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

Expected<bool> addHardware(CliAllocation &allocation, const CliOptions &options, bool attach) {
    const int given =
        (options.topologyFile ? 1 : 0) + (options.synthetic ? 1 : 0) + (options.slurmShape ? 1 : 0);
    if (given > 1)
        return UserError{"give the node hardware once: --topology, --synthetic or --slurm-shape"};
    if (given == 0)
        return true;
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
    return true;
}

} // namespace stepmap::cli
