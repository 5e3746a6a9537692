# Lazy averaging: the one update and the one read of every averaged weight of
# the compiled core (WeightTable entries, AveragedVector elements, the
# perceptron family of ``_linear``).
#
# The convention (the averaged perceptron with per-weight timestamps).  Steps
# are numbered 1, 2, ...; an update made "at step t" is part of step t.  The
# averaged weight after T steps is
#
#     avg(T) = (1 / T) * sum_{s=1..T} w_s
#
# where w_s is the weight in force after step s.  The denominator is the
# number of steps T (every step counts, whether it touched this weight or
# not), never the number of updates of the weight.  Each weight keeps its
# current value ``w``, a float64 accumulator ``total`` = sum of w_s for
# s <= ts, and the step ``ts`` the accumulator has been brought up to (0 for a
# weight never updated, step - 1 for one created at ``step``).  An update at
# step t first catches up (total += (t - 1 - ts) * w; ts = t - 1), then
# changes w: O(1) per updated weight, so a training step costs
# O(active features).  Reading the average adds the missing (T - ts) * w
# without storing it, so reading never disturbs training, and training may go
# on after any read.  Callers keep steps from decreasing.
from .types cimport weight_t, step_t


cdef inline void avg_update(weight_t* w, weight_t* total, step_t* ts,
                            weight_t delta, step_t step) noexcept nogil:
    """w += delta as part of step ``step``, catching the accumulator up first."""
    total[0] += (step - 1 - ts[0]) * w[0]
    ts[0] = step - 1
    w[0] += delta


cdef inline void avg_start(weight_t* w, weight_t* total, step_t* ts,
                           weight_t value, step_t step) noexcept nogil:
    """A weight created with ``value`` at step ``step`` (zero before it)."""
    w[0] = value
    total[0] = 0.0
    ts[0] = step - 1


cdef inline weight_t avg_read(weight_t w, weight_t total, step_t ts, step_t step) noexcept nogil:
    """The averaged weight after ``step`` (>= ts, >= 1) steps; changes nothing."""
    return (total + (step - ts) * w) / step
