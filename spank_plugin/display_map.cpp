#include "display_map.hpp"

#include "base/quote.hpp"

namespace stepmap::plugin {

namespace {

constexpr const char *kSvgPrefix = "svg:";

} // namespace

Expected<DisplayMapRequest> parseDisplayMap(const std::string &value) {
    if (value.empty() || value == "text" || value == "(null)")
        return DisplayMapRequest{};
    if (value.rfind(kSvgPrefix, 0) != 0)
        return UserError{"--display-map " + quoted(value, kShownPathBytes) +
                         ": unknown form (accepted: no value or text for the job map on "
                         "stderr, svg:FILE for the job drawn as SVG in FILE)"};
    std::string file = value.substr(std::char_traits<char>::length(kSvgPrefix));
    if (file.empty())
        return UserError{"--display-map " + quoted(value, kShownPathBytes) +
                         ": names no file; write --display-map=svg:FILE, e.g. "
                         "--display-map=svg:map.svg"};
    if (file == "-")
        return UserError{"--display-map " + quoted(value, kShownPathBytes) +
                         ": srun's standard output carries the job's output, not the picture; "
                         "name a file, e.g. --display-map=svg:map.svg"};
    return DisplayMapRequest{DisplayMapRequest::Form::Svg, std::move(file)};
}

} // namespace stepmap::plugin
