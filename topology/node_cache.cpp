#include "node_cache.hpp"

#include "hwloc_handles.hpp"

#include "os/unique_fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <vector>

namespace stepmap::topology {

namespace {

constexpr const char *kMagic = "stepmap-node-topology 1";

std::string errnoText() {
    return std::strerror(errno);
}

// A small /proc or /sys file, its last newline dropped; empty if missing.
std::string readSmallFile(const char *path) {
    os::UniqueFd fd(open(path, O_RDONLY | O_CLOEXEC));
    if (!fd)
        return {};
    std::string out;
    char buf[4096];
    ssize_t n;
    while (out.size() < 65536 && (n = read(fd.get(), buf, sizeof buf)) > 0)
        out.append(buf, static_cast<std::size_t>(n));
    while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
        out.pop_back();
    return out;
}

std::string pciDevices() {
    std::vector<std::string> names;
    if (DIR *d = opendir("/sys/bus/pci/devices")) {
        while (const dirent *e = readdir(d))
            if (e->d_name[0] != '.')
                names.emplace_back(e->d_name);
        closedir(d);
    }
    std::sort(names.begin(), names.end());
    std::string out;
    for (const auto &n : names)
        out += (out.empty() ? "" : ",") + n;
    return out;
}

// root's, and nobody else may write it.
bool rootOnly(const struct stat &st) {
    return st.st_uid == 0 && (st.st_mode & (S_IWGRP | S_IWOTH)) == 0;
}

std::string field(const std::string &what, const std::string &cached, const std::string &now) {
    return what + " changed since it was made ('" + cached + "', now '" + now + "')";
}

} // namespace

MachineSignature currentMachineSignature() {
    MachineSignature s;
    s.bootId = readSmallFile("/proc/sys/kernel/random/boot_id");
    const unsigned v = hwloc_get_api_version();
    s.hwloc = std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
              std::to_string(v & 0xff);
    s.cpus = readSmallFile("/sys/devices/system/cpu/online");
    s.numa = readSmallFile("/sys/devices/system/node/online");
    s.pci = pciDevices();
    return s;
}

std::string nodeTopologyCacheText(const MachineSignature &s, const std::string &xml) {
    return std::string(kMagic) + "\nboot_id " + s.bootId + "\nhwloc " + s.hwloc + "\ncpus " +
           s.cpus + "\nnuma " + s.numa + "\npci " + s.pci + "\nxml\n" + xml;
}

Expected<std::string> writeNodeTopologyCache(const std::string &dir) {
    if (dir.empty() || dir.front() != '/')
        return UserError{"topology cache directory '" + dir + "': expected an absolute path"};
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
        return UserError{"cannot make the topology cache directory " + dir + ": " + errnoText()};
    // Not through a link, and not into a directory another user could
    // swap files in (a user's directory would let them choose what root
    // overwrites).
    os::UniqueFd dfd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!dfd || fstat(dfd.get(), &st) != 0)
        return UserError{"cannot open the topology cache directory " + dir + ": " + errnoText()};
    if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return UserError{"topology cache directory " + dir +
                         " is not root's alone (owner or group/other write): not written"};

    hwloc_topology_t raw = nullptr;
    if (hwloc_topology_init(&raw) != 0)
        return UserError{"hwloc_topology_init failed"};
    TopologyPtr topo(raw);
    // What a step's server would discover (step_topology.cpp): the whole
    // machine, its important I/O objects with it.
    hwloc_topology_set_flags(topo.get(), HWLOC_TOPOLOGY_FLAG_INCLUDE_DISALLOWED);
    hwloc_topology_set_io_types_filter(topo.get(), HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo.get()) != 0)
        return UserError{"cannot discover the node's topology"};
    char *buf = nullptr;
    int len = 0;
    if (hwloc_topology_export_xmlbuffer(topo.get(), &buf, &len, 0) != 0 || !buf)
        return UserError{"cannot export the node's topology as XML"};
    std::string xml(buf, len > 0 ? static_cast<std::size_t>(len - 1) : 0); // len counts the NUL
    hwloc_free_xmlbuffer(topo.get(), buf);
    const std::string text = nodeTopologyCacheText(currentMachineSignature(), xml);

    const std::string temp =
        std::string(".") + kNodeTopologyCacheName + "." + std::to_string(getpid());
    unlinkat(dfd.get(), temp.c_str(), 0);
    os::UniqueFd fd(openat(dfd.get(), temp.c_str(),
                           O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644));
    if (!fd)
        return UserError{"cannot write in " + dir + ": " + errnoText()};
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = write(fd.get(), text.data() + done, text.size() - done);
        if (n <= 0) {
            const std::string why = errnoText();
            unlinkat(dfd.get(), temp.c_str(), 0);
            return UserError{"cannot write the topology cache in " + dir + ": " + why};
        }
        done += static_cast<std::size_t>(n);
    }
    if (fchmod(fd.get(), 0644) != 0 || fsync(fd.get()) != 0 ||
        renameat(dfd.get(), temp.c_str(), dfd.get(), kNodeTopologyCacheName) != 0) {
        const std::string why = errnoText();
        unlinkat(dfd.get(), temp.c_str(), 0);
        return UserError{"cannot put the topology cache in place in " + dir + ": " + why};
    }
    return dir + "/" + kNodeTopologyCacheName;
}

Expected<std::string> readNodeTopologyCache(const std::string &path) {
    const auto slash = path.rfind('/');
    if (path.empty() || path.front() != '/' || slash == path.size() - 1)
        return UserError{"'" + path + "' is not an absolute file path"};
    const std::string dir = slash == 0 ? "/" : path.substr(0, slash);
    const std::string name = path.substr(slash + 1);
    os::UniqueFd dfd(open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!dfd || fstat(dfd.get(), &st) != 0)
        return UserError{"no directory " + dir + " (" + errnoText() + ")"};
    if (!rootOnly(st))
        return UserError{"its directory " + dir + " is not root's alone"};
    os::UniqueFd fd(
        openat(dfd.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd || fstat(fd.get(), &st) != 0)
        return UserError{"cannot open it (" + errnoText() + ")"};
    if (!S_ISREG(st.st_mode) || !rootOnly(st))
        return UserError{"it is not a file root alone may write"};
    if (static_cast<std::size_t>(st.st_size) > kMaxNodeTopologyCacheBytes)
        return UserError{"it is larger than " + std::to_string(kMaxNodeTopologyCacheBytes >> 20) +
                         " MiB"};
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = read(fd.get(), text.data() + done, text.size() - done);
        if (n <= 0)
            return UserError{"cannot read it (" +
                             (n == 0 ? std::string("cut short") : errnoText()) + ")"};
        done += static_cast<std::size_t>(n);
    }

    // The header, line by line, then the XML.
    std::istringstream in(text);
    std::string line;
    MachineSignature cached;
    const std::pair<const char *, std::string *> fields[] = {
        {"boot_id ", &cached.bootId}, {"hwloc ", &cached.hwloc}, {"cpus ", &cached.cpus},
        {"numa ", &cached.numa},      {"pci ", &cached.pci},
    };
    if (!std::getline(in, line) || line != kMagic)
        return UserError{"it is not a stepmap topology cache (first line '" + line.substr(0, 64) +
                         "')"};
    for (const auto &[key, value] : fields) {
        if (!std::getline(in, line) || line.rfind(key, 0) != 0)
            return UserError{std::string("its header has no '") + key + "' line where expected"};
        *value = line.substr(std::strlen(key));
    }
    if (!std::getline(in, line) || line != "xml")
        return UserError{"its header does not end with 'xml'"};
    const auto xmlStart = static_cast<std::size_t>(in.tellg());

    const MachineSignature now = currentMachineSignature();
    if (cached.bootId != now.bootId)
        return UserError{"it was made in another boot"};
    if (cached.hwloc != now.hwloc)
        return UserError{"it was made by hwloc " + cached.hwloc + ", this server uses " +
                         now.hwloc};
    if (cached.cpus != now.cpus)
        return UserError{field("the online CPUs", cached.cpus, now.cpus)};
    if (cached.numa != now.numa)
        return UserError{field("the online NUMA nodes", cached.numa, now.numa)};
    if (cached.pci != now.pci)
        return UserError{"the PCI devices changed since it was made"};
    return text.substr(xmlStart);
}

} // namespace stepmap::topology
