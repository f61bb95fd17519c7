#pragma once

// The environment a rank needs for a modex-less launch with Open MPI 4.1 or
// 5.0 (the variable names are the same in both, read in their sources):
//   OMPI_MCA_pmix_base_async_modex=1     no data-collecting fence at MPI_Init
//   OMPI_MCA_pmix_base_collect_data=0    fetch peers' data on demand instead
//   OMPI_MCA_btl_tcp_port_min_v4=PORT    btl tcp binds the first free port
//   OMPI_MCA_btl_tcp_port_range_v4=1     from min within range: exactly PORT
//   OMPI_MCA_btl_tcp_port_min_v6=PORT    the IPv6 listen socket (IPv6-only,
//   OMPI_MCA_btl_tcp_port_range_v6=1     so it shares the number); both
//                                        versions publish IPv6 addresses
//   OMPI_MCA_async_mpi_init=0            the zero-byte barrier at the end of
//                                        MPI_Init stays: without it a peer
//                                        that starts late makes connect() fail

#include <cstdint>
#include <string>
#include <vector>

namespace stepmap::modexless {

// KEY=VALUE entries for the rank whose pinned port is `port`.
std::vector<std::string> modexlessEnvironment(std::uint16_t port);

} // namespace stepmap::modexless
