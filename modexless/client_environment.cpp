#include "modexless/client_environment.hpp"

namespace stepmap::modexless {

std::vector<std::string> modexlessEnvironment(std::uint16_t port) {
    const std::string p = std::to_string(port);
    return {
        "OMPI_MCA_pmix_base_async_modex=1",
        "OMPI_MCA_pmix_base_collect_data=0",
        "OMPI_MCA_btl_tcp_port_min_v4=" + p,
        "OMPI_MCA_btl_tcp_port_range_v4=1",
        "OMPI_MCA_btl_tcp_port_min_v6=" + p,
        "OMPI_MCA_btl_tcp_port_range_v6=1",
        // The init barrier stays, whatever an mca-params.conf says: a late
        // peer's port is not bound before it.
        "OMPI_MCA_async_mpi_init=0",
    };
}

} // namespace stepmap::modexless
