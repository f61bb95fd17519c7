// Whether stepmap serves an srun, and which of srun's options it then
// refuses (srun/served_decision.hpp): tables of srun invocations.

#include "srun/served_decision.hpp"

#include "options.hpp"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stepmap::plugin {
namespace {

struct Invocation {
    std::vector<std::string> args;
    std::map<std::string, std::string> environment;
    std::optional<std::string> psiVariable;
};

ServeInput input(const Invocation &in) {
    ServeInput result;
    result.args = in.args;
    result.cmd = scanSrunCommandLine(in.args, optionArity());
    result.options = mergeOptions(result.cmd.stepmapOptions, {});
    result.psiVariable = in.psiVariable;
    result.environment = in.environment;
    return result;
}

SitePolicy policy(ServedSteps serve) {
    SitePolicy p;
    p.path = "/etc/stepmap.yaml";
    p.serve = serve;
    return p;
}

// Files a test's --multi-prog names.
Expected<std::string> readFile(const std::string &path) {
    if (path == "good.conf")
        return std::string("0-1 ./a\n2-3 ./b\n");
    if (path == "any.conf")
        return std::string("* ./a\n");
    return UserError{"No such file or directory"};
}

const std::string kLeft = "not serving this step although /etc/stepmap.yaml says serve: pmix: ";

TEST(DecideServing, Table) {
    struct Case {
        std::string what;
        Invocation srun;
        ServedSteps serve;
        const char *mpiDefault;
        ServeDecision expected;
    };
    const ServeDecision unserved{};
    const ServeDecision byOptions{true, false, "stepmap's placement options", ""};
    const ServeDecision bySite{true, true, "the site's policy (serve: pmix in /etc/stepmap.yaml)",
                               ""};
    auto leftToSlurm = [](const std::string &why, const std::string &type = "pmix") {
        return ServeDecision{false, false, "",
                             kLeft + why + "; Slurm's --mpi=" + type + " serves it"};
    };
    const Case cases[] = {
        {"plain srun", {{"./app"}}, ServedSteps::Options, nullptr, unserved},
        {"an option", {{"--map-by", "node", "./app"}}, ServedSteps::Options, nullptr, byOptions},
        {"an option under serve: pmix",
         {{"--host", "n1", "--mpi=pmix", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         byOptions},
        {"a PSI_* variable",
         {{"./app"}, {}, "PSI_NODES"},
         ServedSteps::Options,
         nullptr,
         {true, false, "stepmap's placement (PSI_NODES is set in the environment)", ""}},
        {"--mpi=pmix without serve: pmix",
         {{"--mpi=pmix", "./app"}},
         ServedSteps::Options,
         nullptr,
         unserved},
        {"--mpi=pmix", {{"--mpi=pmix", "./app"}}, ServedSteps::Pmix, nullptr, bySite},
        {"--mpi=pmix_v4", {{"--mpi=pmix_v4", "./app"}}, ServedSteps::Pmix, nullptr, bySite},
        {"SLURM_MPI_TYPE",
         {{"./app"}, {{"SLURM_MPI_TYPE", "pmix"}}},
         ServedSteps::Pmix,
         nullptr,
         bySite},
        {"MpiDefault", {{"./app"}}, ServedSteps::Pmix, "pmix", bySite},
        {"--mpi wins over MpiDefault",
         {{"--mpi=pmi2", "./app"}},
         ServedSteps::Pmix,
         "pmix",
         unserved},
        {"no PMIx", {{"./app"}}, ServedSteps::Pmix, "none", unserved},
        {"-m",
         {{"--mpi=pmix", "-m", "cyclic", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("-m lays the tasks out itself")},
        {"--ntasks-per-node",
         {{"--mpi=pmix", "--ntasks-per-node=2", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("--ntasks-per-node lays the tasks out itself")},
        {"--cpu-bind",
         {{"--mpi=pmix", "--cpu-bind=cores", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("--cpu-bind asks for Slurm's binding")},
        {"--exact",
         {{"--mpi=pmix", "--exact", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("--exact shares the job's CPUs between steps")},
        {"--overlap",
         {{"--mpi=pmix", "--overlap", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("--overlap shares the job's CPUs between steps")},
        {"--het-group",
         {{"--mpi=pmix", "--het-group=0", "./app"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("--het-group names components of a heterogeneous job")},
        {"':'",
         {{"--mpi=pmix", "./a", ":", "./b"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("':' makes it a heterogeneous step")},
        {"SLURM_NTASKS_PER_NODE",
         {{"./app"}, {{"SLURM_MPI_TYPE", "pmix_v5"}, {"SLURM_NTASKS_PER_NODE", "2"}}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("SLURM_NTASKS_PER_NODE is set", "pmix_v5")},
        {"SLURM_HET_SIZE",
         {{"--mpi=pmix", "./app"}, {{"SLURM_HET_SIZE", "2"}}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("SLURM_HET_SIZE is set")},
        {"a --multi-prog file of ranges",
         {{"--mpi=pmix", "--multi-prog", "good.conf"}},
         ServedSteps::Pmix,
         nullptr,
         bySite},
        {"a --multi-prog file with '*'",
         {{"--mpi=pmix", "--multi-prog", "any.conf"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("its --multi-prog file is not one application per consecutive rank range")},
        {"an unreadable --multi-prog file",
         {{"--mpi=pmix", "--multi-prog", "gone.conf"}},
         ServedSteps::Pmix,
         nullptr,
         leftToSlurm("its --multi-prog file cannot be read: No such file or directory")},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.what);
        const char *mpiDefault = c.mpiDefault;
        const ServeDecision decision = decideServing(
            input(c.srun), policy(c.serve), [&] { return mpiDefault; }, readFile);
        EXPECT_EQ(decision.served, c.expected.served);
        EXPECT_EQ(decision.bySitePolicy, c.expected.bySitePolicy);
        EXPECT_EQ(decision.engaged, c.expected.engaged);
        EXPECT_EQ(decision.unservedNote, c.expected.unservedNote);
    }
}

TEST(DecideServing, ReadsNoFileAndNoMpiDefaultItDoesNotNeed) {
    bool asked = false;
    auto mpiDefault = [&]() -> const char * {
        asked = true;
        return "pmix";
    };
    auto reader = [&](const std::string &) -> Expected<std::string> {
        asked = true;
        return std::string();
    };
    decideServing(input({{"--map-by", "node", "--multi-prog", "x.conf"}}),
                  policy(ServedSteps::Pmix), mpiDefault, reader);
    decideServing(input({{"./app"}}), policy(ServedSteps::Options), mpiDefault, reader);
    EXPECT_FALSE(asked);
}

TEST(RefuseLayoutOptions, Table) {
    const std::string engaged = "stepmap's placement options";
    struct Case {
        std::vector<std::string> args;
        ServedSteps serve;
        std::string error; // empty: accepted
    };
    const Case cases[] = {
        {{"--host", "n1", "./app"}, ServedSteps::Options, ""},
        {{"--host", "n1", "--mpi=none", "./app"}, ServedSteps::Options, ""},
        {{"--host", "n1", "--mpi=pmix", "./app"}, ServedSteps::Pmix, ""},
        {{"--host", "n1", "--mpi=pmix", "./app"},
         ServedSteps::Options,
         "--mpi=pmix conflicts with stepmap's placement options: stepmap serves PMIx to this "
         "step itself. Remove --mpi (or use --mpi=none)."},
        {{"--host", "n1", "--mpi=pmi2", "./app"},
         ServedSteps::Pmix,
         "--mpi=pmi2 conflicts with stepmap's placement options: stepmap serves PMIx to this "
         "step itself. Remove --mpi (or use --mpi=none)."},
        {{"--host", "n1", "-m", "block", "./app"},
         ServedSteps::Options,
         "-m lays the tasks out itself, and stepmap's placement options decide the layout here; "
         "drop -m (choose nodes with -N, -w, -x, --host or --hostfile)"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.args[2]);
        auto cmd = scanSrunCommandLine(c.args, optionArity());
        const Expected<void> accepted = refuseLayoutOptions(cmd, policy(c.serve), engaged);
        EXPECT_EQ(accepted.ok(), c.error.empty());
        if (!accepted) {
            EXPECT_EQ(accepted.error().message, c.error);
        }
    }
}

TEST(RefusalMessage, NamesTheSitePolicyWhenItAloneEngagedStepmap) {
    const SitePolicy site = policy(ServedSteps::Pmix);
    EXPECT_EQ(refusalMessage("bad", ServeDecision{true, false, "x", ""}, site), "bad");
    EXPECT_EQ(refusalMessage("bad", ServeDecision{true, true, "x", ""}, site),
              "bad (stepmap serves this step because /etc/stepmap.yaml says serve: pmix)");
}

} // namespace
} // namespace stepmap::plugin
