# cython: language_level=3
"""Document-level features of span tagging, compiled.

What a feature reads of a word depends on the word type alone, so the few
string methods it needs run once per distinct word of a call (Python's own
``str.isupper`` and friends, so Unicode is handled as before); the
per-token work (runs, counts, the values) is C over arrays.
:func:`document_codes` packs each token's values into one small integer;
its bit layout is in docs/architecture.md.
"""
import numpy as np

from cpython.dict cimport PyDict_GetItemWithError
from cpython.list cimport PyList_GET_ITEM, PyList_GET_SIZE
from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memset

from .check cimport check_index, DEBUG_BUILD as _DEBUG_BUILD

cdef extern from "Python.h":
    # CPython's character predicates, as str methods use them (Cython's
    # own Py_UCS4.istitle() is that of a one-character str, upper included)
    bint is_alpha "Py_UNICODE_ISALPHA"(Py_UCS4 ch) nogil
    bint is_upper "Py_UNICODE_ISUPPER"(Py_UCS4 ch) nogil
    bint is_lower "Py_UNICODE_ISLOWER"(Py_UCS4 ch) nogil
    bint is_title "Py_UNICODE_ISTITLE"(Py_UCS4 ch) nogil

DEBUG_BUILD = bool(_DEBUG_BUILD)
"""True when this module was compiled by the debug build (indices checked)."""

# per-type property bits
cdef enum:
    ALPHA = 1       # some character is a letter (the word counts as cased)
    UPPER = 2       # str.isupper()
    LOWER = 4       # str.islower()
    CAP = 8         # the first character is upper case
    ALLCAP = 16     # str.isupper() and longer than one character

# packed code: see the module docstring
cdef enum:
    ROLE_NONE, ROLE_A, ROLE_F, ROLE_M, ROLE_L
    DOC_L = 1
    DOC_T = 2
    DOC_A = 4
    DOC_START = 8
    HEADLINE = 16
    _DOCRUN_SHIFT = 5
    _CAPROLE_SHIFT = 9
    NO_ROLE = 255

DOCRUN_SHIFT = _DOCRUN_SHIFT
CAPROLE_SHIFT = _CAPROLE_SHIFT


cdef int properties(str w):
    """The property bits of a word: ``str.isalpha``, ``isupper`` and
    ``islower`` as CPython defines them, over its code points."""
    cdef int p = 0
    cdef Py_UCS4 ch
    cdef bint up_cased = False, up_ok = True, low_cased = False, low_ok = True
    cdef Py_ssize_t i = 0
    for ch in w:
        if is_alpha(ch):
            p |= ALPHA
        # str.isupper: no lowercase or titlecase character, some uppercase one
        if is_lower(ch) or is_title(ch):
            up_ok = False
        elif is_upper(ch):
            up_cased = True
        # str.islower: no uppercase or titlecase character, some lowercase one
        if is_upper(ch) or is_title(ch):
            low_ok = False
        elif is_lower(ch):
            low_cased = True
        if i == 0 and is_upper(ch):
            p |= CAP            # w[:1].isupper() (a str of one character: its own test)
        i += 1
    if (up_ok and up_cased) if i > 1 else p & CAP:
        p |= UPPER
        if i > 1:
            p |= ALLCAP
    if (low_ok and low_cased) if i > 1 else (i == 1 and is_lower(w[0])):
        p |= LOWER
    return p


def document_codes(list sentences, const int64_t[::1] order, const int64_t[::1] doc_starts):
    """Per token of ``sentences`` (lists of str), its packed document
    features (int32, tokens of all sentences in order).  ``order`` lists
    the sentence indices grouped by document; document d holds
    ``order[doc_starts[d]:doc_starts[d + 1]]``."""
    cdef Py_ssize_t n_sents = PyList_GET_SIZE(sentences)
    cdef Py_ssize_t i, j, n, s, d, k, p, a, b
    if order.shape[0] != n_sents or doc_starts.shape[0] < 1 or doc_starts[0] != 0 \
            or doc_starts[doc_starts.shape[0] - 1] != n_sents:
        raise ValueError("documents must list every sentence once")
    for d in range(doc_starts.shape[0] - 1):
        if doc_starts[d + 1] < doc_starts[d]:
            raise ValueError("document starts must not decrease")
    seen = np.zeros(n_sents, dtype=np.uint8)
    cdef uint8_t[::1] seen_v = seen
    for i in range(n_sents):
        if not 0 <= order[i] < n_sents or seen_v[order[i]]:
            raise ValueError("documents must list every sentence once")
        seen_v[order[i]] = 1
    # sentence starts in the flat token arrays
    starts_arr = np.zeros(n_sents + 1, dtype=np.int64)
    cdef int64_t[::1] starts = starts_arr
    for i in range(n_sents):
        sent = <object>PyList_GET_ITEM(sentences, i)
        if type(sent) is not list:
            raise TypeError("a sentence must be a list of str")
        starts[i + 1] = starts[i] + PyList_GET_SIZE(sent)
    cdef Py_ssize_t n_tokens = starts[n_sents]
    # word types of this call: properties and lowercase-form ids
    type_arr = np.empty(n_tokens, dtype=np.int32)
    cdef int32_t[::1] tid = type_arr
    cdef dict types = {}
    cdef dict lowers = {}
    cdef list props = []
    cdef list lower_ids = []
    cdef PyObject* hit
    cdef Py_ssize_t t = 0
    for i in range(n_sents):
        sent = <object>PyList_GET_ITEM(sentences, i)
        for j in range(PyList_GET_SIZE(sent)):
            w = <object>PyList_GET_ITEM(sent, j)
            hit = PyDict_GetItemWithError(types, w)
            if hit == NULL:
                if type(w) is not str:
                    if not isinstance(w, str):
                        raise TypeError(f"a token must be a str, not {type(w).__name__}")
                    w = str(w)                      # a str subclass (numpy.str_) is a token too
                k = len(types)
                types[w] = k
                props.append(properties(w))
                lower_ids.append(lowers.setdefault(w.lower(), len(lowers)))
            else:
                k = <object>hit
            tid[t] = <int32_t>k
            t += 1
    cdef int32_t[::1] prop = np.array(props, dtype=np.int32) if props else np.zeros(1, np.int32)
    cdef int32_t[::1] lid = np.array(lower_ids, dtype=np.int32) if lower_ids else np.zeros(1, np.int32)
    cdef Py_ssize_t n_types = len(props)
    cdef Py_ssize_t n_lower = max(len(lowers), 1)
    out = np.zeros(n_tokens, dtype=np.int32)
    cdef int32_t[::1] code = out
    role_arr = np.zeros(max(n_tokens, 1), dtype=np.uint8)
    cdef uint8_t[::1] role = role_arr
    head_arr = np.zeros(max(n_sents, 1), dtype=np.uint8)
    cdef uint8_t[::1] head = head_arr
    stats_arr = np.zeros((n_lower, 7), dtype=np.int64)
    cdef int64_t[:, ::1] stats = stats_arr
    first_arr = np.full(2 * max(n_types, 1), NO_ROLE, dtype=np.uint8)
    cdef uint8_t[::1] first_role = first_arr
    cdef int64_t st[7]
    cdef int pr, r, c, runs, own = 0
    cdef Py_ssize_t n_cased, n_upper
    with nogil:
        # every sentence: headline or not, and the capitalisation runs
        for s in range(n_sents):
            a = starts[s]
            b = starts[s + 1]
            n_cased = n_upper = 0
            for p in range(a, b):
                pr = prop[tid[p]]
                if pr & ALPHA:
                    n_cased += 1
                    if pr & UPPER:
                        n_upper += 1
            head[s] = n_cased > 1 and 2 * n_upper > n_cased
            p = a
            while p < b:
                if not prop[tid[p]] & CAP:
                    p += 1
                    continue
                k = p
                while k + 1 < b and prop[tid[k + 1]] & CAP:
                    k += 1
                if k == p:
                    role[p] = ROLE_A
                else:
                    role[p] = ROLE_F
                    role[k] = ROLE_L
                    for j in range(p + 1, k):
                        role[j] = ROLE_M
                p = k + 1
        for d in range(doc_starts.shape[0] - 1):
            # counts over the document's non-headline sentences, per
            # lowercase form: lowercase, capitalised, all capitals (away
            # from a sentence start), and the roles A, F, M, L
            for i in range(doc_starts[d], doc_starts[d + 1]):
                s = order[i]
                if head[s]:
                    continue
                for p in range(starts[s], starts[s + 1]):
                    count(&stats[lid[tid[p]], 0], prop[tid[p]], p == starts[s], role[p], 1)
            for i in range(doc_starts[d], doc_starts[d + 1]):
                s = order[i]
                a = starts[s]
                if a < starts[s + 1]:
                    # the caprole of a sentence's first word is that of the
                    # document's first sentence-initial occurrence of the
                    # word (in a sentence of the same headline status): the
                    # values models were trained with
                    k = 2 * tid[a] + head[s]
                    if first_role[k] == NO_ROLE:
                        first_role[k] = role[a]
                    own = first_role[k]
                for p in range(starts[s], starts[s + 1]):
                    for k in range(7):
                        st[k] = stats[lid[tid[p]], k]
                    pr = prop[tid[p]]
                    if not head[s]:         # the token's own occurrence is not "elsewhere"
                        count(st, pr, p == starts[s], role[p], -1)
                    c = (DOC_L if st[0] > 0 else 0) | (DOC_T if st[1] > 0 else 0) \
                        | (DOC_A if st[2] > 0 else 0) | (DOC_START if p == starts[s] else 0) \
                        | (HEADLINE if head[s] else 0)
                    runs = 0
                    for k in range(4):
                        if st[3 + k] > 0:
                            runs |= 1 << k
                    code[p] = c | (runs << _DOCRUN_SHIFT) \
                        | ((own if p == a else role[p]) << _CAPROLE_SHIFT)
            # clear what this document touched
            for i in range(doc_starts[d], doc_starts[d + 1]):
                s = order[i]
                if starts[s] < starts[s + 1]:
                    first_role[2 * tid[starts[s]] + head[s]] = NO_ROLE
                for p in range(starts[s], starts[s + 1]):
                    memset(&stats[lid[tid[p]], 0], 0, 7 * sizeof(int64_t))
    return out


cdef inline void count(int64_t* st, int pr, bint first, int role, int64_t by) noexcept nogil:
    """Add ``by`` occurrences of a word with properties ``pr`` and run
    ``role`` to its counts; the first token of a sentence counts only
    when written in lowercase."""
    if pr & LOWER:
        st[0] += by
    elif not first and pr & CAP:
        st[2 if pr & ALLCAP else 1] += by
        st[2 + role] += by
