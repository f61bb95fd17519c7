// applyParaStationEnvironment (spank_plugin/srun/psi_environment.hpp): the PSI_*
// variables with stepmap's options over them. Input:
//   NAME=VALUE lines: environment variables (PSI_HOSTS=n1 n2), or options
//   when NAME starts with "--" (--tpp=2, --overbook, --host=n1)
//   a line "%%", then the text every file read returns (PSI_HOSTFILE);
//   without it, reading a file fails.

#include "srun/psi_environment.hpp"
#include "fuzz_check.hpp"

using namespace stepmap;

namespace {

void setOption(plugin::StepmapOptions &options, std::string_view name, const std::string &value) {
    if (name == "host")
        options.host = value;
    else if (name == "hostfile")
        options.hostfile = value;
    else if (name == "nodes-sort")
        options.nodesSort = value;
    else if (name == "tpp")
        options.tpp = value;
    else if (name == "overbook")
        options.overbook = true;
    else if (name == "loop-nodes-first")
        options.loopNodesFirst = true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    std::string_view text = fuzz::asText(data, size);
    std::optional<std::string> fileText;
    if (const auto mark = text.find("\n%%\n"); mark != std::string_view::npos) {
        fileText = std::string(text.substr(mark + 4));
        text = text.substr(0, mark + 1);
    }

    plugin::StepmapOptions options;
    plugin::EnvironmentValues env;
    for (const std::string &line : fuzz::splitAt(text, '\n')) {
        const auto eq = line.find('=');
        const std::string name = line.substr(0, eq);
        const std::string value = eq == std::string::npos ? "" : line.substr(eq + 1);
        if (name.starts_with("--"))
            setOption(options, std::string_view(name).substr(2), value);
        else if (!name.empty())
            env[name] = value;
    }

    const plugin::FileReader readFile = [&](const std::string &) -> Expected<std::string> {
        if (!fileText)
            return UserError{"No such file or directory"};
        return *fileText;
    };
    plugin::firstPsiVariable(env);
    PlanRequest request;
    const auto notes = plugin::applyParaStationEnvironment(options, env, readFile, request);
    if (!notes)
        return 0;
    const ParaStationRequest &ps = request.parastation;
    fuzz::check(!ps.threadsPerProcess ||
                    (*ps.threadsPerProcess >= 1 && *ps.threadsPerProcess <= kMaxThreadsPerProcess),
                "threads per process out of range");
    if (ps.pool) {
        fuzz::check(!ps.pool->indices.empty() || !ps.pool->names.empty(), "an empty node pool");
        ps.pool->describe();
    }
    return 0;
}
