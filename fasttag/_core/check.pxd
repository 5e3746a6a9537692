# Index checks for raw C pointers, compiled in only by the debug build.
#
# Typed memoryviews get Cython's bounds checks in the debug build, but the hot
# loops index raw pointers (the weight table's pool, the decoder's lattice
# buffers), which Cython cannot see.  ``check_index(i, n)`` before such an
# access aborts the process with the C file and line when ``i`` is outside
# [0, n): under FASTTAG_DEBUG=1 a test run is a memory-safety check.  In the
# release build it expands to nothing, so it costs nothing in the hot loops.
cdef extern from *:
    """
    #ifdef FASTTAG_DEBUG
    #include <stdio.h>
    #include <stdlib.h>
    #define FASTTAG_CHECK_INDEX(i, n) do { \\
        long long ft_i_ = (long long)(i), ft_n_ = (long long)(n); \\
        if (ft_i_ < 0 || ft_i_ >= ft_n_) { \\
            fprintf(stderr, "fasttag debug build: index %lld outside [0, %lld) at %s:%d\\n", \\
                    ft_i_, ft_n_, __FILE__, __LINE__); \\
            abort(); \\
        } } while (0)
    #define FASTTAG_CHECK(cond) do { if (!(cond)) { \\
            fprintf(stderr, "fasttag debug build: check failed: %s at %s:%d\\n", \\
                    #cond, __FILE__, __LINE__); \\
            abort(); } } while (0)
    #define FASTTAG_DEBUG_BUILD 1
    #else
    #define FASTTAG_CHECK_INDEX(i, n) ((void)0)
    #define FASTTAG_CHECK(cond) ((void)0)
    #define FASTTAG_DEBUG_BUILD 0
    #endif
    """
    void check_index "FASTTAG_CHECK_INDEX"(long long i, long long n) noexcept nogil
    void check "FASTTAG_CHECK"(bint cond) noexcept nogil
    const int DEBUG_BUILD "FASTTAG_DEBUG_BUILD"
