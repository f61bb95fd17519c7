#pragma once

// Reading the files the command line names. The mapper parses text only;
// this is where stepmap-plan does its file I/O, through the bounded reader
// srun's side of the plugin uses too (os/user_file).

#include <string>
#include <string_view>

#include "base/expected.hpp"

namespace stepmap::cli {

// The whole file, at most kMaxUserFileBytes. The error names the option it
// came from and the path: "cannot read --hostfile 'hf': No such file or
// directory", "cannot read --hostfile '/dev/zero': it is larger than 16
// MiB, the most stepmap reads of a file".
Expected<std::string> readTextFile(const std::string &path, std::string_view option);

} // namespace stepmap::cli
