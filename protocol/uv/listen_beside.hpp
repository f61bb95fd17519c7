#pragma once

// A TCP listener on the address another socket of this process uses (any
// port): a node server takes its peers on the address it reaches srun
// from, which is the one the other nodes reach it by (not what the host
// name resolves to, which may be 127.0.1.1).

#include "base/expected.hpp"
#include "protocol/uv/uv_handle.hpp"

#include <uv.h>

namespace stepmap::uvnet {

struct Listener {
    UvHandlePtr<uv_tcp_t> handle;
    int port = 0;
};

// Listens with onConnection (handle->data = data) on near's local address,
// any port; why not, if it cannot.
Expected<Listener> listenBeside(uv_loop_t *loop, uv_tcp_t *near, void *data,
                                uv_connection_cb onConnection);

} // namespace stepmap::uvnet
