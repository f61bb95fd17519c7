#include "protocol/uv/listen_beside.hpp"

#include <netinet/in.h>
#include <sys/socket.h>

namespace stepmap::uvnet {

namespace {

int portOf(const sockaddr_storage &addr) {
    return addr.ss_family == AF_INET6
               ? ntohs(reinterpret_cast<const sockaddr_in6 *>(&addr)->sin6_port)
               : ntohs(reinterpret_cast<const sockaddr_in *>(&addr)->sin_port);
}

} // namespace

Expected<Listener> listenBeside(uv_loop_t *loop, uv_tcp_t *near, void *data,
                                uv_connection_cb onConnection) {
    sockaddr_storage addr{};
    int len = sizeof addr;
    Listener l;
    int rc = uv_tcp_getsockname(near, reinterpret_cast<sockaddr *>(&addr), &len);
    if (rc == 0) {
        // The same address, any port.
        if (addr.ss_family == AF_INET6)
            reinterpret_cast<sockaddr_in6 *>(&addr)->sin6_port = 0;
        else
            reinterpret_cast<sockaddr_in *>(&addr)->sin_port = 0;
        l.handle = makeHandle(uv_tcp_init, loop);
        rc = l.handle ? uv_tcp_bind(l.handle.get(), reinterpret_cast<sockaddr *>(&addr), 0)
                      : UV_ENOMEM;
    }
    if (rc == 0) {
        l.handle->data = data;
        // As many as srun's hub: a flood that fills the kernel's queue
        // drops the peers' connection requests too.
        rc = uv_listen(reinterpret_cast<uv_stream_t *>(l.handle.get()), 1024, onConnection);
    }
    len = sizeof addr;
    if (rc == 0)
        rc = uv_tcp_getsockname(l.handle.get(), reinterpret_cast<sockaddr *>(&addr), &len);
    if (rc != 0)
        return UserError{uv_strerror(rc)};
    l.port = portOf(addr);
    return l;
}

} // namespace stepmap::uvnet
