#include "stepd/server_log_file.hpp"

#include "protocol/wire/secret.hpp"

#include <fcntl.h>

#include <cerrno>
#include <cstring>

namespace stepmap::plugin {

std::string hexOf(const LogNameRandom &random) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    for (std::uint8_t b : random) {
        out.push_back(kDigits[b >> 4]);
        out.push_back(kDigits[b & 15]);
    }
    return out;
}

std::string serverLogName(std::string_view stepTag, std::string_view nodeName,
                          const LogNameRandom &random) {
    std::string name = "stepmap-stepd.";
    name.append(stepTag).append(".").append(nodeName).append(".");
    return name + hexOf(random) + ".log";
}

Expected<std::string> serverLogPath(const std::string &dir, std::string_view stepTag,
                                    std::string_view nodeName) {
    LogNameRandom random{};
    if (!wire::fillRandom(random.data(), random.size()))
        return UserError{"cannot name the server's log in " + dir +
                         ": the kernel gave no random bytes (" + std::strerror(errno) + ")"};
    // 64 random bits: a file already there was not made for this step, and
    // no other name is tried (whoever made it could not have guessed it).
    return dir + "/" + serverLogName(stepTag, nodeName, random);
}

Expected<os::UniqueFd> createServerLog(const std::string &dir, std::string_view stepTag,
                                       std::string_view nodeName) {
    auto named = serverLogPath(dir, stepTag, nodeName);
    if (!named)
        return named.error();
    const std::string &path = *named;
    os::UniqueFd fd(
        open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_APPEND | O_CLOEXEC, 0600));
    if (!fd)
        return UserError{"cannot create the server's log " + path + ": " + std::strerror(errno)};
    return fd;
}

} // namespace stepmap::plugin
