"""Dependency-tree utilities (fasttag.text.trees): hand-made trees with known
answers, the fast functions against slow references written straight from
the definitions on random trees, and the pseudo-projective round trip
measured on the UD treebanks beside the repository."""
import random
import time

import pytest
from hypothesis import given, settings, strategies as st

from fasttag.text.trees import (LIFT, check_tree, deprojectivize, is_projective, lifted_labels, plain_label,
                                projectivize)


# ---------------------------------------------------------------- references

def ancestors(word, heads):
    """The heads above ``word`` up to and including the root 0."""
    found = []
    while word != 0:
        word = heads[word - 1]
        found.append(word)
    return found


def subtree(word, heads):
    """``word`` and every word under it."""
    return {w for w in range(1, len(heads) + 1) if w == word or word in ancestors(w, heads)}


def brute_nonprojective(heads):
    """The words whose arc is non-projective, by the definition: some word
    strictly between the arc's ends is not under its head."""
    found = []
    for d, h in enumerate(heads, 1):
        lo, hi = min(h, d), max(h, d)
        if any(h not in ancestors(k, heads) for k in range(lo + 1, hi)):
            found.append(d)
    return found


def brute_is_projective(heads):
    return not brute_nonprojective(heads)


def reference_projectivize(heads, labels):
    """Nivre and Nilsson's transform as spaCy's nonproj.pyx writes it."""
    proj = list(heads)
    while True:
        arcs = brute_nonprojective(proj)
        if not arcs:
            break
        word = min(arcs, key=lambda d: abs(proj[d - 1] - d))   # min keeps the first of the shortest
        proj[word - 1] = proj[proj[word - 1] - 1]
    return proj, [f"{label}{LIFT}{labels[h - 1]}" if p != h else label
                  for label, h, p in zip(labels, heads, proj)]


def reference_deprojectivize(heads, labels):
    """The inverse, searching level by level with children recomputed from
    the current heads each time."""
    hs, out = list(heads), list(labels)
    n = len(hs)
    for word in range(1, n + 1):
        if LIFT not in labels[word - 1]:
            continue
        own, wanted = labels[word - 1].split(LIFT, 1)
        out[word - 1] = own
        level, found = [hs[word - 1]], None
        while level and found is None:
            below = []
            for q in level:
                for c in range(1, n + 1):
                    if hs[c - 1] == q and c != word:
                        if out[c - 1].split(LIFT)[0] == wanted:
                            found = c
                            break
                        below.append(c)
                if found is not None:
                    break
            level = below
        if found is not None:
            hs[word - 1] = found
    return hs, out


# ---------------------------------------------------------------- random trees

def random_tree(draw_index, n, order):
    """Heads of a tree: the first word of ``order`` is the root word, each
    next one hangs from a word before it in ``order``."""
    heads = [0] * n
    for i, w in enumerate(order[1:], 1):
        heads[w - 1] = order[draw_index(i)]
    return heads


@st.composite
def any_trees(draw, max_words=14):
    n = draw(st.integers(1, max_words))
    order = draw(st.permutations(range(1, n + 1)))
    return random_tree(lambda i: draw(st.integers(0, i - 1)), n, order)


@st.composite
def projective_trees(draw, max_words=14):
    """Every projective tree can come out: each subtree is a span, and a
    word's dependents' subtrees split the rest of its span into spans."""
    n = draw(st.integers(1, max_words))
    heads = [0] * n

    def hang(lo, hi, parent):                  # words lo..hi, as subtrees of parent
        start = lo
        while start <= hi:
            end = draw(st.integers(start, hi))
            root = draw(st.integers(start, end))
            heads[root - 1] = parent
            hang(start, root - 1, root)
            hang(root + 1, end, root)
            start = end + 1

    root = draw(st.integers(1, n))
    hang(1, root - 1, root)
    hang(root + 1, n, root)
    return heads


trees = st.one_of(any_trees(), projective_trees())
LABELS = ["nsubj", "obj", "nmod", "nmod:poss", "conj"]


@st.composite
def labelled_trees(draw, labels=LABELS):
    heads = draw(trees)
    return heads, draw(st.lists(st.sampled_from(labels), min_size=len(heads), max_size=len(heads)))


# ---------------------------------------------------------------- hand-made trees

# "A hearing is scheduled on the issue today ." with "on the issue" under "hearing".
HEARING_HEADS = [2, 4, 4, 0, 7, 7, 2, 4, 4]
HEARING_LABELS = ["det", "nsubj:pass", "aux:pass", "root", "case", "det", "nmod", "obl:tmod", "punct"]


def test_the_hearing_is_lifted_once_and_put_back():
    assert not is_projective(HEARING_HEADS)
    heads, labels = projectivize(HEARING_HEADS, HEARING_LABELS)
    assert heads == [2, 4, 4, 0, 7, 7, 4, 4, 4]
    assert labels == ["det", "nsubj:pass", "aux:pass", "root", "case", "det", "nmod||nsubj:pass", "obl:tmod",
                      "punct"]
    assert is_projective(heads)
    assert lifted_labels(labels) == ["nmod||nsubj:pass"]
    assert deprojectivize(heads, labels) == (HEARING_HEADS, HEARING_LABELS)


def test_a_projective_tree_comes_back_unchanged_as_new_lists():
    heads = [2, 0, 4, 2, 2]
    labels = ["nsubj", "root", "det", "obj", "punct"]
    proj_heads, proj_labels = projectivize(heads, labels)
    assert (proj_heads, proj_labels) == (heads, labels)
    assert proj_heads is not heads and proj_labels is not labels
    assert deprojectivize(heads, labels) == (heads, labels)


def test_a_word_lifted_twice_is_labelled_once_with_its_first_head():
    # 2 hangs from 5, 5 from 4, 4 and 3 from the root word 1: 2 -> 5 crosses 3, and so does 2 -> 4.
    heads = [0, 5, 1, 1, 4]
    labels = ["root", "obj", "advmod", "xcomp", "ccomp"]
    proj_heads, proj_labels = projectivize(heads, labels)
    assert proj_heads == [0, 1, 1, 1, 4]
    assert proj_labels == ["root", "obj||ccomp", "advmod", "xcomp", "ccomp"]
    assert deprojectivize(proj_heads, proj_labels) == (heads, labels)


def test_the_shortest_arc_is_lifted_first():
    # 3 -> 1 (length 2) and 1 -> 4 (length 3) both cross the root word 2.  Lifting 1 first leaves 1 -> 4
    # crossing, so 4 goes up to 2 as well; lifting 4 first would leave it on 3.
    heads = [3, 0, 2, 1]
    labels = ["a", "root", "b", "c"]
    assert brute_nonprojective(heads) == [1, 4]
    assert projectivize(heads, labels) == ([2, 0, 2, 2], ["a||b", "root", "b", "c||a"])


def test_of_equally_short_arcs_the_one_whose_dependent_comes_first_is_lifted():
    # 5 -> 2 and 1 -> 4 both span two words and cross the root word 3.  spaCy lifts 2 first (the
    # first dependent), after which 4 goes up to 3; lifting 1 -> 4 first (its left end comes first)
    # would leave 4 on 5.
    heads = [2, 5, 0, 1, 3]
    labels = ["a", "b", "root", "c", "d"]
    assert brute_nonprojective(heads) == [2, 4]
    assert projectivize(heads, labels) == ([2, 3, 0, 3, 3], ["a", "b||d", "root", "c||a", "d"])
    assert deprojectivize(*projectivize(heads, labels)) == (heads, labels)


def test_a_label_that_already_holds_the_delimiter_is_refused():
    with pytest.raises(ValueError, match="word 2"):
        projectivize([0, 1], ["root", "nmod||obj"])


def test_lengths_must_agree():
    with pytest.raises(ValueError, match="labels"):
        projectivize([0, 1], ["root"])
    with pytest.raises(ValueError, match="labels"):
        deprojectivize([0, 1], ["root"])


def test_plain_label_keeps_the_subtype_and_drops_the_decoration():
    assert plain_label("nmod:poss||nsubj:pass") == "nmod:poss"
    assert plain_label("nmod:poss") == "nmod:poss"
    assert lifted_labels(["a", "b||c", "d"]) == ["b||c"]


@pytest.mark.parametrize("heads, labels, new_head", [
    # a "conj" one level down comes before a deeper one under an earlier sibling (breadth first)
    ([0, 1, 1, 3, 1], ["root", "obj||conj", "nsubj", "conj", "conj"], 5),
    # of two at the same depth, the one under the earlier word (a queue, not a stack)
    ([0, 1, 1, 3, 1, 5], ["root", "obj||conj", "nsubj", "conj", "nsubj", "conj"], 4),
    # not the word's own dependent, though it is reached first
    ([0, 1, 2, 1, 4], ["root", "obj||conj", "conj", "nsubj", "conj"], 5),
    # a word whose own label is still decorated matches by its plain part
    ([0, 1, 1], ["root", "obj||conj", "conj||nsubj"], 3),
])
def test_deprojectivize_searches_breadth_first_outside_the_word(heads, labels, new_head):
    back_heads, back_labels = deprojectivize(heads, labels)
    assert back_heads[1] == new_head
    assert back_labels == [plain_label(label) for label in labels]
    check_tree(back_heads)


def test_deprojectivize_leaves_a_word_whose_head_label_is_nowhere():
    assert deprojectivize([0, 1, 1], ["root", "obj", "nmod||xcomp"]) == ([0, 1, 1], ["root", "obj", "nmod"])


@pytest.mark.parametrize("heads, message", [
    ([2, 3, 2, 0], "word 1 does not reach the root: its heads lead into the cycle 2 -> 3 -> 2"),
    ([0, 3, 4, 2], "word 2 is on a cycle of heads: 2 -> 3 -> 4 -> 2"),
    ([0, 2], "word 2 is its own head"),
    ([2, 1], "word 1 is on a cycle of heads: 1 -> 2 -> 1"),
    ([0, 1, 0, 0], "word 3 is a second root: words 1 and 3 are both headed by 0"),
    ([0, 5, 1], "word 2 has head 5, outside 0..3"),
    ([0, 1, -1], "word 3 has head -1, outside 0..3"),
    ([0, 1.5], "word 2 has head 1.5, not an integer"),
    ([], "an empty sentence"),
])
def test_check_tree_names_the_first_word_at_fault(heads, message):
    with pytest.raises(ValueError) as caught:
        check_tree(heads)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)
    for function in (is_projective, lambda h: projectivize(h, ["x"] * len(h)),
                     lambda h: deprojectivize(h, ["x"] * len(h))):
        with pytest.raises(ValueError):
            function(heads)


def test_check_tree_accepts_a_tree():
    assert check_tree(HEARING_HEADS) is None
    assert check_tree([0]) is None


# ---------------------------------------------------------------- against the references

@settings(max_examples=400)
@given(trees)
def test_is_projective_agrees_with_the_definition(heads):
    assert is_projective(heads) == brute_is_projective(heads)


@settings(max_examples=200)
@given(projective_trees())
def test_the_projective_generator_makes_projective_trees(heads):
    check_tree(heads)
    assert is_projective(heads) and brute_is_projective(heads)


@settings(max_examples=300)
@given(labelled_trees())
def test_projectivize_properties(tree):
    heads, labels = tree
    kept = (list(heads), list(labels))
    proj_heads, proj_labels = projectivize(heads, labels)
    assert (heads, labels) == kept                                    # the input is untouched
    assert (proj_heads, proj_labels) == reference_projectivize(heads, labels)
    check_tree(proj_heads)
    assert brute_is_projective(proj_heads) and is_projective(proj_heads)
    assert proj_heads.index(0) == heads.index(0)                      # the same root word
    for d, (h, p) in enumerate(zip(heads, proj_heads), 1):
        assert p == h or p in ancestors(h, heads)
        assert proj_labels[d - 1] == (labels[d - 1] if p == h else f"{labels[d - 1]}{LIFT}{labels[h - 1]}")
    if brute_is_projective(heads):
        assert (proj_heads, proj_labels) == (heads, labels)


@settings(max_examples=300)
@given(labelled_trees())
def test_the_round_trip_is_a_tree_with_the_original_labels(tree):
    heads, labels = tree
    proj = projectivize(heads, labels)
    back_heads, back_labels = deprojectivize(*proj)
    check_tree(back_heads)
    assert back_labels == labels
    assert (back_heads, back_labels) == reference_deprojectivize(*proj)
    arcs = brute_nonprojective(heads)
    if len(arcs) == 1:
        # One crossing arc: only its word is lifted, and comes back when its first head's label is
        # the only one of its kind where the search looks.
        (word,) = arcs
        h = heads[word - 1]
        lifted_to = proj[0][word - 1]
        assert [d for d in range(1, len(heads) + 1) if proj[0][d - 1] != heads[d - 1]] == [word]
        searched = subtree(lifted_to, proj[0]) - subtree(word, proj[0]) - {lifted_to}
        if [w for w in searched if labels[w - 1] == labels[h - 1]] == [h]:
            assert (back_heads, back_labels) == (heads, labels)


def test_one_crossing_arc_with_distinct_labels_always_comes_back():
    rng = random.Random(7)
    checked = 0
    for _ in range(3000):
        n = rng.randint(3, 14)
        order = rng.sample(range(1, n + 1), n)
        heads = random_tree(lambda i: rng.randrange(i), n, order)
        if len(brute_nonprojective(heads)) != 1:
            continue
        labels = [f"l{i}" for i in range(n)]
        assert deprojectivize(*projectivize(heads, labels)) == (heads, labels)
        checked += 1
    assert checked > 100


@settings(max_examples=300)
@given(st.data())
def test_deprojectivize_of_any_decorated_tree_is_a_tree(data):
    heads = data.draw(trees)
    plain = ["nsubj", "obj", "conj", "nmod:poss"]
    labels = data.draw(st.lists(st.one_of(st.sampled_from(plain),
                                          st.builds(lambda a, b: a + LIFT + b, st.sampled_from(plain),
                                                    st.sampled_from(plain + ["xcomp"]))),
                                min_size=len(heads), max_size=len(heads)))
    back_heads, back_labels = deprojectivize(heads, labels)
    check_tree(back_heads)
    assert back_labels == [plain_label(label) for label in labels]
    assert (back_heads, back_labels) == reference_deprojectivize(heads, labels)
    for d, (h, b) in enumerate(zip(heads, back_heads), 1):
        # a word moves only down its old head's subtree, and others moving keep it there
        assert b == h or (LIFT in labels[d - 1] and h in ancestors(b, back_heads))


# ---------------------------------------------------------------- long sentences

def test_long_sentences_are_checked_in_linear_time():
    # A quadratic check spends ~n^2/2 = 5e7 steps on the first tree (every arc from word 1 spans
    # everything before its dependent): minutes in Python, where a linear one takes milliseconds.
    n = 10_000
    star = [0] + [1] * (n - 1)
    crossed = list(star)
    crossed[2] = n                     # word 3 hangs from the last word, across everything
    chain = list(range(2, n + 1)) + [0]
    rng = random.Random(3)
    scrambled = random_tree(lambda i: rng.randrange(i), n, rng.sample(range(1, n + 1), n))
    started = time.perf_counter()
    assert is_projective(star) and is_projective(chain)
    assert not is_projective(crossed) and not is_projective(scrambled)
    check_tree(scrambled)
    assert time.perf_counter() - started < 5


def test_projectivize_copes_with_hundreds_of_crossing_words():
    rng = random.Random(5)
    n = 300
    heads = random_tree(lambda i: rng.randrange(i), n, rng.sample(range(1, n + 1), n))
    labels = [rng.choice(LABELS) for _ in heads]
    started = time.perf_counter()
    proj_heads, proj_labels = projectivize(heads, labels)
    back = deprojectivize(proj_heads, proj_labels)
    took = time.perf_counter() - started
    assert len(brute_nonprojective(heads)) > 100
    assert len(lifted_labels(proj_labels)) > 100
    assert brute_is_projective(proj_heads)
    check_tree(back[0])
    assert took < 30                   # about 0.3 s; an exponential search would never end


# ---------------------------------------------------------------- real treebanks

def read_trees(path, limit=None):
    """(heads, labels) of each sentence of a CoNLL-U file, skipping
    comments, multiword token ranges and empty nodes."""
    sentences, heads, labels = [], [], []
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            line = line.rstrip("\n")
            if not line.strip():
                if heads:
                    sentences.append((heads, labels))
                    heads, labels = [], []
                    if limit and len(sentences) >= limit:
                        break
                continue
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            if "-" in cols[0] or "." in cols[0]:
                continue
            heads.append(int(cols[6]))
            labels.append(cols[7])
    if heads and not (limit and len(sentences) >= limit):
        sentences.append((heads, labels))
    return sentences


# Of the non-projective sentences of each dev file, the share that comes back exactly, as measured:
# Finnish-TDT 85/86 (98.8%), Japanese-GSD 4/4, Portuguese-Bosque 94/102 (92.2%), Turkish-IMST 34/41
# (82.9%; the misses are words whose first head was itself lifted and is put back only later, so the
# search finds another word with its label).  The floors leave a margin.
NONPROJECTIVE_FLOORS = {"UD_Finnish-TDT": 0.95, "UD_Japanese-GSD": 0.75, "UD_Portuguese-Bosque": 0.88,
                        "UD_Turkish-IMST": 0.78}
OTHER_FLOOR = 0.75
ALL_FLOOR = 0.98                       # every sentence: 99.3% or more in each of the four


def test_the_round_trip_on_ud_treebanks(shared_data):
    folders = sorted(p for p in (shared_data / "ud").glob("UD_*") if p.is_dir())
    files = []
    for folder in folders:
        found = sorted(folder.glob("*-ud-dev.conllu")) or sorted(folder.glob("*-ud-train.conllu"))
        if found:
            files.append((folder.name, found[0]))
    if not files:
        pytest.skip("no UD treebank (*-ud-dev.conllu or *-ud-train.conllu) under the shared data's ud folder")
    nonprojective_seen = 0
    for name, path in files:
        sentences = read_trees(path, limit=3000)
        nonprojective = exact = exact_nonprojective = 0
        for heads, labels in sentences:
            crossing = not is_projective(heads)
            back = deprojectivize(*projectivize(heads, labels))
            check_tree(back[0])
            same = back == (heads, labels)
            nonprojective += crossing
            exact += same
            exact_nonprojective += same and crossing
        print(f"{name} ({path.name}): {len(sentences)} sentences, {nonprojective} non-projective "
              f"({nonprojective / len(sentences):.2%}); round trip exact for {exact / len(sentences):.2%} of all, "
              f"{exact_nonprojective}/{nonprojective} of the non-projective")
        assert exact / len(sentences) >= ALL_FLOOR, name
        if nonprojective:
            assert exact_nonprojective / nonprojective >= NONPROJECTIVE_FLOORS.get(name, OTHER_FLOOR), name
        nonprojective_seen += nonprojective
    assert nonprojective_seen > 0
