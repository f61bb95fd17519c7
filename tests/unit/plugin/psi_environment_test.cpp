// The PSI_* environment as equivalents of stepmap's ParaStation options
// (seed 004, notes/parastation.md): which variable engages stepmap, on-when-
// set switches, option over variable, the first pool variable winning, the
// PSI_TPP -> OMP_NUM_THREADS -> 1 chain, and every error's exact text.

#include "srun/psi_environment.hpp"

#include "options.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace stepmap::plugin {
namespace {

using Notes = std::vector<std::string>;

// A reader that knows one file; records what was asked.
struct FakeFiles {
    std::map<std::string, std::string> files;
    std::vector<std::string> asked;

    FileReader reader() {
        return [this](const std::string &path) -> Expected<std::string> {
            asked.push_back(path);
            const auto found = files.find(path);
            if (found == files.end())
                return UserError{"No such file or directory"};
            return found->second;
        };
    }
};

struct Applied {
    PlanRequest request;
    Notes notes;
};

Applied applyAll(const StepmapOptions &options, const EnvironmentValues &env) {
    FakeFiles files;
    PlanRequest request;
    auto notes = applyParaStationEnvironment(options, env, files.reader(), request);
    EXPECT_TRUE(notes.ok()) << notes.error().message;
    return {request, notes.ok() ? notes.value() : Notes{}};
}

std::string failure(const StepmapOptions &options, const EnvironmentValues &env) {
    FakeFiles files;
    PlanRequest request;
    auto notes = applyParaStationEnvironment(options, env, files.reader(), request);
    EXPECT_FALSE(notes.ok());
    return notes.ok() ? "" : notes.error().message;
}

TEST(PsiEnvironment, WhichVariablesEngageStepmap) {
    EXPECT_EQ(firstPsiVariable({}), std::nullopt);
    EXPECT_EQ(firstPsiVariable({{"OMP_NUM_THREADS", "4"}}), std::nullopt);
    EXPECT_EQ(firstPsiVariable({{"PSI_HOSTS", "n1"}, {"PSI_OVERBOOK", "0"}}), "PSI_OVERBOOK");
    for (const std::string &name : psiVariableNames())
        EXPECT_EQ(firstPsiVariable({{name, ""}}), name) << name;
    // Pinning's __PSI_* variables are read but engage nothing alone.
    for (const char *name : {"__PSI_NO_PINPROC", "__PSI_CPUMAP", "__PSI_NO_BINDMEM"})
        EXPECT_EQ(firstPsiVariable({{name, "0"}}), std::nullopt) << name;
    EXPECT_EQ(environmentNamesRead().size(), psiVariableNames().size() + 4);
    EXPECT_EQ(environmentNamesRead().back(), "OMP_NUM_THREADS");
}

// Seed 004, "Process pinning": on by default; __PSI_NO_PINPROC (any value)
// turns it off, and memory binding with it; __PSI_NO_BINDMEM keeps pinning
// but not memory binding; __PSI_CPUMAP gives the slots' CPUs.
TEST(PsiEnvironment, PinningIsOnUnlessNoPinprocAndTheCpuMapIsParsed) {
    const Applied plain = applyAll({}, {{"PSI_TPP", "2"}});
    EXPECT_TRUE(plain.request.parastation.pin);
    EXPECT_TRUE(plain.request.parastation.bindMemory);
    EXPECT_TRUE(plain.request.parastation.cpuMap.empty());

    const Applied off = applyAll({}, {{"PSI_TPP", "2"}, {"__PSI_NO_PINPROC", "0"}});
    EXPECT_FALSE(off.request.parastation.pin);
    EXPECT_FALSE(off.request.parastation.bindMemory);

    const Applied noMem = applyAll({}, {{"PSI_TPP", "2"}, {"__PSI_NO_BINDMEM", ""}});
    EXPECT_TRUE(noMem.request.parastation.pin);
    EXPECT_FALSE(noMem.request.parastation.bindMemory);

    const Applied mapped = applyAll({}, {{"PSI_OVERBOOK", ""}, {"__PSI_CPUMAP", "1, 0,4-6"}});
    EXPECT_EQ(mapped.request.parastation.cpuMap, (std::vector<std::uint32_t>{1, 0, 4, 5, 6}));

    const Applied ignored = applyAll({}, {{"__PSI_NO_PINPROC", ""}, {"__PSI_CPUMAP", "junk"}});
    EXPECT_TRUE(ignored.request.parastation.cpuMap.empty());
    EXPECT_EQ(ignored.notes, Notes{"__PSI_CPUMAP is ignored: __PSI_NO_PINPROC turns pinning off"});
}

TEST(PsiEnvironment, ABadCpuMapNamesTheVariableAndTheFix) {
    EXPECT_EQ(failure({}, {{"__PSI_CPUMAP", "0,0"}}),
              "__PSI_CPUMAP '0,0': CPU 0 is listed twice: each CPU-slot needs a CPU of its own");
    EXPECT_EQ(failure({}, {{"__PSI_CPUMAP", "3-1"}}),
              "__PSI_CPUMAP '3-1': range '3-1' ends before it starts (write it as 1-3)");
    EXPECT_EQ(failure({}, {{"__PSI_CPUMAP", ""}}),
              "__PSI_CPUMAP '': no CPUs (expected the CPUs of CPU-slots 0, 1, ... as numbers "
              "and ranges, e.g. \"0,2,1,3\" or \"0-3\")");
    EXPECT_EQ(failure({}, {{"__PSI_CPUMAP", "0,,1"}}).substr(0, 33),
              "__PSI_CPUMAP '0,,1': empty item (");
    EXPECT_EQ(failure({}, {{"__PSI_CPUMAP", "cpu1"}}).substr(0, 51),
              "__PSI_CPUMAP 'cpu1': 'cpu1' is not a CPU index or r");
    EXPECT_EQ(failure({}, {{"__PSI_CPUMAP", "70000"}}),
              "__PSI_CPUMAP '70000': '70000': CPU indices go up to 65535");
}

// Seed 004: PSI_EXCLUSIVE selects nodes no other job uses; PSI_OVERBOOK
// "also enforces PSI_EXCLUSIVE"; PSI_WAIT queues. Both are on when set.
TEST(PsiEnvironment, ExclusiveAndWaitAreOnWhenSetAndOverbookingEnforcesExclusive) {
    const Applied exclusive = applyAll({}, {{"PSI_EXCLUSIVE", "0"}});
    EXPECT_TRUE(exclusive.request.parastation.exclusive);
    EXPECT_EQ(exclusive.request.parastation.sources.exclusive, "PSI_EXCLUSIVE");
    EXPECT_TRUE(exclusive.request.parastation.fromEnvironment);
    EXPECT_FALSE(exclusive.request.parastation.wait);

    const Applied overbook = applyAll({}, {{"PSI_OVERBOOK", ""}});
    EXPECT_TRUE(overbook.request.parastation.exclusive);
    EXPECT_EQ(overbook.request.parastation.sources.exclusive, "PSI_OVERBOOK");

    StepmapOptions options;
    options.overbook = true;
    const Applied option = applyAll(options, {});
    EXPECT_TRUE(option.request.parastation.exclusive);
    EXPECT_EQ(option.request.parastation.sources.exclusive, "--overbook");
    // An option alone is no ParaStation environment: srun's queue rules.
    EXPECT_FALSE(option.request.parastation.fromEnvironment);

    const Applied waiting = applyAll({}, {{"PSI_HOSTS", "n1"}, {"PSI_WAIT", ""}});
    EXPECT_TRUE(waiting.request.parastation.wait);
    EXPECT_TRUE(waiting.request.parastation.fromEnvironment);
    EXPECT_FALSE(waiting.request.parastation.exclusive);
}

TEST(PsiEnvironment, NothingSetChangesNothing) {
    const Applied a = applyAll({}, {});
    EXPECT_EQ(a.request, PlanRequest{});
    EXPECT_TRUE(a.notes.empty());
}

TEST(PsiEnvironment, SwitchesAreOnWhenMerelySet) {
    for (const std::string value : {"", "0", "no", "1"}) {
        const Applied a = applyAll({}, {{"PSI_OVERBOOK", value}, {"PSI_LOOP_NODES_FIRST", value}});
        EXPECT_TRUE(a.request.overbook) << value;
        EXPECT_TRUE(a.request.parastation.loopNodesFirst) << value;
        EXPECT_EQ(a.request.parastation.sources.overbook, "PSI_OVERBOOK");
        EXPECT_EQ(a.request.parastation.sources.loopNodesFirst, "PSI_LOOP_NODES_FIRST");
    }
    // The option wins: messages name it.
    StepmapOptions options;
    options.overbook = true;
    options.loopNodesFirst = true;
    const Applied a = applyAll(options, {{"PSI_OVERBOOK", "1"}, {"PSI_LOOP_NODES_FIRST", "1"}});
    EXPECT_TRUE(a.request.overbook);
    EXPECT_EQ(a.request.parastation.sources.overbook, "--overbook");
    EXPECT_EQ(a.request.parastation.sources.loopNodesFirst, "--loop-nodes-first");
}

TEST(PsiEnvironment, NodesSortOptionOverVariable) {
    Applied a = applyAll({}, {{"PSI_NODES_SORT", "proc+load"}});
    EXPECT_EQ(a.request.parastation.nodesSort, NodesSort::ProcLoad);
    EXPECT_EQ(a.request.parastation.sources.nodesSort, "PSI_NODES_SORT");

    StepmapOptions options;
    options.nodesSort = "none";
    a = applyAll(options, {{"PSI_NODES_SORT", "bogus"}});
    EXPECT_EQ(a.request.parastation.nodesSort, NodesSort::None);
    EXPECT_EQ(a.request.parastation.sources.nodesSort, "--nodes-sort");
    EXPECT_EQ(a.notes, Notes{"PSI_NODES_SORT is ignored: --nodes-sort is given"});
}

TEST(PsiEnvironment, ThreadsPerProcessChain) {
    struct Case {
        std::string name;
        std::optional<std::string> option;
        EnvironmentValues env;
        std::optional<int> threads; // unset: not given
        std::string source;
    };
    const std::vector<Case> cases = {
        {"default", std::nullopt, {}, std::nullopt, "--tpp"},
        {"PSI_TPP", std::nullopt, {{"PSI_TPP", "2"}}, 2, "PSI_TPP"},
        {"PSI_TPP over OMP_NUM_THREADS",
         std::nullopt,
         {{"PSI_TPP", "2"}, {"OMP_NUM_THREADS", "8"}},
         2,
         "PSI_TPP"},
        {"--tpp over both", "4", {{"PSI_TPP", "2"}, {"OMP_NUM_THREADS", "8"}}, 4, "--tpp"},
        {"OMP_NUM_THREADS under ParaStation placement",
         std::nullopt,
         {{"PSI_OVERBOOK", ""}, {"OMP_NUM_THREADS", "3"}},
         3,
         "OMP_NUM_THREADS"},
        {"OMP_NUM_THREADS nested: the outer level",
         std::nullopt,
         {{"PSI_LOOP_NODES_FIRST", ""}, {"OMP_NUM_THREADS", "4,2"}},
         4,
         "OMP_NUM_THREADS"},
        {"OMP_NUM_THREADS empty",
         std::nullopt,
         {{"PSI_LOOP_NODES_FIRST", ""}, {"OMP_NUM_THREADS", ""}},
         std::nullopt,
         "--tpp"},
        // Not a ParaStation run: OpenMP's variable is left to OpenMP.
        {"OMP_NUM_THREADS alone", std::nullopt, {{"OMP_NUM_THREADS", "3"}}, std::nullopt, "--tpp"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.name);
        StepmapOptions options;
        options.tpp = c.option;
        const Applied a = applyAll(options, c.env);
        EXPECT_EQ(a.request.parastation.threadsPerProcess, c.threads);
        EXPECT_EQ(a.request.parastation.sources.threadsPerProcess, c.source);
    }
    StepmapOptions options;
    options.tpp = "4";
    EXPECT_EQ(applyAll(options, {{"PSI_TPP", "x"}}).notes,
              Notes{"PSI_TPP is ignored: --tpp is given"});
}

TEST(PsiEnvironment, FirstPoolVariableWins) {
    FakeFiles files;
    files.files["/home/u/hosts"] = "n2\nn2\nn1\n";

    PlanRequest request;
    auto notes = applyParaStationEnvironment(
        {}, {{"PSI_NODES", "1,0"}, {"PSI_HOSTS", "n3"}, {"PSI_HOSTFILE", "/home/u/hosts"}},
        files.reader(), request);
    ASSERT_TRUE(notes.ok()) << notes.error().message;
    ASSERT_TRUE(request.parastation.pool);
    EXPECT_EQ(request.parastation.pool->kind, NodePool::Kind::Nodes);
    EXPECT_EQ(request.parastation.pool->indices, (std::vector<std::uint32_t>{1, 0}));
    EXPECT_EQ(notes.value(), (Notes{"PSI_HOSTS is ignored: PSI_NODES is set and comes first",
                                    "PSI_HOSTFILE is ignored: PSI_NODES is set and comes first"}));
    EXPECT_TRUE(files.asked.empty()); // the ignored file is not even read

    request = {};
    notes = applyParaStationEnvironment(
        {}, {{"PSI_HOSTS", "n3 n1"}, {"PSI_HOSTFILE", "/home/u/hosts"}}, files.reader(), request);
    ASSERT_TRUE(notes.ok());
    EXPECT_EQ(request.parastation.pool->names, (std::vector<std::string>{"n3", "n1"}));

    request = {};
    notes = applyParaStationEnvironment({}, {{"PSI_HOSTFILE", "/home/u/hosts"}}, files.reader(),
                                        request);
    ASSERT_TRUE(notes.ok());
    EXPECT_EQ(request.parastation.pool->kind, NodePool::Kind::Hostfile);
    EXPECT_EQ(request.parastation.pool->fileName, "/home/u/hosts");
    EXPECT_EQ(request.parastation.pool->names, (std::vector<std::string>{"n2", "n2", "n1"}));
    EXPECT_EQ(files.asked, (std::vector<std::string>{"/home/u/hosts"}));
}

TEST(PsiEnvironment, HostOptionsWinOverThePool) {
    StepmapOptions options;
    options.host = "n2";
    const Applied a = applyAll(options, {{"PSI_NODES", "0"}, {"PSI_HOSTS", "n1"}});
    EXPECT_FALSE(a.request.parastation.pool);
    EXPECT_EQ(a.notes, (Notes{"PSI_NODES is ignored: --host is given",
                              "PSI_HOSTS is ignored: --host is given"}));
    StepmapOptions file;
    file.hostfile = "/h";
    EXPECT_EQ(applyAll(file, {{"PSI_HOSTFILE", "/x"}}).notes,
              Notes{"PSI_HOSTFILE is ignored: --hostfile is given"});
}

TEST(PsiEnvironment, Errors) {
    struct Case {
        EnvironmentValues env;
        std::string message;
    };
    const std::vector<Case> cases = {
        {{{"PSI_NODES_SORT", "busy"}},
         "PSI_NODES_SORT 'busy': unknown sort criterion (accepted, in any case: PROC, LOAD, "
         "LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)"},
        {{{"PSI_TPP", "0"}},
         "PSI_TPP '0': expected a positive number of hardware threads per process, e.g. "
         "PSI_TPP=2"},
        {{{"PSI_OVERBOOK", ""}, {"OMP_NUM_THREADS", "many"}},
         "OMP_NUM_THREADS 'many': expected a positive number of hardware threads per process, "
         "e.g. OMP_NUM_THREADS=4 (or set PSI_TPP)"},
        {{{"PSI_NODES", "0,x"}},
         "PSI_NODES '0,x': 'x' is not a node index or range (expected node indices and ranges, "
         "e.g. \"0,1,3,17-20\")"},
        {{{"PSI_HOSTS", ""}},
         "PSI_HOSTS '': no host names (expected names separated by blanks, e.g. \"n1 n2\")"},
        {{{"PSI_HOSTFILE", "/nonexistent/hosts"}},
         "cannot read PSI_HOSTFILE '/nonexistent/hosts': No such file or directory"},
        {{{"PSI_HOSTFILE", ""}},
         "PSI_HOSTFILE is set but empty: give the name of a file with one host name per line, "
         "or unset it"},
    };
    for (const Case &c : cases)
        EXPECT_EQ(failure({}, c.env), c.message);

    StepmapOptions options;
    options.tpp = "-1";
    EXPECT_EQ(failure(options, {}), "--tpp '-1': expected a positive number of hardware threads "
                                    "per process, e.g. --tpp=2");
    options = {};
    options.nodesSort = "LOAD-1";
    EXPECT_EQ(failure(options, {}),
              "--nodes-sort 'LOAD-1': unknown sort criterion (accepted, in any case: PROC, "
              "LOAD, LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)");
}

TEST(ParaStationOptions, RegisteredAndMerged) {
    const auto arity = optionArity();
    EXPECT_EQ(arity.at("loop-nodes-first"), false);
    EXPECT_EQ(arity.at("nodes-sort"), true);
    EXPECT_EQ(arity.at("tpp"), true);

    const StepmapOptions merged = mergeOptions({{"tpp", "2"}, {"loop-nodes-first", ""}},
                                               {{"tpp", "8"}, {"nodes-sort", "proc"}});
    EXPECT_TRUE(merged.loopNodesFirst);
    EXPECT_EQ(merged.tpp, "2"); // command line over sbatch/salloc's forwarded value
    EXPECT_EQ(merged.nodesSort, "proc");
    EXPECT_TRUE(merged.any());
    StepmapOptions only;
    only.tpp = "1";
    EXPECT_TRUE(only.any());

    EXPECT_TRUE(checkOptionValue("nodes-sort", "LOAD_15").ok());
    EXPECT_TRUE(checkOptionValue("tpp", "4").ok());
    EXPECT_EQ(checkOptionValue("tpp", "0").error().message,
              "--tpp '0': expected a positive number of hardware threads per process, e.g. "
              "--tpp=2");
    EXPECT_EQ(checkOptionValue("nodes-sort", "fast").error().message,
              "--nodes-sort 'fast': unknown sort criterion (accepted, in any case: PROC, LOAD, "
              "LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)");
}

} // namespace
} // namespace stepmap::plugin
