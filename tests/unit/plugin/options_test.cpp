// The srun options stepmap adds: their names and arguments as srun --help
// shows them, where their values come from (the command line before what
// sbatch/salloc forwarded), and each value checked on its own with the
// message the user sees.

#include "options.hpp"

#include "display_map.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace stepmap;
using namespace stepmap::plugin;

namespace {

std::string refusal(const std::string &name, const std::string &value) {
    auto r = checkOptionValue(name, value);
    return r ? std::string("(accepted)") : r.error().message;
}

// Sets SLURM_SPANK__SLURM_SPANK_OPTION_stepmap_<name> for one test.
class ForwardedVariable {
public:
    ForwardedVariable(std::string name, const std::string &value)
        : name_("SLURM_SPANK__SLURM_SPANK_OPTION_stepmap_" + std::move(name)) {
        setenv(name_.c_str(), value.c_str(), 1);
    }
    ~ForwardedVariable() { unsetenv(name_.c_str()); }

private:
    std::string name_;
};

} // namespace

TEST(Options, NamesAndArgumentsInHelpOrder) {
    std::vector<std::string> shown;
    for (const auto &s : optionSpecs())
        shown.push_back(std::string("--") + s.name + (s.arg ? std::string("=") + s.arg : ""));
    EXPECT_EQ(shown, (std::vector<std::string>{"--host=hosts", "--hostfile=file", "--map-by=policy",
                                               "--rank-by=policy", "--bind-to=object", "--overbook",
                                               "--loop-nodes-first", "--nodes-sort=kind", "--tpp=N",
                                               "--display-map=[svg:FILE]", "--modex=mode",
                                               "--with-ft=mode"}));
    for (const auto &s : optionSpecs()) {
        // srun --help shows one line per option: Slurm wraps a help longer
        // than 50 characters on an 80-column terminal.
        EXPECT_EQ(std::string(s.usage).find('\n'), std::string::npos) << s.name;
        EXPECT_LE(std::string(s.usage).size(), 50u) << s.name;
        // An optional value is shown in brackets, and only a value can be.
        EXPECT_EQ(s.valueOptional, s.arg && s.arg[0] == '[') << s.name;
    }
}

TEST(Options, ArityTellsWhichOptionsTakeAValue) {
    // --display-map's value is optional: only --display-map=VALUE gives one.
    auto arity = optionArity();
    EXPECT_EQ(arity.size(), optionSpecs().size());
    for (const char *flag : {"overbook", "loop-nodes-first", "display-map"})
        EXPECT_FALSE(arity.at(flag)) << flag;
    for (const char *valued : {"host", "hostfile", "map-by", "rank-by", "bind-to", "nodes-sort",
                               "tpp", "modex", "with-ft"})
        EXPECT_TRUE(arity.at(valued)) << valued;
}

TEST(Options, NoOptionGivenMeansNothingToDo) {
    StepmapOptions o = mergeOptions({}, {});
    EXPECT_FALSE(o.any());
    EXPECT_FALSE(o.host);
    EXPECT_FALSE(o.overbook);
    EXPECT_FALSE(o.displayMap);
}

TEST(Options, EveryOptionLandsInItsField) {
    StepmapOptions o = mergeOptions({{"host", "n1,n2"},
                                     {"hostfile", "hf"},
                                     {"map-by", "node"},
                                     {"rank-by", "slot"},
                                     {"bind-to", "core"},
                                     {"overbook", ""},
                                     {"loop-nodes-first", ""},
                                     {"nodes-sort", "PROC"},
                                     {"tpp", "2"},
                                     {"display-map", ""}},
                                    {});
    EXPECT_EQ(o.host, "n1,n2");
    EXPECT_EQ(o.hostfile, "hf");
    EXPECT_EQ(o.mapBy, "node");
    EXPECT_EQ(o.rankBy, "slot");
    EXPECT_EQ(o.bindTo, "core");
    EXPECT_TRUE(o.overbook);
    EXPECT_TRUE(o.loopNodesFirst);
    EXPECT_EQ(o.nodesSort, "PROC");
    EXPECT_EQ(o.tpp, "2");
    EXPECT_EQ(o.displayMap, "");
}

TEST(Options, EachOptionAloneCountsAsGiven) {
    for (const auto &s : optionSpecs())
        EXPECT_TRUE(mergeOptions({{s.name, "x"}}, {}).any()) << s.name;
}

TEST(Options, TheCommandLineWinsOverForwardedValues) {
    StepmapOptions o = mergeOptions({{"map-by", "core"}},
                                    {{"map-by", "node"}, {"bind-to", "none"}, {"overbook", "1"}});
    EXPECT_EQ(o.mapBy, "core");
    EXPECT_EQ(o.bindTo, "none");
    EXPECT_TRUE(o.overbook);
}

TEST(Options, ForwardedOptionsAreReadFromTheJobEnvironment) {
    ForwardedVariable mapBy("map_by", "ppr:2:node");
    ForwardedVariable flag("loop_nodes_first", "");
    ForwardedVariable host("host", "n[1-2]");
    ForwardedVariable unknown("verbose", "1");
    ForwardedVariable otherPlugin("", "x"); // the prefix alone names no option
    auto f = forwardedOptions();
    EXPECT_EQ(f, (std::map<std::string, std::string>{
                     {"host", "n[1-2]"}, {"loop-nodes-first", ""}, {"map-by", "ppr:2:node"}}));
}

TEST(Options, OtherPluginsAndSpellingsAreNotForwarded) {
    setenv("SLURM_SPANK__SLURM_SPANK_OPTION_other_map_by", "node", 1);
    setenv("_SLURM_SPANK_OPTION_stepmap_map_by", "node", 1);
    ForwardedVariable dashed("map-by", "node"); // Slurm writes '_' for '-'
    auto f = forwardedOptions();
    unsetenv("SLURM_SPANK__SLURM_SPANK_OPTION_other_map_by");
    unsetenv("_SLURM_SPANK_OPTION_stepmap_map_by");
    EXPECT_TRUE(f.empty());
}

TEST(Options, ValidValuesPass) {
    for (auto [name, value] : std::vector<std::pair<std::string, std::string>>{
             {"host", "n1,n2:1"},
             {"host", "!^n3"},
             {"hostfile", "hosts.txt"},
             {"map-by", "ppr:2:node:PE=2"},
             {"rank-by", "span"},
             {"bind-to", "core:overload-allowed"},
             {"nodes-sort", "LOAD_5"},
             {"tpp", "4"},
             {"modex", "fence"},
             {"modex", "async"},
             {"modex", "profile"},
             {"with-ft", "ulfm"},
             {"with-ft", "none"},
             {"display-map", ""},
             {"display-map", "text"},
             {"display-map", "svg:map.svg"},
             {"display-map", "svg:/tmp/a b/map.svg"},
             // Flags and unknown names have no value to check.
             {"overbook", "anything"},
             {"no-such-option", "x"}})
        EXPECT_TRUE(checkOptionValue(name, value))
            << name << "=" << value << ": " << refusal(name, value);
}

TEST(Options, EachCheckedOptionRefusesABadValueWithItsMessage) {
    const std::string policies =
        "(accepted: slot, node, seq, rankfile, hwthread, core, l1cache, l2cache, l3cache, numa, "
        "package, ppr:N:OBJECT, pe-list=LIST, device=CLASS, each optionally followed by "
        ":MODIFIERS)";
    EXPECT_EQ(refusal("modex", "none"),
              "--modex=none is not a modex mode; use fence (the MPI library's own data exchange "
              "at MPI_Init), async (each peer's data fetched at first contact) or profile (no "
              "exchange: the data comes from the site's interconnect profile)");
    EXPECT_EQ(refusal("with-ft", "checkpoint"),
              "--with-ft=checkpoint is not a fault tolerance mode; use ulfm (a failed rank does "
              "not end the step: Open MPI 5's ULFM, as mpirun --with-ft ulfm) or none");
    EXPECT_EQ(refusal("host", ""), "--host: empty host list (expected e.g. --host a,b:2 or --host "
                                   "'!^a')");
    EXPECT_EQ(refusal("host", "n1:x"), "--host 'n1:x': 'n1:x' has an invalid slot count 'x' "
                                       "(expected NAME or NAME:N with N a positive number)");
    EXPECT_EQ(refusal("hostfile", ""), "--hostfile needs a file name");
    EXPECT_EQ(refusal("map-by", ""), "--map-by: empty value " + policies);
    EXPECT_EQ(refusal("map-by", "diagonal"),
              "--map-by 'diagonal': unknown mapping policy 'diagonal' " + policies);
    EXPECT_EQ(refusal("rank-by", "random"),
              "--rank-by 'random': unknown ranking policy (accepted: slot, node, fill, span)");
    EXPECT_EQ(refusal("bind-to", "socket:sometimes"),
              "--bind-to 'socket:sometimes': unknown qualifier 'sometimes' (accepted: "
              "if-supported, overload-allowed, no-overload, report, limit=n)");
    EXPECT_EQ(refusal("nodes-sort", "RANDOM"),
              "--nodes-sort 'RANDOM': unknown sort criterion (accepted, in any case: PROC, LOAD, "
              "LOAD_1, LOAD_5, LOAD_15, PROC+LOAD, NONE)");
    for (const char *tpp : {"0", "many"})
        EXPECT_EQ(refusal("tpp", tpp), std::string("--tpp '") + tpp +
                                           "': expected a positive number of hardware threads "
                                           "per process, e.g. --tpp=2");
}

TEST(Options, DisplayMapForms) {
    using Form = DisplayMapRequest::Form;
    for (const char *text : {"", "text", "(null)"}) {
        auto r = parseDisplayMap(text);
        ASSERT_TRUE(r) << text;
        EXPECT_EQ(r->form, Form::Text) << text;
    }
    auto svg = parseDisplayMap("svg:out/map:1.svg");
    ASSERT_TRUE(svg);
    EXPECT_EQ(svg->form, Form::Svg);
    EXPECT_EQ(svg->file, "out/map:1.svg");
}

TEST(Options, DisplayMapRefusesOtherFormsWithTheFix) {
    const std::string accepted = "(accepted: no value or text for the job map on stderr, "
                                 "svg:FILE for the job drawn as SVG in FILE)";
    EXPECT_EQ(refusal("display-map", "png:x"), "--display-map 'png:x': unknown form " + accepted);
    EXPECT_EQ(refusal("display-map", "svg"), "--display-map 'svg': unknown form " + accepted);
    EXPECT_EQ(refusal("display-map", "SVG:x"), "--display-map 'SVG:x': unknown form " + accepted);
    EXPECT_EQ(refusal("display-map", "svg:"),
              "--display-map 'svg:': names no file; write --display-map=svg:FILE, e.g. "
              "--display-map=svg:map.svg");
    EXPECT_EQ(refusal("display-map", "svg:-"),
              "--display-map 'svg:-': srun's standard output carries the job's output, not the "
              "picture; name a file, e.g. --display-map=svg:map.svg");
    EXPECT_EQ(refusal("display-map", "x\x1b[2J"),
              "--display-map 'x\\x1b[2J': unknown form " + accepted);
}

TEST(Options, AForwardedDisplayMapWithoutValueIsTheTextMap) {
    // sbatch/salloc forward an option given without a value as "(null)".
    ForwardedVariable bare("display_map", "(null)");
    auto o = mergeOptions({}, forwardedOptions());
    ASSERT_TRUE(o.displayMap);
    EXPECT_EQ(parseDisplayMap(*o.displayMap)->form, DisplayMapRequest::Form::Text);
    // The command line's value wins.
    o = mergeOptions({{"display-map", "svg:m.svg"}}, forwardedOptions());
    EXPECT_EQ(o.displayMap, "svg:m.svg");
}
