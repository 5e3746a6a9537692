# Stable 64-bit hashing, defined inline so any Cython module can cimport it.
#
# Feature strings are hashed with MurmurHash64A (Austin Appleby, public
# domain) over their UTF-8 bytes, seed 0, reading 8-byte blocks as
# little-endian whatever the platform's byte order: the same string gives the
# same hash on every platform and every run.  Templates are combined with
# ``hash_combine``, built on the splitmix64 finaliser.  Changing any of these
# functions changes every model: bump HASH_ID (and the model format) if so.
from libc.stdint cimport uint64_t
from .check cimport check_index

cdef extern from *:
    """
    #define FASTTAG_HASH_ID "murmurhash64a-le/splitmix64-combine/v1"
    """
    const char* FASTTAG_HASH_ID


cdef inline uint64_t _load_le64(const unsigned char* p) noexcept nogil:
    return (<uint64_t>p[0] | (<uint64_t>p[1] << 8) | (<uint64_t>p[2] << 16)
            | (<uint64_t>p[3] << 24) | (<uint64_t>p[4] << 32)
            | (<uint64_t>p[5] << 40) | (<uint64_t>p[6] << 48)
            | (<uint64_t>p[7] << 56))


cdef inline uint64_t murmurhash64a(const unsigned char* data, size_t length,
                                   uint64_t seed) noexcept nogil:
    cdef uint64_t m = 0xc6a4a7935bd1e995ULL
    cdef uint64_t h = seed ^ (<uint64_t>length * m)
    cdef uint64_t k
    cdef size_t nblocks = length // 8
    cdef size_t i
    for i in range(nblocks):
        check_index(8 * i + 7, length)      # the block's last byte
        k = _load_le64(data + 8 * i)
        k *= m
        k ^= k >> 47
        k *= m
        h ^= k
        h *= m
    cdef const unsigned char* tail = data + 8 * nblocks
    cdef size_t rem = length & 7
    if rem:
        for i in range(rem - 1, -1, -1):
            check_index(8 * nblocks + i, length)
            h ^= (<uint64_t>tail[i]) << (8 * i)
        h *= m
    h ^= h >> 47
    h *= m
    h ^= h >> 47
    return h


cdef inline uint64_t mix64(uint64_t x) noexcept nogil:
    """The splitmix64 finaliser: a bijection that spreads every input bit."""
    x ^= x >> 30
    x *= 0xbf58476d1ce4e5b9ULL
    x ^= x >> 27
    x *= 0x94d049bb133111ebULL
    x ^= x >> 31
    return x


cdef inline uint64_t hash_combine(uint64_t a, uint64_t b) noexcept nogil:
    """Order-sensitive combination of two hashes (a template with its values)."""
    return hash_combine_mixed(a, mix64(b))


cdef inline uint64_t hash_combine_mixed(uint64_t a, uint64_t mixed_b) noexcept nogil:
    """``hash_combine(a, b)`` given ``mix64(b)``: a value read by many
    templates is mixed once."""
    return mix64(a ^ (mixed_b + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2)))
