// What srun's side reads of srun once (srun/srun_input.hpp).

#include "srun/srun_input.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace stepmap::plugin {
namespace {

TEST(SrunInput, TheCommandLineWinsOverForwardedOptions) {
    struct Case {
        std::vector<std::string> args;
        std::map<std::string, std::string> forwarded;
        std::map<std::string, std::string> planned;
        std::optional<std::string> mapBy;
    };
    const Case cases[] = {
        {{"./app"}, {}, {}, std::nullopt},
        {{"--map-by", "node", "./app"}, {}, {{"map-by", "node"}}, "node"},
        {{"./app"}, {{"map-by", "core"}}, {{"map-by", "core"}}, "core"},
        {{"--map-by=node", "./app"},
         {{"map-by", "core"}, {"host", "n1"}},
         {{"map-by", "node"}, {"host", "n1"}},
         "node"},
    };
    for (const Case &c : cases) {
        SCOPED_TRACE(c.args[0]);
        const SrunInput input = srunInput(c.args, c.forwarded, {}, {});
        EXPECT_EQ(input.args, c.args);
        EXPECT_EQ(input.forwarded, c.forwarded);
        EXPECT_EQ(input.planned, c.planned);
        EXPECT_EQ(input.options.mapBy, c.mapBy);
        EXPECT_EQ(input.cmd.program, "./app");
    }
}

TEST(SrunInput, ReadsTheVariablesTheStagesNeed) {
    const auto names = srunVariablesRead({"SLURM_CPUS_PER_TASK"});
    for (const char *name :
         {"SLURM_MPI_TYPE", "SLURM_NTASKS_PER_NODE", "SLURM_JOB_ID", "SLURM_JOB_NODELIST",
          "SLURM_JOB_CPUS_PER_NODE", "SLURM_NTASKS", "SLURM_EXACT", "PATH", "SLURM_CPUS_PER_TASK"})
        EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

} // namespace
} // namespace stepmap::plugin
