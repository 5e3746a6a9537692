"""The CoNLL 2018 shared task's scores of a system's CoNLL-U against the
gold one, as its evaluation script ``conll18_ud_eval.py`` (version 1.2,
Straka and Popel) defines them, so that fasttag's numbers are comparable
with the published ones.

Definitions:

* **Characters.**  Each file's text is the concatenation of its tokens'
  forms without the characters of Unicode category Zs (so the two files may
  differ in spacing, also inside tokens); the two texts must be equal, else
  the evaluation stops.  Tokens, words and sentences are spans of it; empty
  nodes are skipped.
* **Tokens, Sentences.**  A system span is correct when a gold span has the
  same start and end.
* **Words.**  Words are aligned: outside multiword tokens by identical
  spans; a *multiword span* (the smallest stretch that holds a multiword
  token of either side and every multiword token it overlaps) has its gold
  and system words aligned by the longest common subsequence of their
  lowercased forms.  The words of a multiword token have its span.
* **UPOS, XPOS, UFeats, AllTags, Lemmas.**  An aligned word is correct when
  the field agrees: UFeats compares only the universal features
  (:data:`UNIVERSAL_FEATURES`, sorted); AllTags UPOS, XPOS and UFeats
  together; Lemmas counts every word whose gold lemma is ``_`` as correct.
* **UAS, LAS, MLAS, BLEX** (:data:`DEPENDENCY_METRICS`), only where both
  sides give their words' heads (HEAD not ``_``).  An aligned word's head
  is correct when both are the root or the gold word's head is aligned to
  the system word's head; DEPREL is compared on its universal part (before
  ``:``).  UAS: the head; LAS: the head and DEPREL.  MLAS and BLEX score the
  content words (:data:`CONTENT_DEPRELS`; gold and system counts are each
  side's content words, aligned ones those whose gold word is one): MLAS
  the head, DEPREL, UPOS, universal features and the functional children
  (:data:`FUNCTIONAL_DEPRELS`: in word order, each aligned to the gold
  one, with its DEPREL, UPOS and universal features); BLEX the head, DEPREL
  and the lemma (a gold ``_`` lemma counts as correct).  The script refuses
  a file whose heads make a cycle or several roots; here such a file is
  scored all the same.

Each score has precision (correct / system), recall (correct / gold), F1
(2 correct / (gold + system)), and for the word scores the aligned accuracy
(correct / aligned words); 0.0 where a ratio is undefined.
"""
from __future__ import annotations

import bisect
import operator
import unicodedata
import warnings
from array import array
from typing import NamedTuple, Sequence

from ..errors import InputError, shown
from .conllu import paused_gc, read_document
from .sources import is_source

__all__ = ["UNIVERSAL_FEATURES", "CONTENT_DEPRELS", "FUNCTIONAL_DEPRELS", "METRICS", "DEPENDENCY_METRICS",
           "MAX_SPAN_PRODUCT", "SpanTooLong", "Score", "Unit", "Annotation", "ScoresWithOldKeys", "score_table",
           "span_matches",
           "align_words", "universal_features", "evaluate_documents", "evaluate_annotations", "evaluate_conllu"]

#: The features the script scores in UFeats (its ``UNIVERSAL_FEATURES``).
UNIVERSAL_FEATURES = frozenset((
    "PronType", "NumType", "Poss", "Reflex", "Foreign", "Abbr", "Gender", "Animacy", "Number", "Case", "Definite",
    "Degree", "VerbForm", "Mood", "Tense", "Aspect", "Voice", "Evident", "Polarity", "Person", "Polite"))

#: The universal DEPRELs of the content words MLAS and BLEX score (the script's ``CONTENT_DEPRELS``).
CONTENT_DEPRELS = frozenset((
    "nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl", "advmod",
    "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound", "list", "parataxis",
    "orphan", "goeswith", "reparandum", "root", "dep"))

#: The universal DEPRELs of the functional children MLAS compares (the script's ``FUNCTIONAL_DEPRELS``).
FUNCTIONAL_DEPRELS = frozenset(("aux", "cop", "mark", "det", "clf", "case", "cc"))

#: The scores :func:`evaluate_conllu` always gives, in the script's order and names.
METRICS = ("Tokens", "Sentences", "Words", "UPOS", "XPOS", "UFeats", "AllTags", "Lemmas")

#: The scores that follow :data:`METRICS` where both sides give heads (the script's, without CLAS).
DEPENDENCY_METRICS = ("UAS", "LAS", "MLAS", "BLEX")


class Score(NamedTuple):
    """Counts of one score: ``correct``, ``gold``, ``system`` and
    ``aligned`` (the aligned words, None for Tokens, Sentences and Words)."""
    correct: int
    gold: int
    system: int
    aligned: int | None = None

    @property
    def precision(self):
        return self.correct / self.system if self.system else 0.0

    @property
    def recall(self):
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self):
        total = self.gold + self.system
        return 2 * self.correct / total if total else 0.0

    @property
    def aligned_accuracy(self):
        if self.aligned is None:
            return None
        return self.correct / self.aligned if self.aligned else 0.0

    def as_dict(self):
        """precision, recall, f1, aligned_accuracy and the counts."""
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "aligned_accuracy": self.aligned_accuracy, "correct": self.correct, "gold": self.gold,
                "system": self.system, "aligned": self.aligned}


class Unit(NamedTuple):
    """A word as the alignment sees it: the ``start`` and ``end`` of its
    span (its token's), whether it is part of a ``multiword`` token, its
    lowercased ``form``, and the ``word`` itself (any object, or None)."""
    start: int
    end: int
    multiword: bool
    form: str
    word: object = None


def span_matches(gold: Sequence, system: Sequence) -> int:
    """The number of system spans ``(start, end)`` equal to a gold span,
    both lists in text order (the script's ``spans_score``)."""
    correct = gi = si = 0
    while gi < len(gold) and si < len(system):
        g, s = gold[gi], system[si]
        if s[0] < g[0]:
            si += 1
        elif g[0] < s[0]:
            gi += 1
        else:
            correct += g[1] == s[1]
            gi += 1
            si += 1
    return correct


#: The most gold words times system words of one multiword span that the
#: alignment compares (its longest common subsequence takes their product
#: in time and memory); a real span holds a few words on either side.
MAX_SPAN_PRODUCT = 1 << 22


class SpanTooLong(ValueError):
    """A multiword span past :data:`MAX_SPAN_PRODUCT`; ``gold_index``: its first gold word."""

    def __init__(self, message, gold_index):
        super().__init__(message)
        self.gold_index = gold_index


def align_words(gold: Sequence[Unit], system: Sequence[Unit]) -> list:
    """The aligned ``(gold index, system index)`` pairs of two lists of
    :class:`Unit` in text order (the script's ``align_words``);
    :class:`SpanTooLong` for a multiword span past :data:`MAX_SPAN_PRODUCT`."""
    pairs = []
    gi = si = 0
    while gi < len(gold) and si < len(system):
        g, s = gold[gi], system[si]
        if g.multiword or s.multiword:
            gs, ss, gi, si = _multiword_span(gold, system, gi, si)
            if (gi - gs) * (si - ss) > MAX_SPAN_PRODUCT:
                raise SpanTooLong(f"a multiword span of {gi - gs:,} gold and {si - ss:,} system words, whose "
                                  f"multiword tokens overlap each other from one to the next: too long to align "
                                  f"(at most {MAX_SPAN_PRODUCT:,} word pairs)", gs)
            pairs.extend((gs + a, ss + b) for a, b in
                         _lcs_pairs([w.form for w in gold[gs:gi]], [w.form for w in system[ss:si]]))
        elif g.start == s.start and g.end == s.end:
            pairs.append((gi, si))
            gi += 1
            si += 1
        elif g.start <= s.start:
            gi += 1
        else:
            si += 1
    return pairs


def _beyond(words, i, end):
    """Whether word ``i`` lies past a multiword span that ends at ``end``."""
    if i >= len(words):
        return True
    w = words[i]
    return w.start >= end if w.multiword else w.end > end


def _multiword_span(gold, system, gi, si):
    """(gold start, system start, gold end, system end) word indices of
    the smallest multiword span from ``gold[gi]`` or ``system[si]``, one
    of which is part of a multiword token."""
    g, s = gold[gi], system[si]
    if g.multiword:
        end = g.end
        if not s.multiword and s.start < g.start:
            si += 1
    else:
        end = s.end
        if g.start < s.start:
            gi += 1
    gs, ss = gi, si
    while not _beyond(gold, gi, end) or not _beyond(system, si, end):
        if gi < len(gold) and (si >= len(system) or gold[gi].start <= system[si].start):
            w = gold[gi]
            gi += 1
        else:
            w = system[si]
            si += 1
        if w.multiword and w.end > end:
            end = w.end
    return gs, ss, gi, si


def _lcs_pairs(a, b):
    """The pairs of one longest common subsequence of ``a`` and ``b``: the
    first equal pair taken greedily from the left, as the script does."""
    n, m = len(a), len(b)
    if not n or not m:
        return []
    # after[i][j]: the LCS length of a[i:] and b[j:]
    after = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = after[i], after[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    pairs = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            pairs.append((i, j))
            i += 1
            j += 1
        elif after[i][j] == after[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def universal_features(feats: str) -> str:
    """The universal features of a FEATS value, sorted, ``|``-joined
    (``""`` for ``_`` or none)."""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


def _no_space(form):
    if form.isascii():
        return form.replace(" ", "")
    return "".join(c for c in form if unicodedata.category(c) != "Zs")


class Annotation:
    """One side of an evaluation as the script sees it, in columns: its
    text without Zs characters, the spans of its tokens and sentences in
    that text, each word's span, whether it is part of a multiword token,
    its lowercased form and the fields scored (HEAD and DEPREL as given:
    :meth:`head_indices` reads the heads), each token's line for error
    messages, each sentence's first word.  Columns, not an object per word:
    a sentence of a million words is scored in a small multiple of its size."""

    def __init__(self, path, side, extra=()):
        self.path = path if path is not None else f"the {side} document"
        self.side = side
        #: the other word columns kept (``misc``...), each a list of values: see :meth:`column`
        self.extra = tuple(c for c in extra if c not in _KEPT)
        self._extra = [[] for _ in self.extra]
        self._chars = []
        self._at = 0
        self.token_starts, self.token_ends, self.lines = array("q"), array("q"), []
        self.sentences = []
        self.starts, self.ends, self.multiword = array("q"), array("q"), bytearray()
        self.forms, self.upos, self.xpos, self.feats, self.lemmas = [], [], [], [], []
        self.heads, self.deprels = [], []
        #: the index of each sentence's first word
        self.sentence_first_words = array("q")
        self._shared = {}.setdefault        # one copy of each lowercased form
        self._first = 0
        self._first_word = 0

    @classmethod
    def of_document(cls, doc, side, extra=()):
        """The annotation of a :class:`fasttag.text.conllu.UDDocument`;
        ``extra``: the other word columns to keep (UDWord names)."""
        out = cls(doc.path, side, extra)
        for sent in doc.sentences:
            for t in sent.tokens:
                out.add_token(t.form, t.line, [(w.form, w.upos, w.xpos, w.feats, w.lemma, w.head, w.deprel,
                                                *[getattr(w, c) for c in out.extra]) for w in t.words])
            out.end_sentence()
        return out

    @classmethod
    def of_tokens(cls, text, sentences, columns, side="system", path=None):
        """The annotation of ``text`` cut into ``sentences`` of tokens (with
        ``start``, ``end`` and the forms of their ``words``) whose words'
        ``columns`` (``upos``, ``xpos``, ``feats``, ``lemma``, ``head``,
        ``deprel`` -> per sentence the values of its words; ``_`` where one
        is absent) were predicted; the other columns given are kept as
        ``extra``.  A ``head`` is the head's word number in the sentence
        (1, 2 ...; 0 for the root), a string or an int."""
        out = cls(path, side, [c for c in columns if c not in _KEPT])
        given = [columns.get(name) for name in _KEPT + out.extra]
        for i, sent in enumerate(sentences):
            cols = [_BLANK if values is None else values[i] for values in given]
            k = 0
            for t in sent:
                out.add_token(text[t.start:t.end], None,
                              [(w, *(c[k + j] for c in cols)) for j, w in enumerate(t.words)])
                k += len(t.words)
            out.end_sentence()
        return out

    def add_token(self, form, line, words):
        """Add a token: its ``form``, its ``line`` (None when unknown) and
        its words, ``(form, upos, xpos, feats, lemma, head, deprel, *extra)``
        each (``head`` as CoNLL-U gives it: the word number in its sentence)."""
        form = _no_space(form)
        if not form:
            raise InputError("a token of only spaces", self.path, line)
        at = self._at
        end = at + len(form)
        self._chars.append(form)
        self.token_starts.append(at)
        self.token_ends.append(end)
        self.lines.append(line)
        multi = len(words) > 1
        shared = self._shared
        for word in words:
            w, upos, xpos, feats, lemma, head, deprel = word[:7]
            for values, value in zip(self._extra, word[7:]):
                values.append(value)
            lower = (w if multi else form).lower()
            self.starts.append(at)
            self.ends.append(end)
            self.multiword.append(multi)
            self.forms.append(shared(lower, lower))
            self.upos.append(upos)
            self.xpos.append(xpos)
            self.feats.append(feats)
            self.lemmas.append(lemma)
            self.heads.append(head)
            self.deprels.append(deprel)
        self._at = end

    def end_sentence(self):
        """The tokens added since the last call make a sentence."""
        if self._at > self._first:
            self.sentences.append((self._first, self._at))
            self.sentence_first_words.append(self._first_word)
        self._first = self._at
        self._first_word = len(self.starts)

    def column(self, name):
        """The values of word column ``name`` (``upos``, ``xpos``,
        ``feats``, ``lemma``, ``head``, ``deprel`` or one of :attr:`extra`),
        a list in word order, as given."""
        if name in self.extra:
            return self._extra[self.extra.index(name)]
        if name in _KEPT:
            return {"upos": self.upos, "xpos": self.xpos, "feats": self.feats, "lemma": self.lemmas,
                    "head": self.heads, "deprel": self.deprels}[name]
        raise KeyError(f"the {self.side} annotation keeps no column {name!r}")

    @property
    def gives_heads(self):
        """Whether a word has a HEAD (not ``_``): the side can be scored on its tree."""
        return self.heads.count("_") != len(self.heads)

    def head_indices(self):
        """Each word's head as an index into this annotation's words (-1:
        the root), so that heads compare through the alignment; None where
        no word has a HEAD (all ``_``).  A HEAD that is no word of its
        sentence, or a ``_`` beside given heads, raises
        :class:`fasttag.InputError`."""
        if not self.gives_heads:
            return None
        heads = self.heads
        n = len(heads)
        out = array("q", [-1]) * n
        bounds = [*self.sentence_first_words, self._first_word, n]     # words after the last sentence: one more
        for first, end in zip(bounds, bounds[1:]):
            size = end - first
            for i in range(first, end):
                head = heads[i]
                k = int(head) if type(head) is str and head.isdigit() and head.isascii() else \
                    self._head_number(head, i, first)
                if not 0 <= k <= size:
                    self._head_error(f"HEAD {k} of word {i - first + 1} is outside its sentence of {size} words", i)
                if k:
                    out[i] = first + k - 1
        return out

    def _head_number(self, head, i, first):
        """The word number a HEAD value gives (0: the root)."""
        if isinstance(head, str):
            if head.isdigit() and head.isascii():
                return int(head)
            if head == "_":
                self._head_error(f"word {i - first + 1} has no HEAD (_) but other words have one: a file "
                                 f"gives every word's head or none", i)
        elif not isinstance(head, bool):
            try:
                return operator.index(head)
            except TypeError:
                pass
        self._head_error(f"HEAD {shown(head)} of word {i - first + 1} is not a word number", i)

    def _head_error(self, message, i):
        raise InputError(message, self.path, self.line_at(self.starts[i]))

    @property
    def text(self):
        """The text without Zs characters (joined once)."""
        if len(self._chars) != 1:
            self._chars = ["".join(self._chars)]
        return self._chars[0]

    @property
    def tokens(self):
        """The tokens' ``(start, end)`` spans."""
        return _Pairs(self.token_starts, self.token_ends)

    @property
    def units(self):
        """The words as :class:`Unit` (``word``: None), made when asked."""
        return _Units(self)

    def line_at(self, i):
        """The line of the token that holds character ``i`` (None when unknown)."""
        k = bisect.bisect_right(self.token_starts, i) - 1
        return self.lines[max(k, 0)] if self.lines else None

    def where(self, i):
        """``path:line`` of character ``i``, or what is known of it."""
        line = self.line_at(i)
        return f"{self.path}:{line}" if line is not None else str(self.path)


#: The word columns every annotation keeps, in :meth:`Annotation.add_token`'s order.
_KEPT = ("upos", "xpos", "feats", "lemma", "head", "deprel")


class _Blank:
    """A column of ``_`` of any length."""

    def __getitem__(self, i):
        return "_"


_BLANK = _Blank()


class _Pairs(Sequence):
    """``(start, end)`` pairs of two columns, made when asked."""

    def __init__(self, starts, ends):
        self._starts, self._ends = starts, ends

    def __len__(self):
        return len(self._starts)

    def __getitem__(self, i):
        return self._starts[i], self._ends[i]


class _Units(Sequence):
    """The words of an :class:`Annotation` as :class:`Unit`, made when asked."""

    def __init__(self, side):
        self._side = side

    def __len__(self):
        return len(self._side.starts)

    def __getitem__(self, i):
        side = self._side
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        return Unit(side.starts[i], side.ends[i], bool(side.multiword[i]), side.forms[i])


def _check_texts(gold, system):
    g, s = gold.text, system.text
    if g == s:
        return
    i = 0
    n = min(len(g), len(s))
    step = 1 << 12
    while i < n and g[i:i + step] == s[i:i + step]:
        i += step
    while i < n and g[i] == s[i]:
        i += 1
    if i >= len(s):
        raise InputError(f"the text ends before the gold text does: {gold.where(i)} goes on with "
                         f"{shown(g[i:i + 20])}", system.path)
    if i >= len(g):
        raise InputError(f"text beyond the end of the gold text ({gold.path}): {shown(s[i:i + 20])}",
                         system.path, system.line_at(i))
    raise InputError(f"the text differs from the gold text (spaces aside): here it reads {shown(s[i:i + 20])}, "
                     f"{gold.where(i)} reads {shown(g[i:i + 20])}", system.path, system.line_at(i))


def _same_features(gold_feats, system_feats):
    """Whether two FEATS values have the same universal features."""
    return gold_feats == system_feats or universal_features(gold_feats) == universal_features(system_feats)


def _field_scores(gold, system, pairs):
    aligned = len(pairs)
    counts = dict.fromkeys(("UPOS", "XPOS", "UFeats", "AllTags", "Lemmas"), 0)
    for gi, si in pairs:
        upos = gold.upos[gi] == system.upos[si]
        xpos = gold.xpos[gi] == system.xpos[si]
        feats = _same_features(gold.feats[gi], system.feats[si])
        counts["UPOS"] += upos
        counts["XPOS"] += xpos
        counts["UFeats"] += feats
        counts["AllTags"] += upos and xpos and feats
        lemma = gold.lemmas[gi]
        counts["Lemmas"] += lemma == "_" or lemma == system.lemmas[si]
    return {k: Score(c, len(gold.starts), len(system.starts), aligned) for k, c in counts.items()}


def _functional_children(heads, deprels):
    """head index -> the indices of its functional children, in word order."""
    children = {}
    for i, (head, deprel) in enumerate(zip(heads, deprels)):
        if head >= 0 and deprel in FUNCTIONAL_DEPRELS:
            children.setdefault(head, []).append(i)
    return children


def _tree_scores(gold, system, pairs):
    """UAS, LAS, MLAS and BLEX as the script computes them; none where a side gives no heads
    (nor a check of the other side's heads: a tagger's scores are what they were)."""
    if not (gold.gives_heads and system.gives_heads):
        return {}
    gold_heads, system_heads = gold.head_indices(), system.head_indices()
    gold_of = array("q", [-2]) * len(system_heads)    # system word -> its aligned gold word, -2 for none
    for gi, si in pairs:
        gold_of[si] = gi
    gold_rels = [d.partition(":")[0] for d in gold.deprels]
    system_rels = [d.partition(":")[0] for d in system.deprels]
    gold_children = _functional_children(gold_heads, gold_rels)
    system_children = _functional_children(system_heads, system_rels)

    def same_children(gi, si):
        """Whether the functional children agree: aligned in order, same DEPREL, UPOS and features."""
        gs, ss = gold_children.get(gi, ()), system_children.get(si, ())
        return len(gs) == len(ss) and all(
            gold_of[sc] == gc and gold_rels[gc] == system_rels[sc] and gold.upos[gc] == system.upos[sc]
            and _same_features(gold.feats[gc], system.feats[sc]) for gc, sc in zip(gs, ss))

    uas = las = mlas = blex = content_aligned = 0
    for gi, si in pairs:
        rel = gold_rels[gi]
        content = rel in CONTENT_DEPRELS
        content_aligned += content
        head = system_heads[si]
        if gold_heads[gi] != (head if head < 0 else gold_of[head]):
            continue
        uas += 1
        if rel != system_rels[si]:
            continue
        las += 1
        if not content:
            continue
        lemma = gold.lemmas[gi]
        blex += lemma == "_" or lemma == system.lemmas[si]
        mlas += (gold.upos[gi] == system.upos[si] and _same_features(gold.feats[gi], system.feats[si])
                 and same_children(gi, si))
    n_gold, n_system, aligned = len(gold_heads), len(system_heads), len(pairs)
    gold_content = sum(r in CONTENT_DEPRELS for r in gold_rels)
    system_content = sum(r in CONTENT_DEPRELS for r in system_rels)
    return {"UAS": Score(uas, n_gold, n_system, aligned), "LAS": Score(las, n_gold, n_system, aligned),
            "MLAS": Score(mlas, gold_content, system_content, content_aligned),
            "BLEX": Score(blex, gold_content, system_content, content_aligned)}


def evaluate_documents(gold, system) -> dict:
    """:class:`Score` of each of :data:`METRICS` for two
    :class:`fasttag.text.conllu.UDDocument`, and of each of
    :data:`DEPENDENCY_METRICS` where both give heads;
    :class:`fasttag.InputError` naming both files' lines where their texts
    (spaces aside) differ."""
    with paused_gc():
        g, s = Annotation.of_document(gold, "gold"), Annotation.of_document(system, "system")
    return evaluate_annotations(g, s)


def evaluate_annotations(gold, system, scorers=()) -> dict:
    """:class:`Score` of each of :data:`METRICS` for two :class:`Annotation`,
    and of each of :data:`DEPENDENCY_METRICS` where both give heads; each
    of ``scorers``, called ``scorer(gold, system, pairs)`` with the
    aligned words' ``(gold index, system index)`` pairs, adds its own
    (a dict name -> :class:`Score`)."""
    if not len(gold.token_starts):
        raise InputError("no sentences: nothing to score against", gold.path)
    _check_texts(gold, system)
    with paused_gc():
        try:
            pairs = align_words(gold.units, system.units)
        except SpanTooLong as exc:
            raise InputError(f"{exc} (the system's from {system.where(gold.starts[exc.gold_index])})", gold.path,
                             gold.line_at(gold.starts[exc.gold_index])) from None
    out = {
        "Tokens": Score(span_matches(gold.tokens, system.tokens), len(gold.token_starts), len(system.token_starts)),
        "Sentences": Score(span_matches(gold.sentences, system.sentences), len(gold.sentences),
                           len(system.sentences)),
        "Words": Score(len(pairs), len(gold.starts), len(system.starts)),
    }
    out.update(_field_scores(gold, system, pairs))
    out.update(_tree_scores(gold, system, pairs))
    for scorer in scorers:
        out.update(scorer(gold, system, pairs))
    return out


class ScoresWithOldKeys(dict):
    """An evaluation result keyed by the shared task's metric names, as
    :func:`evaluate_conllu`'s, that still holds the keys of earlier releases
    (``upos``: the UPOS F1 ... ``scores``: every metric) for the callers and
    JSON readers that use them; reading one in Python warns."""

    def old_keys(self, f1_keys, **others):
        """Add the old keys: ``f1_keys`` old key -> (metric, field) it copies;
        ``others`` old key -> its value."""
        old = self.__dict__.setdefault("_old", {})
        for key, (name, field) in f1_keys.items():
            self[key] = self[name][field]
            old[key] = f"result[{name!r}][{field!r}]"
        for key, value in others.items():
            self[key] = value
            old[key] = "the metric names' keys"

    def __getitem__(self, key):
        new = self.__dict__.get("_old", {}).get(key)
        if new is not None:
            warnings.warn(f"the evaluation result's key {key!r} is deprecated: read {new}", DeprecationWarning,
                          stacklevel=2)
        return super().__getitem__(key)

    def get(self, key, default=None):
        return self[key] if key in self else default


def evaluate_conllu(gold, system) -> dict:
    """The CoNLL 2018 shared task's scores of the ``system`` CoNLL-U file
    against the ``gold`` one (paths or file objects): for each of Tokens,
    Sentences, Words, UPOS, XPOS, UFeats, AllTags and Lemmas, and where
    both files give heads (HEAD not ``_``) UAS, LAS, MLAS and BLEX, a dict
    of precision, recall, f1 and aligned_accuracy (fractions; None for the
    first three) and the counts correct, gold, system and aligned.  A
    malformed file, a HEAD outside its sentence, or texts that differ
    beyond spacing raise :class:`fasttag.InputError` naming the file and
    line."""
    for name, source in (("gold", gold), ("system", system)):
        if not is_source(source):
            raise TypeError(f"{name} must be the path of a CoNLL-U file or a file object, not {type(source).__name__}")
    scores = evaluate_documents(read_document(gold), read_document(system))
    return {name: scores[name].as_dict() for name in METRICS + DEPENDENCY_METRICS if name in scores}


def score_table(result) -> str:
    """The text of an evaluation result (metric name -> its scores, with
    ``mode`` and ``words_per_second``), as ``fasttag eval`` prints it: the
    shared task's table."""
    lines = [f"from {result['mode']} (CoNLL 2018 shared task scores, in %)",
             f"{'Metric':<11}| {'Precision':>9} | {'Recall':>9} | {'F1 Score':>9} | {'AligndAcc':>9}",
             "-----------+-----------+-----------+-----------+-----------"]
    for name, s in result.items():
        if not (isinstance(s, dict) and "aligned_accuracy" in s):
            continue
        acc = "" if s["aligned_accuracy"] is None else f"{100 * s['aligned_accuracy']:9.2f}"
        lines.append(f"{name:<11}| {100 * s['precision']:9.2f} | {100 * s['recall']:9.2f} | "
                     f"{100 * s['f1']:9.2f} | {acc:>9}")
    lines.append(f"speed      {result['words_per_second']:,.0f} words/s")
    return "\n".join(lines)
