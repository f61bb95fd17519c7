#pragma once

// The placement options as the user wrote them (srun's stepmap options,
// stepmap-plan's command line) turned into a PlanRequest: one builder for
// both callers. Pure: the files the options name (--hostfile, the FILE= of
// --map-by seq/rankfile) are read through the reader the caller passes.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/expected.hpp"
#include "request/plan_request.hpp"

namespace stepmap {

// One application context's directives, as written ("-n 2 --map-by core").
struct AppOptions {
    std::optional<std::string> np;
    std::optional<std::string> mapBy;
    std::optional<std::string> rankBy;
    std::optional<std::string> bindTo;
};

struct RequestOptions {
    std::optional<std::string> host;
    std::optional<std::string> hostfile; // a file name
    // One entry per application context, in command-line order; at least
    // one. With several (MPMD), a directive only the first gives is the
    // job's; errors then name the context.
    std::vector<AppOptions> apps{AppOptions{}};
};

// How a caller's messages name an option and its value. srun's and
// stepmap-plan's messages have long differed in these three points; each
// keeps its own.
struct OptionWording {
    // "--map-by 'x'" (srun) or "--map-by x" (stepmap-plan); escaped either way.
    bool quoteValues = true;
    // What "cannot read" calls a --map-by seq/rankfile file: "the --map-by
    // file" (srun) or "--map-by VALUE file" (stepmap-plan).
    bool mapFileNamesValue = false;
};

// Reads a whole file; the error is the reason alone ("No such file or
// directory"). srun and stepmap-plan pass readBoundedFile
// (os/user_file.hpp); tests pass fakes.
using OptionFileReader = std::function<Expected<std::string>(const std::string &path)>;

// "cannot read --hostfile 'hf': No such file or directory": the message for
// a file an option names that could not be read.
UserError unreadableFile(std::string_view purpose, const std::string &path,
                         const UserError &reason);

// The request the options describe: -n, --host, --hostfile, --map-by (with
// the sequence or rankfile its FILE=, else the hostfile, names), --rank-by
// and --bind-to, per application context. Errors name the option, its
// value and the fix (and the context, with several). The ParaStation
// settings, srun's own -n and --multi-prog are the callers'.
Expected<PlanRequest> buildRequest(const RequestOptions &options, const OptionFileReader &readFile,
                                   const OptionWording &wording);

} // namespace stepmap
