#include "srun/mpi_linkage.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

#include "os/unique_fd.hpp"

namespace stepmap::plugin {

namespace {

bool readAt(int fd, void *into, std::size_t size, std::uint64_t offset) {
    std::size_t done = 0;
    while (done < size) {
        ssize_t n = pread(fd, static_cast<char *>(into) + done, size - done,
                          static_cast<off_t>(offset + done));
        if (n <= 0)
            return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

// Bounds that keep a hostile or corrupt file from costing more than a glance.
constexpr std::size_t kMaxProgramHeaders = 256;
constexpr std::size_t kMaxDynamicEntries = 4096;
constexpr std::size_t kMaxNameLength = 4096;

} // namespace

Expected<std::vector<std::string>> neededLibraries(const std::string &path) {
    os::UniqueFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
    if (!fd)
        return UserError{path + ": " + std::strerror(errno)};
    struct stat st {};
    if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
        return UserError{path + ": not a regular file"};
    Elf64_Ehdr eh{};
    if (!readAt(fd.get(), &eh, sizeof eh, 0) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
        eh.e_phnum == 0 || eh.e_phnum > kMaxProgramHeaders)
        return UserError{path + ": not a 64-bit ELF program"};
    std::vector<Elf64_Phdr> ph(eh.e_phnum);
    if (!readAt(fd.get(), ph.data(), ph.size() * sizeof(Elf64_Phdr), eh.e_phoff))
        return UserError{path + ": truncated program headers"};
    const Elf64_Phdr *dynamic = nullptr;
    for (const Elf64_Phdr &p : ph)
        if (p.p_type == PT_DYNAMIC)
            dynamic = &p;
    if (!dynamic)
        return std::vector<std::string>{}; // static: links no MPI library
    const std::size_t count =
        std::min<std::size_t>(dynamic->p_filesz / sizeof(Elf64_Dyn), kMaxDynamicEntries);
    std::vector<Elf64_Dyn> dyn(count);
    if (!readAt(fd.get(), dyn.data(), count * sizeof(Elf64_Dyn), dynamic->p_offset))
        return UserError{path + ": truncated dynamic section"};
    // DT_STRTAB is an address; the PT_LOAD segment holding it gives its offset.
    std::uint64_t strtab = 0, strsz = 0;
    for (const Elf64_Dyn &d : dyn) {
        if (d.d_tag == DT_STRTAB)
            strtab = d.d_un.d_ptr;
        else if (d.d_tag == DT_STRSZ)
            strsz = d.d_un.d_val;
    }
    std::optional<std::uint64_t> strOffset;
    for (const Elf64_Phdr &p : ph)
        if (p.p_type == PT_LOAD && strtab >= p.p_vaddr && strtab < p.p_vaddr + p.p_filesz)
            strOffset = strtab - p.p_vaddr + p.p_offset;
    if (!strOffset)
        return UserError{path + ": no string table for its dynamic section"};
    std::vector<std::string> needed;
    for (const Elf64_Dyn &d : dyn) {
        if (d.d_tag == DT_NULL)
            break;
        if (d.d_tag != DT_NEEDED || d.d_un.d_val >= strsz)
            continue;
        char name[kMaxNameLength];
        const std::size_t want = std::min<std::size_t>(sizeof name - 1, strsz - d.d_un.d_val);
        ssize_t n = pread(fd.get(), name, want, static_cast<off_t>(*strOffset + d.d_un.d_val));
        if (n <= 0)
            continue;
        name[n] = '\0';
        needed.emplace_back(name, strnlen(name, static_cast<std::size_t>(n)));
    }
    return needed;
}

std::optional<std::string> pmiOnlyMpiLibrary(const std::vector<std::string> &needed) {
    std::optional<std::string> mpich;
    for (const std::string &lib : needed) {
        if (lib.starts_with("libpmix.so"))
            return std::nullopt;
        if (lib.starts_with("libmpich.so") || lib.starts_with("libmpichcxx.so") ||
            lib.starts_with("libmpichfort.so"))
            mpich = lib;
    }
    return mpich;
}

std::optional<std::string> resolveProgram(const std::string &program, const std::string &searchPath,
                                          const std::string &cwd) {
    auto executable = [](const std::string &p) {
        struct stat st {};
        return stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(p.c_str(), X_OK) == 0;
    };
    if (program.empty())
        return std::nullopt;
    if (program.find('/') != std::string::npos) {
        std::string p = program[0] == '/' ? program : cwd + "/" + program;
        return executable(p) ? std::optional<std::string>(p) : std::nullopt;
    }
    std::size_t from = 0;
    while (from <= searchPath.size()) {
        std::size_t colon = searchPath.find(':', from);
        std::string dir =
            searchPath.substr(from, colon == std::string::npos ? std::string::npos : colon - from);
        if (dir.empty())
            dir = cwd;
        std::string candidate = dir + "/" + program;
        if (executable(candidate))
            return candidate;
        if (colon == std::string::npos)
            break;
        from = colon + 1;
    }
    return std::nullopt;
}

std::optional<UserError> pmiOnlyProgram(const SrunCommandLine &cmd, const std::string &searchPath) {
    if (!cmd.program || cmd.last("multi-prog"))
        return std::nullopt;
    std::string cwd;
    if (const SrunOption *dir = cmd.last("chdir"); dir && dir->value)
        cwd = *dir->value;
    if (cwd.empty() || cwd[0] != '/') {
        char here[4096];
        std::string base = getcwd(here, sizeof here) ? here : "/";
        cwd = cwd.empty() ? base : base + "/" + cwd;
    }
    auto program = resolveProgram(*cmd.program, searchPath, cwd);
    if (!program)
        return std::nullopt;
    auto needed = neededLibraries(*program);
    if (!needed)
        return std::nullopt;
    auto library = pmiOnlyMpiLibrary(*needed);
    if (!library)
        return std::nullopt;
    return UserError{*cmd.program + " is linked with MPICH (" + *library +
                     "), which talks to its launcher through PMI-1/PMI-2 only; stepmap serves "
                     "PMIx, so each rank would start alone. Run it without stepmap's options as "
                     "`srun --mpi=pmi2 ...`, or use an MPI built with PMIx (Open MPI, or MPICH "
                     "configured --with-pmi=pmix)"};
}

} // namespace stepmap::plugin
