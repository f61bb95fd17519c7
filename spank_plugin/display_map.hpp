#pragma once

// --display-map's value: the job map as text on srun's stderr (no value, as
// mpirun's --display-map), or the job drawn as an SVG picture in a file
// (svg:FILE, by the same renderer as stepmap-plan --output svg).

#include <string>

#include "base/expected.hpp"

namespace stepmap::plugin {

struct DisplayMapRequest {
    enum class Form { Text, Svg };
    Form form = Form::Text;
    std::string file; // Svg: the file, as written (relative to srun's directory)
};

// "" and "text": the text map. "(null)" too: what Slurm forwards from
// sbatch/salloc for an option given without a value (it writes a missing
// value with "%s"). "svg:FILE": the picture in FILE, which may not be "-"
// (srun's stdout carries the job's output). Anything else is refused with
// the accepted forms.
Expected<DisplayMapRequest> parseDisplayMap(const std::string &value);

} // namespace stepmap::plugin
