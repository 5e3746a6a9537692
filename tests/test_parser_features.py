"""The parser's compiled feature extraction (``state_features`` in
fasttag/_core/parsing.pyx) against a slow Python reference written from
its definition: an arc-hybrid state kept as plain lists and dicts, the
state's words and children found by searching its arcs, and every template
hashed one ``hash_combine`` at a time.  Any change to the compiled feature
set (a template, its order, an attribute, a constant) fails here: change
the reference with it, and the model format's FEATURE_SET with both."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fasttag._core import parsing
from fasttag._core.weights import combine

M64 = (1 << 64) - 1
#: The attribute values of a missing word and of the root (attribute ``a`` adds ``a``).
NONE_VALUE = 0x6A09E667F3BCC908
ROOT_VALUE = 0xBB67AE8584CAA73B
#: The label value of a missing child.
NO_CHILD_LABEL = 0x3C6EF372FE94F82B
#: Distances past this one read as this one.
MAX_DISTANCE = 10
ATTRIBUTES = ("form", "upos", "xpos", "feats", "lemma", "suffix", "case")

#: Every template in the order of the keys, each (its id, the values it joins).  A value is
#: "WORD.ATTRIBUTE" (an attribute of a word of the state), "label(WORD)" (a child's label),
#: "n_left(WORD)" / "n_right(WORD)" (valencies), "left_set(WORD)" / "right_set(WORD)" (label
#: sets), "dist", or a pair (a, b) hashed as hash_combine(a, b) before it joins.
TEMPLATES = [
    # unigrams of the stack and the buffer
    (1, "s0.form"), (2, "s0.upos"), (3, "s0.form", "s0.upos"), (4, "s0.xpos"), (5, "s0.upos", "s0.feats"),
    (6, "s0.lemma"), (7, "s0.upos", "s0.suffix"),
    (8, "s1.form"), (9, "s1.upos"), (10, "s1.form", "s1.upos"), (11, "s1.xpos"), (12, "s1.upos", "s1.feats"),
    (13, "s1.lemma"), (14, "s2.upos"), (15, "s2.form"),
    (16, "b0.form"), (17, "b0.upos"), (18, "b0.form", "b0.upos"), (19, "b0.xpos"), (20, "b0.upos", "b0.feats"),
    (21, "b0.lemma"), (22, "b0.upos", "b0.suffix"),
    (23, "b1.form"), (24, "b1.upos"), (25, "b1.form", "b1.upos"), (26, "b1.upos", "b1.feats"),
    (27, "b2.upos"), (28, "b2.form"), (29, "b3.upos"),
    # pairs
    (30, "s0.form", "s0.upos", ("b0.form", "b0.upos")), (31, "s0.form", "s0.upos", "b0.form"),
    (32, "s0.form", "b0.form", "b0.upos"), (33, "s0.form", "s0.upos", "b0.upos"),
    (34, "s0.upos", "b0.form", "b0.upos"), (35, "s0.form", "b0.form"), (36, "s0.upos", "b0.upos"),
    (37, "b0.upos", "b1.upos"), (38, "s0.upos", "s1.upos"), (39, "s0.form", "s1.form"),
    (40, "s0.form", "s1.upos"), (41, "s0.upos", "s1.form"), (42, "s1.upos", "b0.upos"),
    (43, "s0.feats", "b0.feats"), (44, "s0.feats", "s1.feats"), (45, "s0.upos", "b0.feats"),
    (46, "s0.feats", "b0.upos"), (47, "s0.lemma", "b0.lemma"), (48, "s0.lemma", "s1.lemma"),
    # trigrams
    (49, "b0.upos", "b1.upos", "b2.upos"), (50, "s0.upos", "b0.upos", "b1.upos"),
    (51, "s1.upos", "s0.upos", "b0.upos"), (52, "s2.upos", "s1.upos", "s0.upos"),
    (53, "s0.upos", "s0l1.upos", "b0.upos"), (54, "s0.upos", "s0r1.upos", "b0.upos"),
    (55, "s0.upos", "b0.upos", "b0l1.upos"), (56, "s1.upos", "s0.upos", "s0l1.upos"),
    (57, "s1.upos", "s0.upos", "s0r1.upos"), (58, "s1.upos", "s1r1.upos", "s0.upos"),
    (59, "s0.upos", "s0l1.upos", "s0l2.upos"), (60, "s0.upos", "s0r1.upos", "s0r2.upos"),
    (61, "s1.upos", "s1r1.upos", "s1r2.upos"), (62, "b0.upos", "b0l1.upos", "b0l2.upos"),
    # distance and valency
    (63, "s0.form", "dist"), (64, "s0.upos", "dist"), (65, "b0.form", "dist"), (66, "b0.upos", "dist"),
    (67, "s0.form", "b0.form", "dist"), (68, "s0.upos", "b0.upos", "dist"),
    (69, "s0.form", "n_right(s0)"), (70, "s0.upos", "n_right(s0)"), (71, "s0.form", "n_left(s0)"),
    (72, "s0.upos", "n_left(s0)"), (73, "b0.form", "n_left(b0)"), (74, "b0.upos", "n_left(b0)"),
    # children and their labels
    (75, "s0l1.upos", "label(s0l1)", "s0.upos"), (76, "s0r1.upos", "label(s0r1)", "s0.upos"),
    (77, "b0l1.upos", "label(b0l1)", "b0.upos"), (78, "label(s0l1)", "label(s0l2)", "s0.upos"),
    (79, "label(s0r1)", "label(s0r2)", "s0.upos"), (80, "label(b0l1)", "label(b0l2)", "b0.upos"),
    (81, "s1l1.upos", "label(s1l1)", ("s1.upos", "label(s1r1)")),
    # label sets
    (82, "s0.upos", "right_set(s0)", "left_set(s0)"), (83, "b0.upos", "left_set(b0)", "n_left(b0)"),
    (84, "s1.upos", "n_right(s1)", "s0.upos"),
    # case
    (85, "s0.upos", "s0.case"), (86, "b0.upos", "b0.case"), (87, "s1.upos", "s1.case"),
    (88, "s0.case", "b0.upos", ("s0.upos", "b0.case")), (89, "s0.case", "s1.upos", ("s0.upos", "s1.case")),
    (90, "s0.case", "b0.form", "b0.upos"),
]


def mix64(x):
    """The splitmix64 finaliser (fasttag/_core/hashing.pxd)."""
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def hash_combine(a, b):
    """hashing.pxd's hash_combine with 64-bit wrap-around."""
    return mix64(a ^ ((mix64(b) + 0x9E3779B97F4A7C15 + ((a << 6) & M64) + (a >> 2)) & M64))


class State:
    """The arc-hybrid state as parsing.pyx defines it, kept plainly: words
    0..n-1, the root is n, at the end of the buffer."""

    def __init__(self, n):
        self.n, self.stack, self.b0, self.heads, self.labels = n, [], 0, {}, {}

    def valid(self, c, root_label):
        """Whether transition ``c`` applies in decoding (one root)."""
        label = (c - 1) // 2
        if c == 0:
            return self.b0 < self.n
        if c % 2 == 1:                                          # LEFT: s0 <- b0
            if not self.stack:
                return False
            if self.b0 == self.n:
                return len(self.stack) == 1 and (root_label < 0 or label == root_label)
            return label != root_label
        return len(self.stack) >= 2 and label != root_label     # RIGHT: s1 -> s0

    def apply(self, c):
        if c == 0:
            self.stack.append(self.b0)
            self.b0 += 1
            return
        dep = self.stack.pop()
        self.heads[dep] = self.b0 if c % 2 == 1 else self.stack[-1]
        self.labels[dep] = (c - 1) // 2

    def word(self, name):
        """The word a name of the templates means (s0, b1, s0l2, ...), -1 for none."""
        if name[0] == "s" and len(name) == 2:
            k = int(name[1])
            return self.stack[-1 - k] if k < len(self.stack) else -1
        if name[0] == "b" and len(name) == 2:
            k = int(name[1])
            if k == 0:
                return self.b0
            return self.b0 + k if self.b0 + k < self.n else -1
        head = self.word(name[:2])
        if head < 0:
            return -1
        side, rank = name[2], int(name[3])
        if side == "l":
            children = sorted(d for d, h in self.heads.items() if h == head and d < head)
            return children[rank - 1] if len(children) >= rank else -1
        children = sorted((d for d, h in self.heads.items() if h == head and d > head), reverse=True)
        return children[rank - 1] if len(children) >= rank else -1

    def left(self, w):
        return [d for d, h in self.heads.items() if h == w and d < w]

    def right(self, w):
        return [d for d, h in self.heads.items() if h == w and d > w]


def value(state, attrs, name):
    """A template's value in ``state``."""
    if isinstance(name, tuple):
        return hash_combine(value(state, attrs, name[0]), value(state, attrs, name[1]))
    if name == "dist":
        s0 = state.word("s0")
        return 0 if s0 < 0 else min(state.b0 - s0, MAX_DISTANCE)
    if "(" in name:
        fn, w = name[:-1].split("(")
        w = state.word(w)
        if fn == "label":
            return NO_CHILD_LABEL if w < 0 else state.labels[w] + 1
        if w < 0 or w == state.n:             # no word, or the root: no valency, no label set
            return 0
        if fn in ("n_left", "n_right"):
            return len(state.left(w) if fn == "n_left" else state.right(w))
        bits = 0
        for d in (state.left(w) if fn == "left_set" else state.right(w)):
            bits |= 1 << (state.labels[d] & 63)
        return bits
    word, attribute = name.split(".")
    w, a = state.word(word), ATTRIBUTES.index(attribute)
    if w < 0:
        return (NONE_VALUE + a) & M64
    if w == state.n:
        return (ROOT_VALUE + a) & M64
    return int(attrs[w, a])


def reference_features(state, attrs):
    out = []
    for template, *parts in TEMPLATES:
        key = template
        for part in parts:
            key = hash_combine(key, value(state, attrs, part))
        out.append(key)
    return out


def test_the_reference_describes_the_compiled_feature_set():
    assert parsing.N_FEATURES == len(TEMPLATES) and [t[0] for t in TEMPLATES] == list(range(1, len(TEMPLATES) + 1))
    assert parsing.N_ATTRS == len(ATTRIBUTES) and tuple(parsing.ATTRIBUTES) == ATTRIBUTES


@given(st.lists(st.tuples(st.integers(0, M64), st.integers(0, M64)), min_size=1, max_size=50))
def test_hash_combine_is_the_compiled_one(pairs):
    assert [hash_combine(a, b) for a, b in pairs] == [combine(a, b) for a, b in pairs]


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_features_after_random_transitions_are_the_references(data):
    """At every state of a random valid decoding, from the first to the
    final one, the compiled keys are the reference's (labels past 63 too:
    their sets keep ``label & 63``)."""
    n = data.draw(st.integers(1, 16), label="words")
    n_labels = data.draw(st.sampled_from([1, 2, 3, 70]), label="labels")
    root_label = data.draw(st.sampled_from([-1, 0, n_labels - 1]), label="root label")
    if root_label >= 0 and n_labels == 1:
        n_labels = 2                    # another label, for the arcs that are not the root's
    n_classes = 1 + 2 * n_labels
    values = st.one_of(st.integers(0, M64), st.sampled_from([0, 1, NONE_VALUE, ROOT_VALUE + 1, M64]))
    attrs = np.array(data.draw(st.lists(st.lists(values, min_size=parsing.N_ATTRS, max_size=parsing.N_ATTRS),
                                        min_size=n, max_size=n), label="attributes"), dtype=np.uint64)
    state, history = State(n), []
    while True:
        got = parsing.features_after(attrs, np.array(history, dtype=np.int32), n_classes, root_label)
        assert got.dtype == np.uint64 and got.tolist() == reference_features(state, attrs), \
            f"after {history} (labels {n_labels}, root label {root_label})"
        valid = [c for c in range(n_classes) if state.valid(c, root_label)]
        if not valid:                   # final: every word attached
            assert len(history) == 2 * n and len(state.heads) == n
            break
        c = data.draw(st.sampled_from(valid), label="transition")
        state.apply(c)
        history.append(c)


def test_features_after_refuses_an_invalid_history():
    attrs = np.zeros((2, parsing.N_ATTRS), dtype=np.uint64)
    with pytest.raises(ValueError, match="not valid"):
        parsing.features_after(attrs, np.array([1], dtype=np.int32), 5, 0)       # LEFT on an empty stack
