// Which MPI a program links: srun refuses PMI-only MPICH programs with it.

#include "srun/mpi_linkage.hpp"

#include <gtest/gtest.h>

#include <algorithm>

using namespace stepmap::plugin;

TEST(MpiLinkage, ReadsTheNeededLibrariesOfARealProgram) {
    auto needed = neededLibraries("/bin/true");
    ASSERT_TRUE(needed) << needed.error().message;
    EXPECT_NE(std::find(needed->begin(), needed->end(), "libc.so.6"), needed->end());
}

TEST(MpiLinkage, AScriptOrMissingFileIsNotAProgram) {
    EXPECT_FALSE(neededLibraries("/etc/passwd"));
    auto missing = neededLibraries("/nonexistent/prog");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("/nonexistent/prog"), std::string::npos);
    EXPECT_FALSE(neededLibraries("/dev/zero")) << "not a regular file: never read";
}

TEST(MpiLinkage, MpichWithoutPmixIsPmiOnly) {
    EXPECT_EQ(pmiOnlyMpiLibrary({"libmpich.so.12", "libc.so.6"}), "libmpich.so.12");
    EXPECT_EQ(pmiOnlyMpiLibrary({"libmpichfort.so.12"}), "libmpichfort.so.12");
    // MPICH configured with PMIx, and Open MPI, are served.
    EXPECT_EQ(pmiOnlyMpiLibrary({"libmpich.so.12", "libpmix.so.2"}), std::nullopt);
    EXPECT_EQ(pmiOnlyMpiLibrary({"libmpi.so.40", "libc.so.6"}), std::nullopt);
}

TEST(MpiLinkage, ResolvesProgramsAsALauncherWould) {
    EXPECT_EQ(resolveProgram("true", "/nonexistent:/bin", "/"), "/bin/true");
    EXPECT_EQ(resolveProgram("/bin/true", "", "/"), "/bin/true");
    EXPECT_EQ(resolveProgram("bin/true", "", "/"), "//bin/true");
    EXPECT_EQ(resolveProgram("no-such-program-here", "/bin:/usr/bin", "/"), std::nullopt);
    EXPECT_EQ(resolveProgram("passwd", "/etc", "/"), std::nullopt) << "not executable";
}
