#include "srun_command_line.hpp"

#include <fstream>
#include <iterator>
#include <set>

namespace stepmap::plugin {

namespace {

// srun (22.05) short options that take a value.
const std::set<char> kShortWithValue = {'A', 'b', 'B', 'c', 'C', 'd', 'D', 'e', 'G',
                                        'i', 'J', 'L', 'm', 'M', 'n', 'N', 'o', 'p',
                                        'q', 'r', 'S', 't', 'T', 'W', 'w', 'x'};

// srun long options that take a value in the next word when not given "=".
// Options whose value is optional ("--nice[=v]") only take it after "=".
const std::set<std::string> kLongWithValue = {"account",
                                              "acctg-freq",
                                              "bb",
                                              "bbf",
                                              "bcast",
                                              "bcast-exclude",
                                              "begin",
                                              "cpus-per-task",
                                              "comment",
                                              "cpu-freq",
                                              "dependency",
                                              "deadline",
                                              "delay-boot",
                                              "chdir",
                                              "export",
                                              "error",
                                              "epilog",
                                              "gres",
                                              "gres-flags",
                                              "input",
                                              "jobid",
                                              "job-name",
                                              "licenses",
                                              "clusters",
                                              "distribution",
                                              "mail-type",
                                              "mail-user",
                                              "mcs-label",
                                              "mpi",
                                              "ntasks",
                                              "ntasks-per-node",
                                              "nodes",
                                              "output",
                                              "het-group",
                                              "partition",
                                              "power",
                                              "priority",
                                              "prolog",
                                              "profile",
                                              "qos",
                                              "relative",
                                              "core-spec",
                                              "signal",
                                              "slurmd-debug",
                                              "switches",
                                              "task-epilog",
                                              "task-prolog",
                                              "thread-spec",
                                              "threads",
                                              "time",
                                              "time-min",
                                              "wait",
                                              "wckey",
                                              "cluster-constraint",
                                              "constraint",
                                              "mem",
                                              "mincpus",
                                              "reservation",
                                              "tmp",
                                              "nodelist",
                                              "exclude",
                                              "mem-per-cpu",
                                              "sockets-per-node",
                                              "cores-per-socket",
                                              "threads-per-core",
                                              "ntasks-per-core",
                                              "ntasks-per-socket",
                                              "cpus-per-gpu",
                                              "gpus",
                                              "gpu-bind",
                                              "gpu-freq",
                                              "gpus-per-node",
                                              "gpus-per-socket",
                                              "gpus-per-task",
                                              "mem-per-gpu",
                                              "cpu-bind",
                                              "mem-bind",
                                              "hint",
                                              "network",
                                              "extra-node-info",
                                              "accel-bind",
                                              "open-mode",
                                              "uid",
                                              "gid",
                                              "tres-per-task",
                                              "ntasks-per-gpu",
                                              "ntasks-per-tres",
                                              "container",
                                              "kill-on-invalid-dep",
                                              "resv-ports",
                                              "cpus-per-gres",
                                              "mpi-type"};

// srun options that set the layout; they fight a stepmap plan.
const std::set<std::string> kLayoutLong = {
    "nodes", "nodelist", "distribution", "relative", "ntasks-per-node", "exclude", "arbitrary"};
const std::set<char> kLayoutShort = {'N', 'w', 'm', 'r', 'x'};

} // namespace

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
            std::string name = a.substr(2);
            std::optional<std::string> value;
            if (auto eq = name.find('='); eq != std::string::npos) {
                value = name.substr(eq + 1);
                name = name.substr(0, eq);
            }
            auto mine = stepmapNames.find(name);
            bool takesValue =
                mine != stepmapNames.end() ? mine->second : kLongWithValue.count(name) > 0;
            if (!value && takesValue && i + 1 < args.size())
                value = args[++i];
            if (mine != stepmapNames.end())
                out.stepmapOptions[name] = value.value_or("");
            else if (name == "ntasks")
                out.ntasks = value;
            else if (name == "mpi")
                out.mpi = value;
            else if (name == "multi-prog")
                out.multiProg = true;
            if (kLayoutLong.count(name))
                out.layoutOptions.push_back("--" + name);
            continue;
        }
        // A cluster of short options: "-lK", "-n4", "-n", "4".
        for (std::size_t k = 1; k < a.size(); ++k) {
            char c = a[k];
            if (kLayoutShort.count(c))
                out.layoutOptions.push_back(std::string("-") + c);
            if (!kShortWithValue.count(c))
                continue;
            std::optional<std::string> value;
            if (k + 1 < a.size())
                value = a.substr(k + 1);
            else if (i + 1 < args.size())
                value = args[++i];
            if (c == 'n')
                out.ntasks = value;
            break;
        }
    }
    return out;
}

} // namespace stepmap::plugin
