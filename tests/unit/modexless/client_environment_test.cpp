// The environment of a modex-less rank: Open MPI 4.1's and 5.0's variable
// names (the same in both) for async modex without data collection and the
// pinned btl tcp port, IPv4 and IPv6.

#include "modexless/client_environment.hpp"

#include <gtest/gtest.h>

using namespace stepmap::modexless;

TEST(ClientEnvironment, AsyncModexNoCollectionAndThePinnedPort) {
    EXPECT_EQ(modexlessEnvironment(40003),
              (std::vector<std::string>{
                  "OMPI_MCA_pmix_base_async_modex=1", "OMPI_MCA_pmix_base_collect_data=0",
                  "OMPI_MCA_btl_tcp_port_min_v4=40003", "OMPI_MCA_btl_tcp_port_range_v4=1",
                  "OMPI_MCA_btl_tcp_port_min_v6=40003", "OMPI_MCA_btl_tcp_port_range_v6=1",
                  "OMPI_MCA_async_mpi_init=0"}));
}
