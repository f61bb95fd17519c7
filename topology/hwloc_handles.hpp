#pragma once

// One RAII owner per hwloc handle, taken right after the handle is created
// so that no error path can leak it.

#include <hwloc.h>

#include <memory>
#include <new>

namespace stepmap::topology {

template <auto Free> struct CDeleter {
    template <class T> void operator()(T *p) const {
        if (p)
            Free(p);
    }
};

using TopologyPtr = std::unique_ptr<hwloc_topology, CDeleter<hwloc_topology_destroy>>;
using BitmapPtr = std::unique_ptr<hwloc_bitmap_s, CDeleter<hwloc_bitmap_free>>;

inline BitmapPtr makeBitmap() {
    BitmapPtr b(hwloc_bitmap_alloc());
    if (!b)
        throw std::bad_alloc();
    return b;
}

inline BitmapPtr copyBitmap(hwloc_const_bitmap_t src) {
    BitmapPtr b(hwloc_bitmap_dup(src));
    if (!b)
        throw std::bad_alloc();
    return b;
}

} // namespace stepmap::topology
