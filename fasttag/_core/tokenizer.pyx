# cython: language_level=3
"""The candidate tokenizer's compiled scan, features and assembly.

A text is read once.  Whitespace always splits and a line break always
begins a sentence; inside a run of letters (with their marks) or of digits
nothing splits.  What is left to decide are the *candidates*: boundaries
inside a whitespace-free chunk next to punctuation, symbols, a change
between letters, digits and scripts, every boundary between characters of a
script written without spaces, a boundary inside a letter run before a
learned multiword suffix (``do|n't``, ``can|not``), and the whitespace gaps
where a sentence may end.  Each candidate gets a row of hashed attributes
for the sequence model's templates; :func:`assemble` turns the decoded
labels back into token offsets, sentence starts and word splits.  No Python
object is touched in the loops, so they run without the GIL.

Every pass is linear in the text: a candidate's attributes read a window
of at most MAX_PART characters around it, or values computed once per
chunk (its shape), and the scan keeps what it needs of the characters
behind it (the parity of a run of regional indicators) as it goes.  Each
pass counts the characters and candidates it visits in ``Text.visits``;
:func:`work` returns the counts, so that a test can check linearity
without a clock.

Definitions (the pure-Python reference of the tests follows them):

- character classes: :func:`scan_class` of a code point's category index
  (``fasttag.tasks.tok`` tables) and the code point;
- kinds: ``PUNCT`` (a boundary inside a chunk), ``SPACELESS`` (between two
  characters of scripts without spaces), ``SUFFIX`` (inside a letter run
  before a learned suffix), ``GAP`` (whitespace without a line break,
  unless a lower-case letter follows a letter or digit);
- labels: 0 nothing, 1 a new token, 2 a new word of the same token, 3 a
  new token that begins a sentence (at a gap 0-2 mean a token only).
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport malloc, free

from .hashing cimport mix64
from .check cimport check, check_index, DEBUG_BUILD as _DEBUG_BUILD

DEBUG_BUILD = bool(_DEBUG_BUILD)

cdef extern from "Python.h":
    int PyUnicode_KIND(object) nogil
    void* PyUnicode_DATA(object) nogil
    Py_UCS4 PyUnicode_READ(int kind, void* data, Py_ssize_t index) nogil

# scan classes
DEF LETTER = 0
DEF SPACELESS = 1
DEF MARK = 2
DEF DIGIT = 3
DEF SPACE = 4
DEF NEWLINE = 5
DEF OTHER = 6

# candidate kinds
DEF K_PUNCT = 0
DEF K_SPACELESS = 1
DEF K_SUFFIX = 2
DEF K_GAP = 3

# category indices of fasttag.features.tokchars.CATEGORIES
DEF CAT_LU = 0
DEF CAT_LL = 1
DEF CAT_LT = 2
DEF CAT_LO = 4
DEF CAT_MN = 5
DEF CAT_ME = 7
DEF CAT_ND = 8
DEF CAT_SO = 21
DEF CAT_SPACE = 30
DEF CAT_NEWLINE = 31

DEF MAX_PART = 8          # letter runs and chunk parts are cut to this many characters
DEF MAX_CHUNK = 24        # longer chunks are all one "long chunk"
DEF MAX_SHAPE = 12
DEF MAX_SUFFIX = 4        # the longest learned multiword suffix
DEF ZWJ = 0x200D
DEF N_PASSES = 5          # read, scan, shapes, features, assemble

PASS_NAMES = ("read", "scan", "shapes", "features", "assemble")

N_ATTRIBUTES = 21
KIND_NAMES = ("punct", "spaceless", "suffix", "gap")

cdef uint64_t P = 0x9E3779B97F4A7C15ULL
cdef uint64_t NONE = 0x6E6F6E65ULL
cdef uint64_t LONG = 0x6C6F6E67ULL


cdef inline uint8_t category(uint32_t c, const uint8_t* cat) noexcept nogil:
    """The category index of a code point (outside the BMP: a few ranges)."""
    if c < 0x10000:
        return cat[c]
    if 0x1F3FB <= c <= 0x1F3FF or 0xE0100 <= c <= 0xE01EF:
        return CAT_MN                     # skin tones and variation selectors attach
    if 0x20000 <= c < 0x40000:
        return CAT_LO                     # CJK extensions
    return CAT_SO


cdef inline bint spaceless_script(uint32_t c) noexcept nogil:
    return (0x0E00 <= c <= 0x0EFF or 0x1000 <= c <= 0x109F or 0x1780 <= c <= 0x17FF
            or 0x3005 <= c <= 0x3007 or 0x3040 <= c <= 0x30FF or 0x31F0 <= c <= 0x31FF
            or 0x3400 <= c <= 0x4DBF or 0x4E00 <= c <= 0x9FFF or 0xF900 <= c <= 0xFAFF
            or 0xFF66 <= c <= 0xFF9F or 0x20000 <= c < 0x40000)


cdef inline uint8_t sclass(uint32_t c, uint8_t k) noexcept nogil:
    if k <= 4:
        return SPACELESS if spaceless_script(c) else LETTER
    if k <= CAT_ME or c == ZWJ:
        return MARK
    if k == CAT_ND:
        return DIGIT
    if k == CAT_SPACE:
        return SPACE
    if k == CAT_NEWLINE:
        return NEWLINE
    return OTHER


def scan_class(uint32_t c, uint8_t k):
    """The scan class of code point ``c`` of category index ``k`` (0 letter,
    1 letter of a script without spaces, 2 mark, 3 digit, 4 space, 5 line
    break, 6 anything else)."""
    return sclass(c, k)


cdef inline uint64_t lowered(uint32_t c, const uint32_t* lower) noexcept nogil:
    return lower[c] if c < 0x10000 else c


cdef inline uint64_t str_hash(const uint32_t* cp, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    cdef uint64_t h = 0
    cdef Py_ssize_t i
    for i in range(a, b):
        h = h * P + cp[i]
    return mix64(h ^ (<uint64_t>(b - a) << 48))


cdef inline uint64_t low_hash(const uint32_t* cp, Py_ssize_t a, Py_ssize_t b, const uint32_t* lower) noexcept nogil:
    cdef uint64_t h = 0
    cdef Py_ssize_t i
    for i in range(a, b):
        h = h * P + lowered(cp[i], lower)
    return mix64(h ^ (<uint64_t>(b - a) << 48))


def suffix_key(str suffix, uint32_t after, const uint32_t[::1] lower):
    """The key of a learned multiword suffix: the lowercased end of a letter
    run and the code point after the run inside its chunk (0: none).  The
    functions here take the sorted keys followed by a mask with bit
    ``lowercased last letter % 64`` set for each suffix."""
    cdef Py_ssize_t n = len(suffix), i
    cdef uint64_t h = 0
    for i in range(n):
        h = h * P + lowered(ord(suffix[i]), &lower[0])
    return mix64(mix64(h ^ (<uint64_t>n << 48)) ^ after)


cdef inline bint is_suffix(const uint32_t* cp, Py_ssize_t a, Py_ssize_t b, uint32_t after,
                           const uint32_t* lower, const uint64_t* keys, Py_ssize_t n_keys) noexcept nogil:
    cdef uint64_t h = 0, key
    cdef Py_ssize_t i, lo = 0, hi = n_keys, mid
    for i in range(a, b):
        h = h * P + lowered(cp[i], lower)
    key = mix64(mix64(h ^ (<uint64_t>(b - a) << 48)) ^ after)
    while lo < hi:
        mid = (lo + hi) // 2
        check_index(mid, n_keys)
        if keys[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo < n_keys and keys[lo] == key


cdef inline Py_ssize_t n_keys_of(const uint64_t[::1] keys) noexcept:
    """The suffix keys of an array that ends with the last-letter mask."""
    return keys.shape[0] - 1 if keys.shape[0] > 1 else 0


cdef struct Text:
    uint32_t* cp
    uint8_t* cat
    Py_ssize_t cap        # the room of every buffer (text_alloc's n + 1)
    uint8_t* cls          # scan class; a mark takes its base's class in ``base``
    uint8_t* base
    Py_ssize_t n
    # chunks
    int64_t* cstart
    int64_t* cend
    uint8_t* cgap         # before each chunk: 0 text start, 1 one space, 2 more spaces, 3 a line break
    Py_ssize_t n_chunks
    # candidates
    int64_t* left         # the end of what lies before the boundary
    int64_t* pos          # the start of what lies after it
    uint8_t* kind
    int32_t* lchunk
    int32_t* rchunk
    Py_ssize_t n_cands
    uint64_t* cshape      # per chunk: its shape hash (chunk_shapes; NULL until computed)
    # characters and candidates each pass visited (the work counts of :func:`work`)
    Py_ssize_t visits[N_PASSES]


cdef int text_alloc(Text* t, Py_ssize_t n) except -1:
    cdef Py_ssize_t m = n + 1
    cdef int k
    t.n = n
    t.cap = m
    t.cp = <uint32_t*>malloc(m * sizeof(uint32_t))
    t.cat = <uint8_t*>malloc(m)
    t.cls = <uint8_t*>malloc(m)
    t.base = <uint8_t*>malloc(m)
    t.cstart = <int64_t*>malloc(m * sizeof(int64_t))
    t.cend = <int64_t*>malloc(m * sizeof(int64_t))
    t.cgap = <uint8_t*>malloc(m)
    t.left = <int64_t*>malloc(m * sizeof(int64_t))
    t.pos = <int64_t*>malloc(m * sizeof(int64_t))
    t.kind = <uint8_t*>malloc(m)
    t.lchunk = <int32_t*>malloc(m * sizeof(int32_t))
    t.rchunk = <int32_t*>malloc(m * sizeof(int32_t))
    t.cshape = NULL
    for k in range(N_PASSES):
        t.visits[k] = 0
    if not (t.cp and t.cat and t.cls and t.base and t.cstart and t.cend and t.cgap and t.left and t.pos
            and t.kind and t.lchunk and t.rchunk):
        text_free(t)
        raise MemoryError()
    return 0


cdef void text_free(Text* t) noexcept:
    free(t.cp); free(t.cat); free(t.cls); free(t.base); free(t.cstart); free(t.cend); free(t.cgap)
    free(t.left); free(t.pos); free(t.kind); free(t.lchunk); free(t.rchunk); free(t.cshape)
    t.cshape = NULL
    t.cp = NULL; t.cat = NULL; t.cls = NULL; t.base = NULL; t.cstart = NULL; t.cend = NULL
    t.cgap = NULL; t.left = NULL; t.pos = NULL; t.kind = NULL; t.lchunk = NULL; t.rchunk = NULL


cdef void read_text(Text* t, int ukind, void* data, const uint8_t* cat_table) noexcept nogil:
    cdef Py_ssize_t i
    cdef uint32_t c
    cdef uint8_t b = OTHER, s
    check(t.n < t.cap)
    for i in range(t.n):
        c = PyUnicode_READ(ukind, data, i)
        check_index(i, t.cap)
        t.cp[i] = c
        t.cat[i] = category(c, cat_table)
        s = sclass(c, t.cat[i])
        t.cls[i] = s
        if s != MARK:
            b = s
        elif i == 0 or t.cls[i - 1] >= SPACE and t.cls[i - 1] != OTHER:
            b = OTHER                       # a mark after whitespace stands alone
        t.base[i] = b
    t.visits[0] += t.n


cdef inline bint regional(uint32_t c) noexcept nogil:
    return 0x1F1E6 <= c <= 0x1F1FF




cdef inline bint wordlike(uint8_t c) noexcept nogil:
    return c == LETTER or c == SPACELESS or c == DIGIT


cdef void scan(Text* t, const uint32_t* lower, const uint64_t* keys, Py_ssize_t n_keys,
               const int64_t* prot, Py_ssize_t n_prot) noexcept nogil:
    """Chunks and candidates of a read text.  ``prot``: sorted (start, end)
    pairs of protected spans, inside which no boundary is a candidate."""
    cdef Py_ssize_t i = 0, n = t.n, a, b, j, k, run_start, p_at = 0
    cdef Py_ssize_t regionals       # regional indicators right before j in the chunk
    cdef bint nl, flag_half
    cdef uint8_t gap, lc, rc
    cdef uint32_t after
    cdef uint8_t kind = K_PUNCT
    t.n_chunks = 0
    t.n_cands = 0
    while i < n:
        nl = False
        a = i
        while i < n and (t.cls[i] == SPACE or t.cls[i] == NEWLINE):
            check_index(i, t.n)
            if t.cls[i] == NEWLINE:
                nl = True
            i += 1
        if i >= n:
            break
        b = i
        while i < n and not (t.cls[i] == SPACE or t.cls[i] == NEWLINE):
            check_index(i, t.n)
            i += 1
        # chunk [b, i)
        gap = 0 if t.n_chunks == 0 else (3 if nl else (1 if b - a == 1 else 2))
        check_index(t.n_chunks, t.cap)
        check_index(b, t.n)
        t.cstart[t.n_chunks] = b
        t.cend[t.n_chunks] = i
        t.cgap[t.n_chunks] = gap
        if gap == 1 or gap == 2:
            check_index(a - 1, t.n)
            lc = t.base[a - 1]
            if not (wordlike(lc) and t.cat[b] == CAT_LL):
                check_index(t.n_cands, t.cap)
                t.left[t.n_cands] = a
                t.pos[t.n_cands] = b
                t.kind[t.n_cands] = K_GAP
                t.lchunk[t.n_cands] = <int32_t>(t.n_chunks - 1)
                t.rchunk[t.n_cands] = <int32_t>t.n_chunks
                t.n_cands += 1
        run_start = b
        regionals = 1 if regional(t.cp[b]) else 0
        t.visits[1] += i - a
        for j in range(b + 1, i + 1):
            check_index(j - 1, t.n)
            if j < i:
                check_index(j, t.n)
                rc = t.cls[j]
                lc = t.base[j - 1]
                # the second, fourth ... regional indicator of a run ends a flag: no boundary before it
                flag_half = regional(t.cp[j]) and regionals % 2 == 1
                regionals = regionals + 1 if regional(t.cp[j]) else 0
                if rc == MARK or t.cp[j - 1] == ZWJ or flag_half:
                    continue
                while p_at < n_prot and prot[2 * p_at + 1] <= j:
                    check_index(2 * p_at + 1, 2 * n_prot)
                    p_at += 1
                if p_at < n_prot and prot[2 * p_at] < j:
                    check_index(2 * p_at, 2 * n_prot)
                    if not (lc == LETTER and rc == LETTER):
                        continue                    # inside a protected span
                if lc == rc and (lc == LETTER or lc == DIGIT):
                    continue
                if lc == SPACELESS and rc == SPACELESS:
                    kind = K_SPACELESS
                else:
                    kind = K_PUNCT
            if n_keys and t.base[j - 1] == LETTER and (j == i or t.base[j] != LETTER) \
                    and (keys[n_keys] >> (lowered(t.cp[j - 1], lower) & 63)) & 1:
                # the end of a letter run [run_start, j): its learned suffixes
                after = t.cp[j] if j < i and t.cls[j] == OTHER else 0
                t.visits[1] += MAX_SUFFIX
                for k in range(MAX_SUFFIX, 0, -1):        # in text order
                    if j - k >= 0:
                        check_index(j - k, t.n)
                    if j - k <= run_start or t.cls[j - k] == MARK:
                        continue
                    if is_suffix(t.cp, j - k, j, after, lower, keys, n_keys):
                        if p_at < n_prot:
                            check_index(2 * p_at + 1, 2 * n_prot)
                        if not (p_at < n_prot and prot[2 * p_at] < j - k < prot[2 * p_at + 1]):
                            check_index(t.n_cands, t.cap)
                            t.left[t.n_cands] = j - k
                            t.pos[t.n_cands] = j - k
                            t.kind[t.n_cands] = K_SUFFIX
                            t.lchunk[t.n_cands] = <int32_t>t.n_chunks
                            t.rchunk[t.n_cands] = <int32_t>t.n_chunks
                            t.n_cands += 1
            if j < i and t.base[j] == LETTER and (t.base[j - 1] != LETTER):
                run_start = j
            if j < i:
                check_index(t.n_cands, t.cap)
                t.left[t.n_cands] = j
                t.pos[t.n_cands] = j
                t.kind[t.n_cands] = kind
                t.lchunk[t.n_cands] = <int32_t>t.n_chunks
                t.rchunk[t.n_cands] = <int32_t>t.n_chunks
                t.n_cands += 1
        t.n_chunks += 1


cdef inline uint64_t shape_hash(Text* t, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    """The hash of the symbols of text[a:b] (runs collapsed), LONG beyond
    MAX_SHAPE runs: the walk stops there."""
    cdef uint64_t h = 0, sym, last = 0xFFFFFFFFFFFFFFFFULL
    cdef Py_ssize_t i, n = 0
    cdef uint8_t k
    check(0 <= a and b <= t.n)
    for i in range(a, b):
        t.visits[2] += 1
        k = t.cls[i]
        if k == MARK:
            continue
        if k == LETTER:
            sym = 1 if t.cat[i] == CAT_LU or t.cat[i] == CAT_LT else (2 if t.cat[i] == CAT_LL else 3)
        elif k == SPACELESS:
            sym = 4
        elif k == DIGIT:
            sym = 5
        else:
            sym = <uint64_t>t.cp[i] + 256
        if sym != last:
            h = h * P + sym
            n += 1
            last = sym
            if n > MAX_SHAPE:
                return LONG
    return mix64(h ^ (<uint64_t>n << 48))


cdef int chunk_shapes(Text* t) except -1:
    """Each chunk's shape hash, once: a candidate's attributes read it, and
    walking the chunk for each of its candidates would be quadratic."""
    cdef Py_ssize_t ch
    t.cshape = <uint64_t*>malloc((t.n_chunks + 1) * sizeof(uint64_t))
    if t.cshape == NULL:
        raise MemoryError()
    with nogil:
        for ch in range(t.n_chunks):
            check_index(ch, t.cap)
            t.cshape[ch] = shape_hash(t, t.cstart[ch], t.cend[ch])
    return 0


cdef inline uint64_t chunk_hash(Text* t, Py_ssize_t a, Py_ssize_t b) noexcept nogil:
    if b - a > MAX_CHUNK:
        return LONG
    check(0 <= a and b <= t.n)
    return str_hash(t.cp, a, b)


cdef void features(Text* t, Py_ssize_t c, const uint32_t* lower, const uint64_t* seeds,
                   uint64_t* row) noexcept nogil:
    """The attribute row of candidate ``c`` (names: ATTRIBUTES of tok)."""
    check_index(c, t.n_cands)
    check_index(t.lchunk[c], t.n_chunks)
    check_index(t.rchunk[c], t.n_chunks)
    cdef Py_ssize_t a = t.left[c], b = t.pos[c], ls = t.cstart[t.lchunk[c]], re = t.cend[t.rchunk[c]]
    cdef Py_ssize_t i, x, y, lo13, hi14, left_run
    cdef uint64_t v[21]
    cdef int k
    cdef uint8_t kind = t.kind[c]
    # every read of the text below lies in [ls, re), checked by its condition
    check(0 <= ls and ls <= a and a <= b and b <= re and re <= t.n)
    check(t.cshape != NULL)
    v[0] = kind * 4 + (t.cgap[t.rchunk[c]] if kind == K_GAP else 0)
    v[1] = t.cp[a - 1] if a - 1 >= ls else NONE
    v[2] = t.cp[a - 2] if a - 2 >= ls else NONE
    v[3] = t.cp[a - 3] if a - 3 >= ls else NONE
    v[4] = t.cp[b] if b < re else NONE
    v[5] = t.cp[b + 1] if b + 1 < re else NONE
    v[6] = t.cp[b + 2] if b + 2 < re else NONE
    v[7] = t.cat[a - 1] if a - 1 >= ls else NONE
    v[8] = t.cat[a - 2] if a - 2 >= ls else NONE
    v[9] = t.cat[b] if b < re else NONE
    v[10] = t.cat[b + 1] if b + 1 < re else NONE
    # the letter-and-digit runs (lowercased) ending at a and starting at b
    x = a
    while x > ls and x > a - MAX_PART and (wordlike(t.base[x - 1])):
        x -= 1
    v[11] = low_hash(t.cp, x, a, lower) if x < a else NONE
    left_run = a - x
    y = b
    while y < re and y < b + MAX_PART and (wordlike(t.base[y])):
        y += 1
    v[12] = low_hash(t.cp, b, y, lower) if y > b else NONE
    lo13 = a - MAX_PART if a - MAX_PART > ls else ls
    hi14 = b + MAX_PART if b + MAX_PART < re else re
    v[13] = str_hash(t.cp, lo13, a)
    v[14] = str_hash(t.cp, b, hi14)
    v[15] = chunk_hash(t, t.cstart[t.rchunk[c]], re)
    v[16] = chunk_hash(t, ls, t.cend[t.lchunk[c]]) if kind == K_GAP else NONE
    v[17] = t.cshape[t.rchunk[c]]
    v[18] = t.cshape[t.lchunk[c]] if kind == K_GAP else NONE
    if kind == K_GAP:
        v[19] = 16
    else:
        v[19] = (b - ls if b - ls < 3 else 3) * 4 + (re - b if re - b < 3 else 3)
    # the word before the punctuation that ends the left part ("m" of "M.", "yahoo" of "Yahoo!")
    x = a
    while x > ls and x > a - 3 and t.base[x - 1] == OTHER:
        x -= 1
    i = x
    while i > ls and i > x - MAX_PART and wordlike(t.base[i - 1]):
        i -= 1
    v[20] = low_hash(t.cp, i, x, lower) if i < x and x < a else NONE
    # what this candidate read: the characters of its windows and chunks (a long chunk is not read)
    t.visits[3] += (1 + 2 * left_run + 2 * (y - b) + (a - lo13) + (hi14 - b) + (a - x) + 2 * (x - i)
                    + (re - t.cstart[t.rchunk[c]] if re - t.cstart[t.rchunk[c]] <= MAX_CHUNK else 0)
                    + (t.cend[t.lchunk[c]] - ls if kind == K_GAP and t.cend[t.lchunk[c]] - ls <= MAX_CHUNK else 0))
    for k in range(21):
        row[k] = mix64(v[k] ^ seeds[k])


cdef int load(Text* t, str text, const uint8_t* cat_table, const uint32_t* lower, const uint64_t* keys,
              Py_ssize_t n_keys, const int64_t* prot, Py_ssize_t n_prot) except -1:
    cdef int ukind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    text_alloc(t, len(text))
    with nogil:
        read_text(t, ukind, data, cat_table)
        scan(t, lower, keys, n_keys, prot, n_prot)
    return 0


cdef const int64_t* protected_of(object spans, Py_ssize_t* n, object keep) except? NULL:
    """Sorted (start, end) pairs of an optional (starts, ends) pair."""
    cdef const int64_t[:, ::1] view
    if spans is None:
        n[0] = 0
        return NULL
    starts, ends = spans
    pairs = np.ascontiguousarray(np.stack([np.asarray(starts, dtype=np.int64),
                                           np.asarray(ends, dtype=np.int64)], axis=1))
    pairs = pairs[np.argsort(pairs[:, 0], kind="stable")]
    keep.append(pairs)
    view = pairs
    n[0] = pairs.shape[0]
    if n[0] == 0:
        return NULL
    return &view[0, 0]


def candidates(str text, const uint8_t[::1] cat_table, const uint32_t[::1] lower,
               const uint64_t[::1] suffix_keys, protected=None):
    """(left ends, positions, kinds) of the candidates of ``text``
    (``protected``: optional (starts, ends) of spans kept whole)."""
    cdef Text t
    cdef Py_ssize_t n_prot, i
    keep = []
    cdef const int64_t* prot = protected_of(protected, &n_prot, keep)
    load(&t, text, &cat_table[0], &lower[0], &suffix_keys[0] if suffix_keys.shape[0] else NULL,
         n_keys_of(suffix_keys), prot, n_prot)
    try:
        m = t.n_cands
        left = np.empty(m, dtype=np.int64)
        pos = np.empty(m, dtype=np.int64)
        kind = np.empty(m, dtype=np.uint8)
        for i in range(m):
            left[i] = t.left[i]
            pos[i] = t.pos[i]
            kind[i] = t.kind[i]
        return left, pos, kind
    finally:
        text_free(&t)


def featurize(list texts, const uint8_t[::1] cat_table, const uint32_t[::1] lower,
              const uint64_t[::1] suffix_keys, const uint64_t[::1] seeds, list protected=None):
    """(attrs uint64[candidates, 20], bounds, kinds) of a batch of texts:
    each text's candidates in order."""
    cdef Py_ssize_t n = len(texts), i, c, total = 0
    cdef Text* ts = <Text*>malloc((n + 1) * sizeof(Text))
    cdef Py_ssize_t n_prot
    cdef const int64_t* prot
    cdef uint64_t[:, ::1] out
    cdef int64_t[::1] bv
    cdef uint8_t[::1] kv
    if ts == NULL:
        raise MemoryError()
    if seeds.shape[0] != N_ATTRIBUTES:
        raise ValueError("seeds: one per attribute")
    cdef Py_ssize_t loaded = 0
    keep = []
    bounds = np.zeros(n + 1, dtype=np.int64)
    bv = bounds
    try:
        for i in range(n):
            prot = protected_of(None if protected is None else protected[i], &n_prot, keep)
            load(&ts[i], texts[i], &cat_table[0], &lower[0],
                 &suffix_keys[0] if suffix_keys.shape[0] else NULL, n_keys_of(suffix_keys), prot, n_prot)
            loaded += 1
            chunk_shapes(&ts[i])
            total += ts[i].n_cands
            bv[i + 1] = total
        attrs = np.empty((total, N_ATTRIBUTES), dtype=np.uint64)
        kinds = np.empty(total, dtype=np.uint8)
        kv = kinds
        out = attrs
        with nogil:
            for i in range(n):
                for c in range(ts[i].n_cands):
                    features(&ts[i], c, &lower[0], &seeds[0], &out[bv[i] + c, 0])
                    kv[bv[i] + c] = ts[i].kind[c]
        return attrs, bounds, kinds
    finally:
        for i in range(loaded):
            text_free(&ts[i])
        free(ts)


def assemble(str text, const int32_t[::1] labels, const uint8_t[::1] cat_table, const uint32_t[::1] lower,
             const uint64_t[::1] suffix_keys, protected=None):
    """(token starts, token ends, sentence-start flags, word split
    positions) of ``text`` from its candidates' decoded labels; the first
    token and every token after a line break begin a sentence."""
    cdef Text t
    cdef Py_ssize_t n_prot, nt = 0, ns = 0
    cdef int64_t[::1] sv, ev, pv
    cdef uint8_t[::1] tv
    keep = []
    cdef const int64_t* prot = protected_of(protected, &n_prot, keep)
    load(&t, text, &cat_table[0], &lower[0], &suffix_keys[0] if suffix_keys.shape[0] else NULL,
         n_keys_of(suffix_keys), prot, n_prot)
    try:
        if labels.shape[0] != t.n_cands:
            raise ValueError(f"{labels.shape[0]} labels for {t.n_cands} candidates")
        starts = np.empty(t.n + 1, dtype=np.int64)
        ends = np.empty(t.n + 1, dtype=np.int64)
        sent = np.zeros(t.n + 1, dtype=np.uint8)
        splits = np.empty(t.n + 1, dtype=np.int64)
        sv = starts
        ev = ends
        tv = sent
        pv = splits
        _assemble(&t, &labels[0] if labels.shape[0] else NULL, &sv[0], &ev[0], &tv[0], &pv[0], &nt, &ns, t.n + 1)
        return starts[:nt], ends[:nt], sent[:nt].view(np.bool_), splits[:ns]
    finally:
        text_free(&t)


cdef void _assemble(Text* t, const int32_t* labels, int64_t* starts, int64_t* ends,
                    uint8_t* sent, int64_t* splits, Py_ssize_t* n_tokens,
                    Py_ssize_t* n_splits, Py_ssize_t room) noexcept nogil:
    """``room``: the entries of starts, ends, sent and splits (debug checks)."""
    cdef Py_ssize_t ch, c = 0, nt = 0, ns = 0
    cdef int32_t lab
    t.visits[4] += t.n_chunks + t.n_cands
    for ch in range(t.n_chunks):
        check_index(nt, room)
        starts[nt] = t.cstart[ch]
        sent[nt] = t.cgap[ch] == 0 or t.cgap[ch] == 3
        if c < t.n_cands and t.kind[c] == K_GAP and t.pos[c] == t.cstart[ch]:
            check_index(c, t.n_cands)
            if labels[c] == 3:
                sent[nt] = 1
            c += 1
        nt += 1
        while c < t.n_cands and t.pos[c] < t.cend[ch]:
            check_index(c, t.n_cands)
            lab = labels[c]
            if lab == 1 or lab == 3:
                check_index(nt, room)
                ends[nt - 1] = t.pos[c]
                starts[nt] = t.pos[c]
                sent[nt] = lab == 3
                nt += 1
            elif lab == 2:
                check_index(ns, room)
                splits[ns] = t.pos[c]
                ns += 1
            c += 1
        check_index(nt - 1, room)
        ends[nt - 1] = t.cend[ch]
    n_tokens[0] = nt
    n_splits[0] = ns


def work(str text, const uint8_t[::1] cat_table, const uint32_t[::1] lower,
         const uint64_t[::1] suffix_keys, protected=None):
    """The work of featurizing and assembling ``text``: a dict of the
    characters and candidates each pass visits (names: PASS_NAMES), with
    ``chars`` and ``candidates``.  Linear passes visit a bounded number
    per character: tests compare the counts of texts of two sizes."""
    cdef Text t
    cdef Py_ssize_t n_prot, c, nt = 0, ns = 0
    cdef uint64_t[21] row
    cdef uint64_t[21] seeds
    cdef int64_t[::1] sv, ev, pv
    cdef uint8_t[::1] tv
    cdef int32_t[::1] lv
    for c in range(21):
        seeds[c] = 0
    keep = []
    cdef const int64_t* prot = protected_of(protected, &n_prot, keep)
    load(&t, text, &cat_table[0], &lower[0], &suffix_keys[0] if suffix_keys.shape[0] else NULL,
         n_keys_of(suffix_keys), prot, n_prot)
    try:
        chunk_shapes(&t)
        with nogil:
            for c in range(t.n_cands):
                features(&t, c, &lower[0], &seeds[0], &row[0])
        labels = np.zeros(t.n_cands + 1, dtype=np.int32)
        starts = np.empty(t.n + 1, dtype=np.int64)
        ends = np.empty(t.n + 1, dtype=np.int64)
        sent = np.zeros(t.n + 1, dtype=np.uint8)
        splits = np.empty(t.n + 1, dtype=np.int64)
        lv, sv, ev, tv, pv = labels, starts, ends, sent, splits
        _assemble(&t, &lv[0], &sv[0], &ev[0], &tv[0], &pv[0], &nt, &ns, t.n + 1)
        out = {name: t.visits[k] for k, name in enumerate(PASS_NAMES)}
        out["chars"] = t.n
        out["candidates"] = t.n_cands
        return out
    finally:
        text_free(&t)


def candidate_kinds():
    """The names of the candidate kinds, by index."""
    return KIND_NAMES


cdef extern from "Python.h":
    object PyUnicode_Substring(object, Py_ssize_t, Py_ssize_t)


cdef inline uint64_t read_low_hash(int ukind, void* data, Py_ssize_t a, Py_ssize_t b,
                                   const uint32_t* lower) noexcept:
    """:func:`low_hash` of text[a:b] read from the string itself."""
    cdef uint64_t h = 0
    cdef Py_ssize_t i
    for i in range(a, b):
        h = h * P + lowered(PyUnicode_READ(ukind, data, i), lower)
    return mix64(h ^ (<uint64_t>(b - a) << 48))


cdef inline bint member(uint64_t h, const uint64_t* keys, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t lo = 0, hi = n, mid
    while lo < hi:
        mid = (lo + hi) // 2
        if keys[mid] < h:
            lo = mid + 1
        else:
            hi = mid
    return lo < n and keys[lo] == h


cdef list build_words(str text, int ukind, void* data, const int64_t* starts, const int64_t* ends,
                      const uint8_t* sent, Py_ssize_t n, const int64_t* splits, Py_ssize_t ns, bint offsets,
                      const uint32_t* lower, const uint64_t* exp_keys, Py_ssize_t n_exp, object expanded):
    cdef Py_ssize_t i, s = 0, a, b, x
    out = []
    sentence = None
    for i in range(n):
        check_index(i, n)
        if sent[i] or sentence is None:
            sentence = []
            out.append(sentence)
        a = starts[i]
        b = ends[i]
        while s < ns and splits[s] <= a:
            check_index(s, ns)
            s += 1
        if n_exp and not (s < ns and splits[s] < b) and member(read_low_hash(ukind, data, a, b, lower),
                                                                exp_keys, n_exp):
            sentence.extend(expanded(PyUnicode_Substring(text, a, b), a, b, offsets))
            continue
        while s < ns and splits[s] < b:
            check_index(s, ns)
            x = splits[s]
            if offsets:
                sentence.append((PyUnicode_Substring(text, a, x), a, x))
            else:
                sentence.append(PyUnicode_Substring(text, a, x))
            a = x
            s += 1
        if offsets:
            sentence.append((PyUnicode_Substring(text, a, b), a, b))
        else:
            sentence.append(PyUnicode_Substring(text, a, b))
    return out


def expansion_key(str form, const uint32_t[::1] lower):
    """The key of an expansion's form for :func:`words_batch`: the hash of
    the form lowercased by the table."""
    cdef Py_ssize_t n = len(form), i
    cdef uint64_t h = 0
    for i in range(n):
        h = h * P + lowered(ord(form[i]), &lower[0])
    return mix64(h ^ (<uint64_t>n << 48))


def words_batch(list texts, const int32_t[::1] labels, const int64_t[::1] bounds,
                const uint8_t[::1] cat_table, const uint32_t[::1] lower, const uint64_t[::1] suffix_keys,
                bint offsets, const uint64_t[::1] expansion_keys=None, expanded=None, list protected=None):
    """The sentences of words of each text of a batch (as
    ``Tokenizer.tokenize`` gives them, without expansions: a token's words
    cut at its split positions; with ``offsets`` each word is (word, start,
    end)), from the batch's decoded labels (text i's candidates are
    labels[bounds[i]:bounds[i + 1]]): the whole path from labels to words in
    one call, the scan and assembly of every text without the GIL.  A token
    without splits whose :func:`expansion_key` is among the sorted
    ``expansion_keys`` gives the items of ``expanded(form, start, end,
    offsets)``.  ``protected``: None, or per text None or the (starts,
    ends) of its protected spans, as the labels were decoded with."""
    cdef Py_ssize_t n = len(texts), i, longest = 0, total = 0, bad = -1, nt, ns
    cdef Text t
    cdef Py_ssize_t n_exp = 0 if expansion_keys is None else expansion_keys.shape[0]
    cdef const uint64_t* exp_keys = &expansion_keys[0] if n_exp else NULL
    cdef const uint64_t* keys = &suffix_keys[0] if suffix_keys.shape[0] else NULL
    cdef Py_ssize_t n_keys = n_keys_of(suffix_keys)
    cdef int* ukind
    cdef void** data
    cdef int64_t* lengths
    cdef int64_t* tok_at       # per text: its first token in the buffers, then the end
    cdef int64_t* split_at
    cdef int64_t* starts
    cdef int64_t* ends
    cdef int64_t* splits
    cdef uint8_t* sent
    cdef const int64_t** prots
    cdef Py_ssize_t* n_prots
    if n_exp and expanded is None:
        raise ValueError("expansion keys without the function that expands")
    if bounds.shape[0] != n + 1 or bounds[n] != labels.shape[0]:
        raise ValueError("the bounds do not match the texts and labels")
    if protected is not None and len(protected) != n:
        raise ValueError("protected: one entry per text")
    for i in range(n):
        if not isinstance(texts[i], str):
            raise TypeError(f"text {i} is not a str")
        total += len(texts[i])
        if len(texts[i]) > longest:
            longest = len(texts[i])
    text_alloc(&t, longest)
    ukind = <int*>malloc((n + 1) * sizeof(int))
    data = <void**>malloc((n + 1) * sizeof(void*))
    lengths = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    tok_at = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    split_at = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    starts = <int64_t*>malloc((total + n + 1) * sizeof(int64_t))
    ends = <int64_t*>malloc((total + n + 1) * sizeof(int64_t))
    splits = <int64_t*>malloc((total + n + 1) * sizeof(int64_t))
    sent = <uint8_t*>malloc(total + n + 1)
    prots = <const int64_t**>malloc((n + 1) * sizeof(int64_t*))
    n_prots = <Py_ssize_t*>malloc((n + 1) * sizeof(Py_ssize_t))
    keep = []
    try:
        if not (ukind and data and lengths and tok_at and split_at and starts and ends and splits and sent
                and prots and n_prots):
            raise MemoryError()
        for i in range(n):
            text = texts[i]
            ukind[i] = PyUnicode_KIND(text)
            data[i] = PyUnicode_DATA(text)
            lengths[i] = len(text)
            prots[i] = protected_of(None if protected is None else protected[i], &n_prots[i], keep)
        tok_at[0] = 0
        split_at[0] = 0
        with nogil:
            for i in range(n):
                t.n = lengths[i]
                read_text(&t, ukind[i], data[i], &cat_table[0])
                scan(&t, &lower[0], keys, n_keys, prots[i], n_prots[i])
                if bounds[i + 1] - bounds[i] != t.n_cands:
                    bad = i
                    break
                _assemble(&t, &labels[0] + bounds[i] if labels.shape[0] else NULL, starts + tok_at[i],
                          ends + tok_at[i], sent + tok_at[i], splits + split_at[i], &nt, &ns,
                          total + n + 1 - (tok_at[i] if tok_at[i] > split_at[i] else split_at[i]))
                tok_at[i + 1] = tok_at[i] + nt
                split_at[i + 1] = split_at[i] + ns
        if bad >= 0:
            raise ValueError(f"text {bad}: {bounds[bad + 1] - bounds[bad]} labels for a text of other candidates")
        out = []
        for i in range(n):
            out.append(build_words(texts[i], ukind[i], data[i], starts + tok_at[i], ends + tok_at[i],
                                   sent + tok_at[i], tok_at[i + 1] - tok_at[i], splits + split_at[i],
                                   split_at[i + 1] - split_at[i], offsets, &lower[0], exp_keys, n_exp, expanded))
        return out
    finally:
        text_free(&t)
        free(ukind); free(data); free(lengths); free(tok_at); free(split_at)
        free(starts); free(ends); free(splits); free(sent); free(prots); free(n_prots)
