#pragma once

// Reading the files the command line names. The mapper parses text only;
// this is where stepmap-plan does its file I/O.

#include <string>
#include <string_view>

#include "expected.hpp"

namespace stepmap::cli {

// The whole file. The error names the option it came from and the path:
// "cannot read --hostfile 'hf': No such file or directory".
Expected<std::string> readTextFile(const std::string &path, std::string_view option);

} // namespace stepmap::cli
