# The C types every fasttag Cython module shares: one place, so a change of
# width is made once.
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t

ctypedef uint64_t feat_t      # a hashed feature
ctypedef double weight_t      # weights and accumulators: float64 always
ctypedef int32_t class_t      # a label index
ctypedef int64_t step_t       # an averaging time step

cdef extern from *:
    """
    #define FASTTAG_PAD_KEY 0u
    """
    # the feature key that pads rows of per-position features of unequal
    # length: sequence training never stores it, so it scores 0
    const uint64_t PAD_KEY "FASTTAG_PAD_KEY"
