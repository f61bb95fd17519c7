// parseSequenceFile (mapper/rankfile.hpp): --map-by seq, one host per rank.

#include "fuzz_check.hpp"
#include "request/rankfile.hpp"

using namespace stepmap;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const auto entries = parseSequenceFile(fuzz::asText(data, size), "fuzz_seq");
    if (!entries) {
        fuzz::check(entries.error().message.starts_with("sequence file fuzz_seq"),
                    "sequence file error without the file name");
        return 0;
    }
    fuzz::check(!entries->empty(), "a sequence file without hosts");
    for (const SequenceEntry &e : entries.value())
        fuzz::check(!e.host.empty(), "an empty host");
    return 0;
}
