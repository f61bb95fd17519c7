#include "profile/interconnect_profile.hpp"

#include <arpa/inet.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "base/parse_number.hpp"

namespace stepmap::topology {
namespace {

bool isHex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

// `groups` groups of `width` lower-case hex digits separated by `separator`.
bool isHexGroups(std::string_view text, int groups, std::size_t width, char separator) {
    if (text.size() != groups * width + (groups - 1))
        return false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const bool separatorPlace = (i + 1) % (width + 1) == 0;
        if (separatorPlace ? text[i] != separator : !isHex(text[i]))
            return false;
    }
    return true;
}

bool isOneOf(std::string_view text, std::initializer_list<std::string_view> words) {
    return std::find(words.begin(), words.end(), text) != words.end();
}

bool isDigits(std::string_view text) {
    return !text.empty() &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::string optionalText(const std::optional<std::string> &value) {
    return value ? *value : "none";
}

template <class T> std::string optionalNumber(const std::optional<T> &value) {
    return value ? std::to_string(*value) : "unknown";
}

} // namespace

// Ethernet's 6 bytes, IPoIB's 20, or "none" (tun and other links without).
bool isLinkAddress(std::string_view text) {
    return text == "none" || isHexGroups(text, 6, 2, ':') || isHexGroups(text, 20, 2, ':');
}
bool isGuid(std::string_view text) {
    return isHexGroups(text, 4, 4, ':');
}
bool isGid(std::string_view text) {
    return isHexGroups(text, 8, 4, ':');
}

bool isOperstate(std::string_view text) {
    return isOneOf(text,
                   {"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"});
}

bool isPortState(std::string_view text) {
    return isOneOf(text, {"NOP", "DOWN", "INIT", "ARMED", "ACTIVE", "ACTIVE_DEFER"});
}

bool isLinkLayer(std::string_view text) {
    return isOneOf(text, {"InfiniBand", "Ethernet"});
}

// Domain:bus:device.function, "0000:3b:00.0" (the domain may have more
// than four digits on some machines).
bool isPciAddress(std::string_view text) {
    const auto firstColon = text.find(':');
    if (firstColon == std::string_view::npos || firstColon < 4 || firstColon > 8)
        return false;
    const std::string_view domain = text.substr(0, firstColon);
    const std::string_view rest = text.substr(firstColon + 1);
    return std::all_of(domain.begin(), domain.end(), isHex) && rest.size() == 7 && isHex(rest[0]) &&
           isHex(rest[1]) && rest[2] == ':' && isHex(rest[3]) && isHex(rest[4]) && rest[5] == '.' &&
           rest[6] >= '0' && rest[6] <= '7';
}

bool isUtcTime(std::string_view text) {
    // YYYY-MM-DDTHH:MM:SSZ
    static constexpr std::string_view shape = "dddd-dd-ddTdd:dd:ddZ";
    if (text.size() != shape.size())
        return false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == 'd' ? !(text[i] >= '0' && text[i] <= '9') : text[i] != shape[i])
            return false;
    }
    return true;
}

bool isPortRate(std::string_view text) {
    return !text.empty() && text.size() <= 64 &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= ' ' && c < 0x7f; });
}

bool isProfileName(std::string_view text) {
    return !text.empty() && text.size() <= 255 && std::all_of(text.begin(), text.end(), [](char c) {
        return c > ' ' && c < 0x7f && c != '/';
    });
}

std::optional<InterfaceAddress> parseInterfaceAddress(std::string_view text) {
    const auto slash = text.find('/');
    if (slash == std::string_view::npos || slash > INET6_ADDRSTRLEN)
        return std::nullopt;
    const std::string host(text.substr(0, slash));
    const std::string_view prefix = text.substr(slash + 1);
    if (!isDigits(prefix) || prefix.size() > 3)
        return std::nullopt;
    std::array<unsigned char, 16> bytes{};
    std::array<char, INET6_ADDRSTRLEN> canonical{};
    const int family = host.find(':') == std::string::npos ? AF_INET : AF_INET6;
    const auto maxPrefix = static_cast<std::uint64_t>(family == AF_INET ? 32 : 128);
    const auto length = detail::parseUnsigned(prefix, maxPrefix);
    if (!length || inet_pton(family, host.c_str(), bytes.data()) != 1 ||
        inet_ntop(family, bytes.data(), canonical.data(), canonical.size()) == nullptr)
        return std::nullopt;
    return InterfaceAddress{canonical.data(), static_cast<int>(*length)};
}

std::string addressText(const InterfaceAddress &address) {
    return address.address + "/" + std::to_string(address.prefixLength);
}

std::string staticFieldsText(const NodeProfile &node) {
    std::string text = "node " + node.name + "\n";
    for (const NetworkInterface &interface : node.interfaces) {
        text += "interface " + interface.name + " ifindex=" + std::to_string(interface.ifindex) +
                " mtu=" + std::to_string(interface.mtu) + " mac=" + interface.mac +
                " pci=" + optionalText(interface.pciAddress) +
                " numa=" + optionalNumber(interface.numaNode) + "\n";
        for (const InterfaceAddress &address : interface.addresses)
            text += "address " + addressText(address) + "\n";
    }
    for (const RdmaDevice &device : node.rdmaDevices) {
        text += "rdma " + device.name + " guid=" + device.nodeGuid + "\n";
        for (const RdmaPort &port : device.ports) {
            text += "port " + std::to_string(port.number) + " link_layer=" + port.linkLayer +
                    " lid=" + std::to_string(port.lid) + "\n";
            for (const RdmaGid &gid : port.gids)
                text += "gid " + std::to_string(gid.index) + " " + gid.gid + "\n";
        }
    }
    return text;
}

std::string staticDigest(const NodeProfile &node) {
    const std::string text = staticFieldsText(node);
    std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
    unsigned int length = 0;
    if (EVP_Digest(text.data(), text.size(), hash.data(), &length, EVP_sha256(), nullptr) != 1)
        std::abort(); // SHA-256 over memory cannot fail short of a broken libcrypto
    std::string digest = "sha256:";
    static constexpr char digits[] = "0123456789abcdef";
    for (unsigned int i = 0; i < length; ++i) {
        digest += digits[hash[i] >> 4];
        digest += digits[hash[i] & 0xf];
    }
    return digest;
}

} // namespace stepmap::topology
