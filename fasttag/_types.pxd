# The C types every fasttag Cython module shares: one place, so a change of
# width is made once.
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t

ctypedef uint64_t feat_t      # a hashed feature
ctypedef double weight_t      # weights and accumulators: float64 always
ctypedef int32_t class_t      # a label index
ctypedef int64_t step_t       # an averaging time step
