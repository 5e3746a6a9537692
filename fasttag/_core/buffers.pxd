# Growing raw C buffers: the one realloc-or-MemoryError of the compiled modules.
from libc.stdlib cimport realloc


cdef inline int resize(void** buf, size_t nbytes, const char* owner) except -1 nogil:
    """realloc ``buf[0]`` to nbytes; MemoryError naming ``owner`` if that
    fails (``buf[0]`` is then unchanged and still owned by the caller)."""
    cdef void* p = realloc(buf[0], nbytes)
    if p == NULL:
        with gil:
            raise MemoryError(f"fasttag {owner.decode('ascii')}: out of memory")
    buf[0] = p
    return 0


cdef inline int reserve(void** buf, Py_ssize_t* cap, Py_ssize_t need, size_t item,
                        const char* owner) except -1 nogil:
    """Room for ``need`` items of ``item`` bytes in ``buf[0]``, which holds
    ``cap[0]``: grows to at least twice its size (64 items at the least)."""
    cdef Py_ssize_t c = cap[0]
    if need <= c:
        return 0
    c = max(2 * c, need, 64)
    resize(buf, c * item, owner)
    cap[0] = c
    return 0
