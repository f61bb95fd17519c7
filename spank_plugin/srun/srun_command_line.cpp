#include "srun/srun_command_line.hpp"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <set>

namespace stepmap::plugin {

namespace {

struct Resolved {
    std::string name;
    bool stepmap = false;
    const SrunOptionSpec *spec = nullptr; // srun's, when not stepmap's
};

// getopt_long's rule: an exact name wins, else a prefix of exactly one
// option. Unknown or ambiguous: nullopt (srun reports it).
std::optional<Resolved> resolveLong(const std::string &written,
                                    const std::map<std::string, bool> &stepmapNames) {
    if (stepmapNames.count(written))
        return Resolved{written, true, nullptr};
    for (const SrunOptionSpec &spec : srunOptionTable())
        if (written == spec.name)
            return Resolved{written, false, &spec};
    std::optional<Resolved> found;
    for (const auto &[name, _] : stepmapNames)
        if (name.rfind(written, 0) == 0) {
            if (found)
                return std::nullopt;
            found = Resolved{name, true, nullptr};
        }
    for (const SrunOptionSpec &spec : srunOptionTable())
        if (std::string_view(spec.name).rfind(written, 0) == 0) {
            if (found)
                return std::nullopt;
            found = Resolved{spec.name, false, &spec};
        }
    return found;
}

const SrunOptionSpec *byLetter(char c) {
    for (const SrunOptionSpec &spec : srunOptionTable())
        if (spec.letter == c)
            return &spec;
    return nullptr;
}

void note(SrunCommandLine &out, const SrunOption &option) {
    if (option.name == "ntasks")
        out.ntasks = option.value;
    else if (option.name == "mpi")
        out.mpi = option.value;
    else if (option.name == "multi-prog")
        out.multiProg = true;
    if (option.role == SrunOptionRole::Layout)
        out.layoutOptions.push_back(option.written);
    out.options.push_back(option);
}

} // namespace

const SrunOption *SrunCommandLine::last(const std::string &name) const {
    for (auto it = options.rbegin(); it != options.rend(); ++it)
        if (it->name == name)
            return &*it;
    return nullptr;
}

std::vector<std::string> readOwnCommandLine() {
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> args;
    std::string cur;
    for (char ch : all) {
        if (ch == '\0') {
            args.push_back(cur);
            cur.clear();
        } else {
            cur.push_back(ch);
        }
    }
    if (!args.empty())
        args.erase(args.begin());
    return args;
}

SrunCommandLine scanSrunCommandLine(const std::vector<std::string> &args,
                                    const std::map<std::string, bool> &stepmapNames) {
    SrunCommandLine out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string &a = args[i];
        if (a == "--")
            break;
        if (a.size() < 2 || a[0] != '-') {
            out.program = a; // the program to run (or --multi-prog's file)
            break;
        }
        if (a[1] == '-') {
            std::string written = a.substr(2);
            std::optional<std::string> value;
            if (auto eq = written.find('='); eq != std::string::npos) {
                value = written.substr(eq + 1);
                written = written.substr(0, eq);
            }
            auto resolved = resolveLong(written, stepmapNames);
            if (!resolved)
                continue; // unknown or ambiguous: srun says so
            const std::size_t word = i;
            bool takesNext = resolved->stepmap ? stepmapNames.at(resolved->name)
                                               : resolved->spec->argument == SrunArgument::Required;
            bool nextWord = false;
            if (!value && takesNext && i + 1 < args.size()) {
                value = args[++i];
                nextWord = true;
            }
            if (resolved->stepmap) {
                out.stepmapOptions[resolved->name] = value.value_or("");
                continue;
            }
            note(out, SrunOption{resolved->name, "--" + resolved->name, value, resolved->spec->role,
                                 word, nextWord, 0});
            continue;
        }
        // A cluster of short options: "-lK", "-n4", "-n", "4".
        for (std::size_t k = 1; k < a.size(); ++k) {
            const SrunOptionSpec *spec = byLetter(a[k]);
            if (!spec)
                continue; // unknown: srun says so
            SrunOption option{
                spec->name, std::string("-") + a[k], std::nullopt, spec->role, i, false, k};
            if (spec->argument == SrunArgument::None) {
                note(out, option);
                continue;
            }
            if (k + 1 < a.size()) {
                option.value = a.substr(k + 1);
            } else if (spec->argument == SrunArgument::Required && i + 1 < args.size()) {
                option.value = args[i + 1];
                option.valueInNextWord = true;
            }
            note(out, option);
            if (option.valueInNextWord)
                ++i;
            break; // the value ends the cluster
        }
    }
    return out;
}

std::vector<std::string> argumentsWithout(const std::vector<std::string> &args,
                                          const SrunCommandLine &cmd,
                                          const std::vector<SrunOptionRole> &roles) {
    std::set<std::size_t> dropped;
    std::map<std::size_t, std::size_t> cut; // word -> length kept
    for (const SrunOption &option : cmd.options) {
        if (std::find(roles.begin(), roles.end(), option.role) == roles.end())
            continue;
        if (option.valueInNextWord)
            dropped.insert(option.word + 1);
        if (option.letter <= 1) {
            dropped.insert(option.word);
        } else {
            // Letters before it stay; a short option with a value ends the
            // cluster, and flags removed from a cluster are not among roles.
            auto &keep = cut.try_emplace(option.word, args[option.word].size()).first->second;
            keep = std::min(keep, option.letter);
        }
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (dropped.count(i))
            continue;
        auto c = cut.find(i);
        out.push_back(c == cut.end() ? args[i] : args[i].substr(0, c->second));
    }
    return out;
}

} // namespace stepmap::plugin
