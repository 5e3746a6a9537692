# cython: language_level=3
"""Transition-based dependency parsing without the GIL: the arc-hybrid
system (Kuhlmann, Gómez-Rodríguez & Satta 2011) with the root at the end of
the buffer, its dynamic oracle (Goldberg & Nivre 2013), greedy decoding and
perceptron training with error exploration, all scored by the shared
:class:`fasttag._core.weights.WeightTable`.

Transitions (the classes scored): 0 SHIFT (push the buffer's front), 1 + 2l
LEFT-l (the stack's top takes the buffer's front as its head, label l, and
is popped), 2 + 2l RIGHT-l (the top takes the word below it as its head).
The root sits after the last word, so a LEFT onto it attaches a root of the
sentence, with the root label only (and the root label nowhere else); in
decoding only the last word on the stack may take it, so every parse is one
tree with one root.  Trees must be projective: the parser is trained on
pseudo-projective trees (:mod:`fasttag.text.trees`).

Words are described by ``N_ATTRS`` hashed attributes (a row per word: the
lowercased form, UPOS, XPOS, FEATS, lemma, suffix and the Case feature); a state's features
are hashed conjunctions of those of the stack's three top words, the
buffer's four first, the children at the edges of the top two and the
front, their labels, valencies, label sets and the top-front distance
(Zhang & Nivre 2011's set, reduced).  The Python functions at the end run
the same code on one sentence, for the tests' slow references.
"""
import numpy as np

cimport cython
from libc.stdint cimport uint64_t, int64_t, int32_t, uint32_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.math cimport INFINITY

from .types cimport feat_t, weight_t, class_t, step_t
from .weights cimport WeightTable
from .hashing cimport hash_combine, mix64
from .check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (raw indices checked)."""

# The word attributes, columns of the attribute rows.
cdef enum:
    ATTR_FORM = 0
    ATTR_UPOS = 1
    ATTR_XPOS = 2
    ATTR_FEATS = 3
    ATTR_LEMMA = 4
    ATTR_SUFFIX = 5
    ATTR_CASE = 6
    N_ATTRS_ = 7
N_ATTRS = N_ATTRS_
"""Attributes per word, in the order of an attribute row."""
ATTRIBUTES = ("form", "upos", "xpos", "feats", "lemma", "suffix", "case")

cdef enum:
    N_FEATURES_ = 90
    MAX_DISTANCE = 10
N_FEATURES = N_FEATURES_
"""Feature keys per parser state."""

# the attribute values of a missing word and of the root
cdef uint64_t NONE_VALUE = 0x6a09e667f3bcc908ULL
cdef uint64_t ROOT_VALUE = 0xbb67ae8584caa73bULL
cdef uint64_t NO_CHILD_LABEL = 0x3c6ef372fe94f82bULL


cdef struct State:
    int32_t n               # words; the root is word n
    int32_t depth           # words on the stack
    int32_t b0              # the buffer's front (n: the root, last)
    int32_t* stack
    int32_t* heads          # n + 1 entries, -1 while unattached; the root's is -1
    int32_t* labels
    int32_t* lc1            # leftmost child, -1 none
    int32_t* lc2            # second leftmost
    int32_t* rc1            # rightmost
    int32_t* rc2
    int32_t* n_left         # valencies
    int32_t* n_right
    uint64_t* left_set      # bit (label % 64) per left child's label
    uint64_t* right_set
    # the dynamic oracle's counts (training only: gold non-NULL)
    const int32_t* gold_heads   # n entries: a word's gold head (n: the root)
    const int32_t* gold_labels
    int32_t* in_stack
    int32_t* buffer_deps    # n + 1: gold dependents still in the buffer (b0 <= k < n)
    int32_t* stack_deps     # n + 1: gold dependents on the stack


cdef int state_alloc(State* st, int32_t cap) except -1 nogil:
    """Buffers for sentences of up to ``cap`` words."""
    cdef int32_t m = cap + 1
    st.stack = <int32_t*>malloc(14 * m * sizeof(int32_t))
    st.left_set = <uint64_t*>malloc(2 * m * sizeof(uint64_t))
    if st.stack == NULL or st.left_set == NULL:
        free(st.stack)
        free(st.left_set)
        st.stack = NULL
        st.left_set = NULL
        with gil:
            raise MemoryError("fasttag parser: out of memory")
    st.heads = st.stack + m
    st.labels = st.heads + m
    st.lc1 = st.labels + m
    st.lc2 = st.lc1 + m
    st.rc1 = st.lc2 + m
    st.rc2 = st.rc1 + m
    st.n_left = st.rc2 + m
    st.n_right = st.n_left + m
    st.in_stack = st.n_right + m
    st.buffer_deps = st.in_stack + m
    st.stack_deps = st.buffer_deps + m
    st.right_set = st.left_set + m
    return 0


cdef void state_free(State* st) noexcept nogil:
    free(st.stack)
    free(st.left_set)
    st.stack = NULL
    st.left_set = NULL


cdef void state_start(State* st, int32_t n, const int32_t* gold_heads, const int32_t* gold_labels) noexcept nogil:
    """The initial state of a sentence of ``n`` words (gold: the oracle's tree, or NULL)."""
    cdef int32_t i
    st.n = n
    st.depth = 0
    st.b0 = 0
    st.gold_heads = gold_heads
    st.gold_labels = gold_labels
    for i in range(n + 1):
        st.heads[i] = -1
        st.labels[i] = -1
        st.lc1[i] = -1
        st.lc2[i] = -1
        st.rc1[i] = -1
        st.rc2[i] = -1
        st.n_left[i] = 0
        st.n_right[i] = 0
        st.left_set[i] = 0
        st.right_set[i] = 0
        st.in_stack[i] = 0
        st.buffer_deps[i] = 0
        st.stack_deps[i] = 0
    if gold_heads != NULL:
        for i in range(n):
            check_index(gold_heads[i], n + 1)
            st.buffer_deps[gold_heads[i]] += 1


cdef inline bint is_final(const State* st) noexcept nogil:
    return st.depth == 0 and st.b0 == st.n


cdef inline int32_t stack_at(const State* st, int32_t i) noexcept nogil:
    """The i-th word from the stack's top (0: the top), -1 past its bottom."""
    if i >= st.depth:
        return -1
    check_index(st.depth - 1 - i, st.n + 1)
    return st.stack[st.depth - 1 - i]


cdef inline int transition_kind(int32_t c) noexcept nogil:
    """0 SHIFT, 1 LEFT, 2 RIGHT."""
    if c == 0:
        return 0
    return 1 if c % 2 == 1 else 2


cdef inline int32_t transition_label(int32_t c) noexcept nogil:
    return (c - 1) // 2


cdef inline bint is_valid(const State* st, int32_t c, int32_t root_label, bint single_root) noexcept nogil:
    """Whether transition ``c`` applies: the root label on root arcs only;
    with ``single_root`` (decoding), onto the root only the last word on
    the stack.  Training leaves the latter out, which keeps the oracle's
    costs exact (arc-decomposable)."""
    cdef int kind = transition_kind(c)
    cdef int32_t label
    if kind == 0:
        return st.b0 < st.n
    label = transition_label(c)
    if kind == 1:
        if st.depth < 1:
            return False
        if st.b0 == st.n:
            return (st.depth == 1 or not single_root) and (root_label < 0 or label == root_label)
        return label != root_label
    return st.depth >= 2 and label != root_label


cdef void add_arc(State* st, int32_t head, int32_t dep, int32_t label) noexcept nogil:
    check_index(dep, st.n)
    check_index(head, st.n + 1)
    st.heads[dep] = head
    st.labels[dep] = label
    if dep < head:
        st.n_left[head] += 1
        st.left_set[head] |= (<uint64_t>1) << (label & 63)
        if st.lc1[head] == -1 or dep < st.lc1[head]:
            st.lc2[head] = st.lc1[head]
            st.lc1[head] = dep
        elif st.lc2[head] == -1 or dep < st.lc2[head]:
            st.lc2[head] = dep
    else:
        st.n_right[head] += 1
        st.right_set[head] |= (<uint64_t>1) << (label & 63)
        if st.rc1[head] == -1 or dep > st.rc1[head]:
            st.rc2[head] = st.rc1[head]
            st.rc1[head] = dep
        elif st.rc2[head] == -1 or dep > st.rc2[head]:
            st.rc2[head] = dep


cdef void apply_transition(State* st, int32_t c) noexcept nogil:
    """Apply the valid transition ``c``."""
    cdef int kind = transition_kind(c)
    cdef int32_t s0, w
    if kind == 0:
        w = st.b0
        check_index(st.depth, st.n + 1)
        st.stack[st.depth] = w
        st.depth += 1
        st.b0 += 1
        if st.gold_heads != NULL:
            st.in_stack[w] = 1
            st.buffer_deps[st.gold_heads[w]] -= 1
            st.stack_deps[st.gold_heads[w]] += 1
        return
    s0 = stack_at(st, 0)
    if kind == 1:
        add_arc(st, st.b0, s0, transition_label(c))
    else:
        add_arc(st, stack_at(st, 1), s0, transition_label(c))
    st.depth -= 1
    if st.gold_heads != NULL:
        st.in_stack[s0] = 0
        st.stack_deps[st.gold_heads[s0]] -= 1


cdef int32_t transition_cost(const State* st, int32_t c) noexcept nogil:
    """The gold arcs that transition ``c`` (valid) makes unreachable: the
    arc-hybrid dynamic oracle's cost, from the counts kept in the state."""
    cdef int kind = transition_kind(c)
    cdef int32_t s0 = stack_at(st, 0), s1, h, cost
    cdef int32_t b0 = st.b0
    if kind == 0:
        # b0 can no longer take a head deeper than s0, nor be the head of a stacked word
        check_index(b0, st.n)
        h = st.gold_heads[b0]
        cost = st.stack_deps[b0]
        if h != s0 and h < st.n and st.in_stack[h]:
            cost += 1
        return cost
    # s0 leaves: its dependents still in the buffer are lost
    check_index(s0, st.n)
    cost = st.buffer_deps[s0]
    h = st.gold_heads[s0]
    if kind == 1:
        s1 = stack_at(st, 1)
        if h == b0:
            cost += st.gold_labels[s0] != transition_label(c)
        elif h == s1 or h > b0:
            cost += 1
    else:
        s1 = stack_at(st, 1)
        if h == s1:
            cost += st.gold_labels[s0] != transition_label(c)
        elif h >= b0:
            cost += 1
    return cost


cdef inline const uint64_t* attrs_of(const uint64_t* attrs, const State* st, int32_t w, const uint64_t* none,
                                     const uint64_t* root) noexcept nogil:
    if w < 0:
        return none
    if w == st.n:
        return root
    check_index(w, st.n)
    return attrs + <int64_t>w * N_ATTRS_


cdef inline uint64_t label_value(const State* st, int32_t w) noexcept nogil:
    if w < 0:
        return NO_CHILD_LABEL
    return <uint64_t>(st.labels[w] + 1)


cdef inline int32_t child(const int32_t* arr, int32_t w) noexcept nogil:
    return -1 if w < 0 else arr[w]


cdef inline uint64_t h2(uint64_t t, uint64_t a) noexcept nogil:
    return hash_combine(t, a)


cdef inline uint64_t h3(uint64_t t, uint64_t a, uint64_t b) noexcept nogil:
    return hash_combine(hash_combine(t, a), b)


cdef inline uint64_t h4(uint64_t t, uint64_t a, uint64_t b, uint64_t c) noexcept nogil:
    return hash_combine(hash_combine(hash_combine(t, a), b), c)


cdef void state_features(const State* st, const uint64_t* attrs, feat_t* out) noexcept nogil:
    """The N_FEATURES keys of the state (``attrs``: the sentence's attribute rows)."""
    cdef uint64_t none[N_ATTRS_]
    cdef uint64_t root[N_ATTRS_]
    cdef int a, k = 0
    for a in range(N_ATTRS_):
        none[a] = NONE_VALUE + a
        root[a] = ROOT_VALUE + a
    cdef int32_t s0 = stack_at(st, 0), s1 = stack_at(st, 1), s2 = stack_at(st, 2)
    cdef int32_t b0 = st.b0
    cdef int32_t b1 = b0 + 1 if b0 + 1 < st.n else -1
    cdef int32_t b2 = b0 + 2 if b0 + 2 < st.n else -1
    cdef int32_t b3 = b0 + 3 if b0 + 3 < st.n else -1
    cdef int32_t s0l1 = child(st.lc1, s0), s0l2 = child(st.lc2, s0)
    cdef int32_t s0r1 = child(st.rc1, s0), s0r2 = child(st.rc2, s0)
    cdef int32_t s1l1 = child(st.lc1, s1), s1r1 = child(st.rc1, s1), s1r2 = child(st.rc2, s1)
    cdef int32_t b0l1 = child(st.lc1, b0), b0l2 = child(st.lc2, b0)
    cdef const uint64_t* S0 = attrs_of(attrs, st, s0, none, root)
    cdef const uint64_t* S1 = attrs_of(attrs, st, s1, none, root)
    cdef const uint64_t* S2 = attrs_of(attrs, st, s2, none, root)
    cdef const uint64_t* B0 = attrs_of(attrs, st, b0, none, root)
    cdef const uint64_t* B1 = attrs_of(attrs, st, b1, none, root)
    cdef const uint64_t* B2 = attrs_of(attrs, st, b2, none, root)
    cdef const uint64_t* B3 = attrs_of(attrs, st, b3, none, root)
    cdef const uint64_t* S0L1 = attrs_of(attrs, st, s0l1, none, root)
    cdef const uint64_t* S0L2 = attrs_of(attrs, st, s0l2, none, root)
    cdef const uint64_t* S0R1 = attrs_of(attrs, st, s0r1, none, root)
    cdef const uint64_t* S0R2 = attrs_of(attrs, st, s0r2, none, root)
    cdef const uint64_t* S1L1 = attrs_of(attrs, st, s1l1, none, root)
    cdef const uint64_t* S1R1 = attrs_of(attrs, st, s1r1, none, root)
    cdef const uint64_t* S1R2 = attrs_of(attrs, st, s1r2, none, root)
    cdef const uint64_t* B0L1 = attrs_of(attrs, st, b0l1, none, root)
    cdef const uint64_t* B0L2 = attrs_of(attrs, st, b0l2, none, root)
    cdef uint64_t ls0l1 = label_value(st, s0l1), ls0l2 = label_value(st, s0l2)
    cdef uint64_t ls0r1 = label_value(st, s0r1), ls0r2 = label_value(st, s0r2)
    cdef uint64_t ls1l1 = label_value(st, s1l1), ls1r1 = label_value(st, s1r1)
    cdef uint64_t lb0l1 = label_value(st, b0l1), lb0l2 = label_value(st, b0l2)
    cdef uint64_t dist = 0
    if s0 >= 0:
        dist = <uint64_t>min(b0 - s0, MAX_DISTANCE)
    cdef uint64_t s0vl = 0, s0vr = 0, b0vl = 0, s1vr = 0, s0ls = 0, s0rs = 0, b0ls = 0
    if s0 >= 0:
        s0vl = <uint64_t>st.n_left[s0]
        s0vr = <uint64_t>st.n_right[s0]
        s0ls = st.left_set[s0]
        s0rs = st.right_set[s0]
    if s1 >= 0:
        s1vr = <uint64_t>st.n_right[s1]
    if b0 < st.n:
        b0vl = <uint64_t>st.n_left[b0]
        b0ls = st.left_set[b0]
    cdef uint64_t s0w = S0[ATTR_FORM], s0p = S0[ATTR_UPOS], s0x = S0[ATTR_XPOS], s0f = S0[ATTR_FEATS]
    cdef uint64_t s0m = S0[ATTR_LEMMA], s0s = S0[ATTR_SUFFIX]
    cdef uint64_t s1w = S1[ATTR_FORM], s1p = S1[ATTR_UPOS], s1x = S1[ATTR_XPOS], s1f = S1[ATTR_FEATS]
    cdef uint64_t s1m = S1[ATTR_LEMMA]
    cdef uint64_t s2w = S2[ATTR_FORM], s2p = S2[ATTR_UPOS]
    cdef uint64_t b0w = B0[ATTR_FORM], b0p = B0[ATTR_UPOS], b0x = B0[ATTR_XPOS], b0f = B0[ATTR_FEATS]
    cdef uint64_t b0m = B0[ATTR_LEMMA], b0s = B0[ATTR_SUFFIX]
    cdef uint64_t b1w = B1[ATTR_FORM], b1p = B1[ATTR_UPOS], b1f = B1[ATTR_FEATS]
    cdef uint64_t b2w = B2[ATTR_FORM], b2p = B2[ATTR_UPOS]
    cdef uint64_t b3p = B3[ATTR_UPOS]
    # unigrams of the stack and the buffer
    out[0] = h2(1, s0w)
    out[1] = h2(2, s0p)
    out[2] = h3(3, s0w, s0p)
    out[3] = h2(4, s0x)
    out[4] = h3(5, s0p, s0f)
    out[5] = h2(6, s0m)
    out[6] = h3(7, s0p, s0s)
    out[7] = h2(8, s1w)
    out[8] = h2(9, s1p)
    out[9] = h3(10, s1w, s1p)
    out[10] = h2(11, s1x)
    out[11] = h3(12, s1p, s1f)
    out[12] = h2(13, s1m)
    out[13] = h2(14, s2p)
    out[14] = h2(15, s2w)
    out[15] = h2(16, b0w)
    out[16] = h2(17, b0p)
    out[17] = h3(18, b0w, b0p)
    out[18] = h2(19, b0x)
    out[19] = h3(20, b0p, b0f)
    out[20] = h2(21, b0m)
    out[21] = h3(22, b0p, b0s)
    out[22] = h2(23, b1w)
    out[23] = h2(24, b1p)
    out[24] = h3(25, b1w, b1p)
    out[25] = h3(26, b1p, b1f)
    out[26] = h2(27, b2p)
    out[27] = h2(28, b2w)
    out[28] = h2(29, b3p)
    # pairs
    out[29] = h4(30, s0w, s0p, h2(b0w, b0p))
    out[30] = h4(31, s0w, s0p, b0w)
    out[31] = h4(32, s0w, b0w, b0p)
    out[32] = h4(33, s0w, s0p, b0p)
    out[33] = h4(34, s0p, b0w, b0p)
    out[34] = h3(35, s0w, b0w)
    out[35] = h3(36, s0p, b0p)
    out[36] = h3(37, b0p, b1p)
    out[37] = h3(38, s0p, s1p)
    out[38] = h3(39, s0w, s1w)
    out[39] = h3(40, s0w, s1p)
    out[40] = h3(41, s0p, s1w)
    out[41] = h3(42, s1p, b0p)
    out[42] = h3(43, s0f, b0f)
    out[43] = h3(44, s0f, s1f)
    out[44] = h3(45, s0p, b0f)
    out[45] = h3(46, s0f, b0p)
    out[46] = h3(47, s0m, b0m)
    out[47] = h3(48, s0m, s1m)
    # trigrams
    out[48] = h4(49, b0p, b1p, b2p)
    out[49] = h4(50, s0p, b0p, b1p)
    out[50] = h4(51, s1p, s0p, b0p)
    out[51] = h4(52, s2p, s1p, s0p)
    out[52] = h4(53, s0p, S0L1[ATTR_UPOS], b0p)
    out[53] = h4(54, s0p, S0R1[ATTR_UPOS], b0p)
    out[54] = h4(55, s0p, b0p, B0L1[ATTR_UPOS])
    out[55] = h4(56, s1p, s0p, S0L1[ATTR_UPOS])
    out[56] = h4(57, s1p, s0p, S0R1[ATTR_UPOS])
    out[57] = h4(58, s1p, S1R1[ATTR_UPOS], s0p)
    out[58] = h4(59, s0p, S0L1[ATTR_UPOS], S0L2[ATTR_UPOS])
    out[59] = h4(60, s0p, S0R1[ATTR_UPOS], S0R2[ATTR_UPOS])
    out[60] = h4(61, s1p, S1R1[ATTR_UPOS], S1R2[ATTR_UPOS])
    out[61] = h4(62, b0p, B0L1[ATTR_UPOS], B0L2[ATTR_UPOS])
    # distance and valency
    out[62] = h3(63, s0w, dist)
    out[63] = h3(64, s0p, dist)
    out[64] = h3(65, b0w, dist)
    out[65] = h3(66, b0p, dist)
    out[66] = h4(67, s0w, b0w, dist)
    out[67] = h4(68, s0p, b0p, dist)
    out[68] = h3(69, s0w, s0vr)
    out[69] = h3(70, s0p, s0vr)
    out[70] = h3(71, s0w, s0vl)
    out[71] = h3(72, s0p, s0vl)
    out[72] = h3(73, b0w, b0vl)
    out[73] = h3(74, b0p, b0vl)
    # children and their labels
    out[74] = h4(75, S0L1[ATTR_UPOS], ls0l1, s0p)
    out[75] = h4(76, S0R1[ATTR_UPOS], ls0r1, s0p)
    out[76] = h4(77, B0L1[ATTR_UPOS], lb0l1, b0p)
    out[77] = h4(78, ls0l1, ls0l2, s0p)
    out[78] = h4(79, ls0r1, ls0r2, s0p)
    out[79] = h4(80, lb0l1, lb0l2, b0p)
    out[80] = h4(81, S1L1[ATTR_UPOS], ls1l1, h2(s1p, ls1r1))
    # label sets
    out[81] = h4(82, s0p, s0rs, s0ls)
    out[82] = h4(83, b0p, b0ls, b0vl)
    out[83] = h4(84, s1p, s1vr, S0[ATTR_UPOS])
    # case, which marks the role of a noun in many languages
    out[84] = h3(85, s0p, S0[ATTR_CASE])
    out[85] = h3(86, b0p, B0[ATTR_CASE])
    out[86] = h3(87, s1p, S1[ATTR_CASE])
    out[87] = h4(88, S0[ATTR_CASE], b0p, h2(s0p, B0[ATTR_CASE]))
    out[88] = h4(89, S0[ATTR_CASE], s1p, h2(s0p, S1[ATTR_CASE]))
    out[89] = h4(90, S0[ATTR_CASE], b0w, b0p)


cdef int32_t best_valid(const State* st, const weight_t* scores, int32_t n_classes, int32_t root_label) noexcept nogil:
    """The best-scored valid transition of a one-root parse (ties: the lowest class)."""
    cdef int32_t c, best = -1
    cdef weight_t top = -INFINITY
    for c in range(n_classes):
        if is_valid(st, c, root_label, True) and (best < 0 or scores[c] > top):
            best = c
            top = scores[c]
    return best


cdef inline uint64_t next_random(uint64_t* x) noexcept nogil:
    x[0] = x[0] * 6364136223846793005ULL + 1442695040888963407ULL
    return mix64(x[0])


def parse_batch(WeightTable table, const uint64_t[:, ::1] attrs, const int64_t[::1] offsets,
                int32_t n_classes, int32_t root_label, int32_t[::1] heads, int32_t[::1] labels):
    """Greedy parses of a batch of sentences: sentence s is words
    ``offsets[s]:offsets[s + 1]`` of the attribute rows; each word's head
    (1-based in its sentence, 0 the root) and label id go to ``heads`` and
    ``labels``."""
    cdef Py_ssize_t n_sents = offsets.shape[0] - 1
    if attrs.shape[1] != N_ATTRS_ or heads.shape[0] != attrs.shape[0] or labels.shape[0] != attrs.shape[0] \
            or n_sents < 0 or offsets[n_sents] != attrs.shape[0] or n_classes < 1:
        raise ValueError("parse_batch: inconsistent array shapes")
    if n_classes < table.n_classes:
        raise ValueError("parse_batch: the table has more classes than n_classes")
    cdef Py_ssize_t s, i
    cdef int32_t n, cap = 0, c
    for s in range(n_sents):
        if offsets[s + 1] < offsets[s] or offsets[s] < 0:
            raise ValueError("parse_batch: offsets must ascend")
        cap = max(cap, <int32_t>(offsets[s + 1] - offsets[s]))
    if attrs.shape[0] == 0:
        return
    cdef State st
    st.stack = NULL
    st.left_set = NULL
    cdef feat_t keys[N_FEATURES_]
    cdef weight_t* scores = <weight_t*>malloc(n_classes * sizeof(weight_t))
    if scores == NULL:
        raise MemoryError("fasttag parser: out of memory")
    try:
        with nogil:
            state_alloc(&st, cap)
            for s in range(n_sents):
                n = <int32_t>(offsets[s + 1] - offsets[s])
                if n == 0:
                    continue
                state_start(&st, n, NULL, NULL)
                while not is_final(&st):
                    state_features(&st, &attrs[offsets[s], 0], keys)
                    memset(scores, 0, n_classes * sizeof(weight_t))
                    table.score_into(keys, NULL, N_FEATURES_, scores, n_classes)
                    c = best_valid(&st, scores, n_classes, root_label)
                    apply_transition(&st, c)
                for i in range(n):
                    heads[offsets[s] + i] = 0 if st.heads[i] == n else st.heads[i] + 1
                    labels[offsets[s] + i] = st.labels[i]
    finally:
        state_free(&st)
        free(scores)


def train_epoch(WeightTable table, const uint64_t[:, ::1] attrs, const int64_t[::1] offsets,
                const int32_t[::1] gold_heads, const int32_t[::1] gold_labels, const int64_t[::1] order,
                int32_t n_classes, int32_t root_label, step_t step, double explore, uint64_t seed):
    """One perceptron epoch over the sentences in ``order`` (gold heads
    1-based, 0 the root; projective trees): at each state the best-scored
    transition of least cost is the oracle's, and a better-scored costlier
    one is an error (weights moved from it to the oracle's).  The parse
    follows the prediction with probability ``explore`` (error
    exploration), the oracle's otherwise.  Returns ``(step, transitions,
    errors)``: the averaging step reached, transitions seen, errors made."""
    cdef Py_ssize_t n_sents = offsets.shape[0] - 1
    cdef Py_ssize_t n_words = attrs.shape[0]
    if attrs.shape[1] != N_ATTRS_ or gold_heads.shape[0] != n_words or gold_labels.shape[0] != n_words \
            or n_sents < 0 or offsets[n_sents] != n_words or n_classes < 1:
        raise ValueError("train_epoch: inconsistent array shapes")
    cdef Py_ssize_t s, i, j
    cdef int32_t n, cap = 0
    for s in range(n_sents):
        if offsets[s + 1] < offsets[s] or offsets[s] < 0:
            raise ValueError("train_epoch: offsets must ascend")
        cap = max(cap, <int32_t>(offsets[s + 1] - offsets[s]))
    for j in range(order.shape[0]):
        if not 0 <= order[j] < n_sents:
            raise ValueError("train_epoch: order names no sentence")
    cdef int32_t[::1] heads0 = np.empty(n_words, dtype=np.int32)
    for s in range(n_sents):
        n = <int32_t>(offsets[s + 1] - offsets[s])
        for i in range(offsets[s], offsets[s + 1]):
            if not 0 <= gold_heads[i] <= n or gold_heads[i] == i - offsets[s] + 1:
                raise ValueError(f"train_epoch: gold head {gold_heads[i]} of word {i - offsets[s] + 1} "
                                 f"of sentence {s + 1}")
            if not 0 <= gold_labels[i] < (n_classes - 1) // 2:
                raise ValueError("train_epoch: gold label out of range")
            heads0[i] = n if gold_heads[i] == 0 else gold_heads[i] - 1
    cdef State st
    st.stack = NULL
    st.left_set = NULL
    cdef feat_t keys[N_FEATURES_]
    cdef weight_t* scores = <weight_t*>malloc(n_classes * sizeof(weight_t))
    cdef int32_t* costs = <int32_t*>malloc(n_classes * sizeof(int32_t))
    cdef int64_t seen = 0, errors = 0
    cdef int32_t c, p, g, least, k
    cdef weight_t top
    cdef uint64_t rng = seed * 2 + 1
    cdef uint64_t threshold = <uint64_t>(explore * 18446744073709551615.0) if explore < 1.0 else 0xFFFFFFFFFFFFFFFFULL
    if scores == NULL or costs == NULL:
        free(scores)
        free(costs)
        raise MemoryError("fasttag parser: out of memory")
    try:
        with nogil:
            state_alloc(&st, cap)
            for j in range(order.shape[0]):
                s = order[j]
                n = <int32_t>(offsets[s + 1] - offsets[s])
                if n == 0:
                    continue
                state_start(&st, n, &heads0[offsets[s]], &gold_labels[offsets[s]])
                while not is_final(&st):
                    state_features(&st, &attrs[offsets[s], 0], keys)
                    memset(scores, 0, n_classes * sizeof(weight_t))
                    table.score_into(keys, NULL, N_FEATURES_, scores, n_classes)
                    p = -1
                    least = 0x7FFFFFFF
                    for c in range(n_classes):
                        if is_valid(&st, c, root_label, False):
                            costs[c] = transition_cost(&st, c)
                            if costs[c] < least:
                                least = costs[c]
                            if p < 0 or scores[c] > scores[p]:
                                p = c
                        else:
                            costs[c] = -1
                    g = -1
                    for c in range(n_classes):
                        if costs[c] == least and (g < 0 or scores[c] > scores[g]):
                            g = c
                    seen += 1
                    step += 1
                    if costs[p] > least:
                        errors += 1
                        for k in range(N_FEATURES_):
                            table.add(keys[k], g, 1.0, step)
                            table.add(keys[k], p, -1.0, step)
                    if costs[p] > least and not (explore > 0.0 and next_random(&rng) <= threshold):
                        apply_transition(&st, g)
                    else:
                        apply_transition(&st, p)
    finally:
        state_free(&st)
        free(scores)
        free(costs)
    return step, seen, errors


# ---------------------------------------------------------------- for the tests' references

cdef int _replay(State* st, const int32_t[::1] gold_heads, const int32_t[::1] gold_labels,
                 int32_t[::1] heads0, const int32_t[::1] history, int32_t n_classes, int32_t root_label,
                 bint single_root) except -1:
    cdef Py_ssize_t i, n = gold_heads.shape[0]
    if gold_labels.shape[0] != n or n < 1:
        raise ValueError("gold heads and labels differ in length, or are empty")
    for i in range(n):
        if not 0 <= gold_heads[i] <= n or not 0 <= gold_labels[i] < (n_classes - 1) // 2:
            raise ValueError("a gold head or label out of range")
        heads0[i] = <int32_t>n if gold_heads[i] == 0 else gold_heads[i] - 1
    state_alloc(st, <int32_t>n)
    state_start(st, <int32_t>n, &heads0[0], &gold_labels[0])
    for i in range(history.shape[0]):
        if not 0 <= history[i] < n_classes or not is_valid(st, history[i], root_label, single_root):
            state_free(st)
            raise ValueError(f"transition {history[i]} (step {i + 1}) is not valid")
        apply_transition(st, history[i])
    return 0


def transition_costs(const int32_t[::1] gold_heads, const int32_t[::1] gold_labels, const int32_t[::1] history,
                     int32_t n_classes, int32_t root_label):
    """After the transitions ``history`` from a sentence's initial state
    (gold heads 1-based, 0 the root; the transitions of training): each
    transition's oracle cost, -1 where it is not valid; and whether the
    state is final."""
    cdef State st
    cdef int32_t[::1] heads0 = np.empty(max(gold_heads.shape[0], 1), dtype=np.int32)
    _replay(&st, gold_heads, gold_labels, heads0, history, n_classes, root_label, False)
    out = np.full(n_classes, -1, dtype=np.int32)
    cdef int32_t c
    for c in range(n_classes):
        if is_valid(&st, c, root_label, False):
            out[c] = transition_cost(&st, c)
    final = bool(is_final(&st))
    state_free(&st)
    return out, final


def replay_tree(const int32_t[::1] gold_heads, const int32_t[::1] gold_labels, const int32_t[::1] history,
                int32_t n_classes, int32_t root_label, bint single_root=False):
    """The (heads, labels) built by ``history`` (heads 1-based, 0 the
    root, -1 unattached; labels -1 unattached)."""
    cdef State st
    cdef int32_t[::1] heads0 = np.empty(max(gold_heads.shape[0], 1), dtype=np.int32)
    _replay(&st, gold_heads, gold_labels, heads0, history, n_classes, root_label, single_root)
    cdef Py_ssize_t n = gold_heads.shape[0], i
    heads = [(-1 if st.heads[i] < 0 else (0 if st.heads[i] == n else st.heads[i] + 1)) for i in range(n)]
    labels = [st.labels[i] for i in range(n)]
    state_free(&st)
    return heads, labels


def features_after(const uint64_t[:, ::1] attrs, const int32_t[::1] history, int32_t n_classes,
                   int32_t root_label):
    """The feature keys of the state after ``history`` in a sentence of
    the attribute rows ``attrs`` (no gold tree needed)."""
    cdef Py_ssize_t n = attrs.shape[0], i
    if n < 1 or attrs.shape[1] != N_ATTRS_:
        raise ValueError("attrs must be a non-empty (n, N_ATTRS) array")
    cdef State st
    state_alloc(&st, <int32_t>n)
    state_start(&st, <int32_t>n, NULL, NULL)
    for i in range(history.shape[0]):
        if not 0 <= history[i] < n_classes or not is_valid(&st, history[i], root_label, True):
            state_free(&st)
            raise ValueError(f"transition {history[i]} (step {i + 1}) is not valid")
        apply_transition(&st, history[i])
    out = np.empty(N_FEATURES_, dtype=np.uint64)
    cdef feat_t[::1] view = out
    state_features(&st, &attrs[0, 0], &view[0])
    state_free(&st)
    return out
