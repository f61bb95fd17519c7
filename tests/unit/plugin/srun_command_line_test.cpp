// How the plugin reads srun's command line before srun does: it must find
// its own options and -n wherever they stand, and stop at the program.

#include "options.hpp"
#include "srun/srun_command_line.hpp"

#include <gtest/gtest.h>

using namespace stepmap::plugin;

namespace {

SrunCommandLine scan(std::vector<std::string> args) {
    return scanSrunCommandLine(args, optionArity());
}

} // namespace

TEST(SrunCommandLine, NtasksBeforeOrAfterOurOptions) {
    for (auto args : std::vector<std::vector<std::string>>{
             {"-n", "3", "--host", "n2,n3", "./app"},
             {"--host", "n2,n3", "-n", "3", "./app"},
             {"--host=n2,n3", "-n3", "./app"},
             {"--ntasks=3", "--host", "n2,n3", "./app"},
             {"--ntasks", "3", "--host", "n2,n3", "./app"},
             {"-ln3", "--host", "n2,n3", "./app"},
         }) {
        auto c = scan(args);
        ASSERT_TRUE(c.ntasks) << args[0];
        EXPECT_EQ(*c.ntasks, "3");
        EXPECT_EQ(c.stepmapOptions.at("host"), "n2,n3");
    }
}

TEST(SrunCommandLine, ProgramArgumentsAreNotOptions) {
    auto c = scan({"--map-by", "node", "./app", "-n", "99", "--host", "x"});
    EXPECT_FALSE(c.ntasks);
    EXPECT_EQ(c.stepmapOptions.count("host"), 0u);
    EXPECT_EQ(c.stepmapOptions.at("map-by"), "node");
}

TEST(SrunCommandLine, SrunOptionValuesAreSkipped) {
    // "-J" takes a value: "--host" after it is still an option, and a value
    // that looks like a program name is not mistaken for one.
    auto c =
        scan({"-J", "myjob", "--job-name", "other", "-t", "5", "--host", "n1", "-n", "2", "./app"});
    EXPECT_EQ(c.stepmapOptions.at("host"), "n1");
    EXPECT_EQ(*c.ntasks, "2");
}

TEST(SrunCommandLine, FlagsHaveNoValue) {
    auto c = scan({"--overbook", "--display-map", "-n", "4", "./app"});
    EXPECT_EQ(c.stepmapOptions.at("overbook"), "");
    EXPECT_EQ(c.stepmapOptions.at("display-map"), "");
    EXPECT_EQ(*c.ntasks, "4");
}

TEST(SrunCommandLine, LayoutOptionsAndMpiAreReported) {
    // -N and -w choose nodes (allowed); -m and --relative lay tasks out.
    auto c = scan({"-N", "2", "--nodelist=n1", "-m", "cyclic", "--relative=1", "--mpi=pmix",
                   "--map-by", "node", "./app"});
    EXPECT_EQ(c.layoutOptions, (std::vector<std::string>{"-m", "--relative"}));
    ASSERT_TRUE(c.mpi);
    EXPECT_EQ(*c.mpi, "pmix");
}

TEST(SrunCommandLine, DoubleDashEndsOptions) {
    auto c = scan({"--map-by", "slot", "--", "-n", "5"});
    EXPECT_FALSE(c.ntasks);
}

TEST(SrunCommandLine, ShortLongAndAbbreviatedFormsResolveToOneName) {
    auto c = scan({"-N2", "--nodel=n[1-2]", "--exclud", "n3", "-lw", "n4", "./app"});
    std::vector<std::string> names;
    for (const auto &o : c.options)
        names.push_back(o.name + "=" + o.value.value_or(""));
    EXPECT_EQ(names, (std::vector<std::string>{"nodes=2", "nodelist=n[1-2]", "exclude=n3",
                                               "label=", "nodelist=n4"}));
    EXPECT_EQ(c.last("nodelist")->value, "n4");
    EXPECT_EQ(c.program, "./app");
}

TEST(SrunCommandLine, StepNodeOptionsCanBeTakenOut) {
    std::vector<std::string> args = {"-lN",          "2",   "--map-by", "node", "-w", "n1,n2",
                                     "--exclude=n3", "-n4", "./app",    "-N",   "9"};
    auto c = scan(args);
    EXPECT_EQ(argumentsWithout(args, c, {SrunOptionRole::StepNodes}),
              (std::vector<std::string>{"-l", "--map-by", "node", "-n4", "./app", "-N", "9"}));
}

TEST(SrunCommandLine, OptionalValuesOnlyAttached) {
    // --exclusive takes its value only after '=': "./app" is the program.
    auto c = scan({"--exclusive", "./app"});
    EXPECT_EQ(c.program, "./app");
    EXPECT_EQ(c.last("exclusive")->value, std::nullopt);
}

TEST(SrunCommandLine, DisplayMapsValueOnlyAfterEquals) {
    // As getopt_long's optional_argument: the value is --display-map=VALUE;
    // a word after a bare --display-map is not its value.
    auto bare = scan({"--display-map", "./app", "svg:x"});
    EXPECT_EQ(bare.stepmapOptions.at("display-map"), "");
    EXPECT_EQ(bare.program, "./app");
    auto svg = scan({"-n", "8", "--display-map=svg:/tmp/m a p.svg", "--map-by", "core", "./app"});
    EXPECT_EQ(svg.stepmapOptions.at("display-map"), "svg:/tmp/m a p.svg");
    EXPECT_EQ(svg.stepmapOptions.at("map-by"), "core");
    EXPECT_EQ(*svg.ntasks, "8");
    EXPECT_EQ(svg.program, "./app");
    // Written as two words, the form is the program srun would run.
    auto split = scan({"--display-map", "svg:m.svg", "./app"});
    EXPECT_EQ(split.stepmapOptions.at("display-map"), "");
    EXPECT_EQ(split.program, "svg:m.svg");
    auto abbreviated = scan({"--display=text", "-n", "2", "./app"});
    EXPECT_EQ(abbreviated.stepmapOptions.at("display-map"), "text");
    EXPECT_EQ(*abbreviated.ntasks, "2");
}
