"""The CoNLL 2018 shared task's dependency scores UAS, LAS, MLAS and BLEX
(fasttag.text.conll18): small gold and system files whose scores are worked
out by hand in the comments; a slow reference written from the script's
definitions (an object per word, its head an object, each score a key
compared through the alignment) against the columns on random trees with
random errors; and the real ``fasttag eval`` of a pipeline whose component
predicts heads (a stand-in parser defined here, found by the console script
through an entry point, as an installed plugin would be).

Between them the hand examples give the four scores different counts, and
precision and recall different values, so that a score computed as
another one, or a swap of the two ratios, shows."""
import io
import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag.errors import InputError
from fasttag.pipeline import ENTRY_POINTS, Component, Pipeline, register
from fasttag.text import conll18
from fasttag.text.conll18 import DEPENDENCY_METRICS, METRICS, Annotation, evaluate_annotations, evaluate_documents
from fasttag.text.conllu import read_document
from fasttag.text.goldtext import SurfaceToken

HERE = Path(__file__).resolve().parent


def row(wid, form, head, deprel, lemma="_", upos="_", feats="_"):
    return f"{wid}\t{form}\t{lemma}\t{upos}\t_\t{feats}\t{head}\t{deprel}\t_\t_"


def span(first, last, form):
    """The range line of a multiword token."""
    return f"{first}-{last}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_"


def conllu(*sentences):
    """A CoNLL-U text of sentences given as lists of lines."""
    return "".join("\n".join(s) + "\n\n" for s in sentences)


def without_heads(text):
    """A CoNLL-U text with HEAD, DEPREL, DEPS and MISC made ``_``."""
    return "\n".join("\t".join(line.split("\t")[:6] + ["_"] * 4) if "\t" in line else line
                     for line in text.split("\n"))


def evaluate(gold, system):
    return fasttag.evaluate_conllu(io.StringIO(gold), io.StringIO(system))


def counts(score):
    return score["correct"], score["gold"], score["system"], score["aligned"]


def tree_counts(result):
    """metric -> (correct, gold, system, aligned) of the four dependency scores."""
    return {m: counts(result[m]) for m in DEPENDENCY_METRICS}


# ---------------------------------------------------------------- by hand

READS = [row(1, "She", 2, "nsubj", "she", "PRON"), row(2, "reads", 0, "root", "read", "VERB"),
         row(3, "old", 4, "amod", "old", "ADJ"), row(4, "books", 2, "obj", "book", "NOUN")]


def test_identical_trees_score_one_after_the_other_metrics():
    r = evaluate(conllu(READS), conllu(READS))
    assert list(r) == list(METRICS + DEPENDENCY_METRICS)
    assert all(r[m]["f1"] == 1.0 and r[m]["aligned_accuracy"] == 1.0 for m in DEPENDENCY_METRICS)
    # every word here is a content word: MLAS and BLEX count all four
    assert tree_counts(r) == dict.fromkeys(DEPENDENCY_METRICS, (4, 4, 4, 4))


def test_wrong_heads_and_a_wrong_root():
    # the system attaches "old" to "reads", makes "books" the root and hangs "reads" under it:
    # of the four words only "She" keeps its head (reads, aligned to reads)
    system = [READS[0], row(2, "reads", 4, "root", "read", "VERB"), row(3, "old", 2, "amod", "old", "ADJ"),
              row(4, "books", 0, "obj", "book", "NOUN")]
    r = evaluate(conllu(READS), conllu(system))
    assert tree_counts(r) == dict.fromkeys(DEPENDENCY_METRICS, (1, 4, 4, 4))
    assert r["UAS"]["f1"] == 0.25 and r["UPOS"]["f1"] == 1.0
    # one head wrong only: 3 of 4 everywhere
    one = [READS[0], READS[1], row(3, "old", 2, "amod", "old", "ADJ"), READS[3]]
    assert tree_counts(evaluate(conllu(READS), conllu(one))) == dict.fromkeys(DEPENDENCY_METRICS, (3, 4, 4, 4))


PASSIVE = [row(1, "It", 3, "nsubj:pass", "it", "PRON"), row(2, "was", 3, "aux:pass", "be", "AUX"),
           row(3, "eaten", 0, "root", "eat", "VERB"), row(4, "quickly", 3, "advmod", "quickly", "ADV")]


def test_a_deprel_subtype_is_not_scored_its_universal_part_is():
    # the system drops the subtypes of "It" (nsubj) and of the functional "was" (aux), and calls
    # "quickly" obl: every head right; LAS wrong for "quickly" only
    system = [row(1, "It", 3, "nsubj", "it", "PRON"), row(2, "was", 3, "aux", "be", "AUX"), PASSIVE[2],
              row(4, "quickly", 3, "obl", "quickly", "ADV")]
    r = evaluate(conllu(PASSIVE), conllu(system))
    assert counts(r["UAS"]) == (4, 4, 4, 4) and counts(r["LAS"]) == (3, 4, 4, 4)
    # content words (aux is functional): gold It, eaten, quickly; system It, eaten, quickly (obl);
    # "eaten" keeps its functional child "was" (aux:pass = aux): right; "quickly" wrong
    assert counts(r["MLAS"]) == (2, 3, 3, 3) and counts(r["BLEX"]) == (2, 3, 3, 3)


CAT = [row(1, "the", 2, "det", "the", "DET", "Definite=Def|PronType=Art"),
       row(2, "cat", 3, "nsubj", "cat", "NOUN", "Number=Sing"),
       row(3, "sleeps", 0, "root", "sleep", "VERB", "Number=Sing|Person=3"),
       row(4, ".", 3, "punct", ".", "PUNCT")]


def _cat_with(k, **fields):
    """CAT with word ``k``'s fields changed."""
    names = ("head", "deprel", "lemma", "upos", "feats")
    lines = list(CAT)
    old = lines[k - 1].split("\t")
    values = dict(zip(names, (old[6], old[7], old[2], old[3], old[5])), **fields)
    lines[k - 1] = row(k, old[1], **values)
    return lines


@pytest.mark.parametrize("system, mlas, uas, las", [
    # the child "the" of "cat" with the wrong UPOS: cat's MLAS wrong (sleeps right); the child itself is no
    # content word, so it is not counted on its own
    (_cat_with(1, upos="PRON"), 1, 4, 4),
    # with the wrong universal feature: cat wrong
    (_cat_with(1, feats="Definite=Ind|PronType=Art"), 1, 4, 4),
    # with another functional deprel (case for det): cat wrong; LAS wrong for "the"
    (_cat_with(1, deprel="case"), 1, 4, 3),
    # only a language-specific feature added: still right
    (_cat_with(1, feats="Definite=Def|PronType=Art|Typo=Yes"), 2, 4, 4),
    # "the" attached to "sleeps": cat lost its functional child and sleeps gained one: both wrong
    (_cat_with(1, head=3), 0, 3, 3),
    # "." (punct, neither content nor functional) called mark: sleeps gains a functional child
    (_cat_with(4, deprel="mark"), 1, 4, 3),
    # cat's own UPOS wrong: cat wrong in MLAS, which BLEX does not read
    (_cat_with(2, upos="PROPN"), 1, 4, 4),
])
def test_a_wrong_functional_child_fails_mlas_not_blex(system, mlas, uas, las):
    r = evaluate(conllu(CAT), conllu(system))
    # content words: cat (nsubj) and sleeps (root) on both sides
    assert counts(r["MLAS"]) == (mlas, 2, 2, 2)
    assert counts(r["BLEX"]) == (2, 2, 2, 2)
    assert counts(r["UAS"]) == (uas, 4, 4, 4) and counts(r["LAS"]) == (las, 4, 4, 4)


def test_a_wrong_lemma_fails_blex_not_mlas():
    # cat's lemma wrong: BLEX 1 of 2; the lemma of "the", no content word, is not scored;
    # a gold lemma _ counts as right whatever the system's
    system = _cat_with(2, lemma="cats")
    system[0] = row(1, "the", 2, "det", "a", "DET", "Definite=Def|PronType=Art")
    r = evaluate(conllu(CAT), conllu(system))
    assert counts(r["BLEX"]) == (1, 2, 2, 2) and counts(r["MLAS"]) == (2, 2, 2, 2)
    assert counts(r["Lemmas"]) == (2, 4, 4, 4)
    gold = list(CAT)
    gold[1] = row(2, "cat", 3, "nsubj", "_", "NOUN", "Number=Sing")
    assert counts(evaluate(conllu(gold), conllu(system))["BLEX"]) == (2, 2, 2, 2)


def test_a_word_split_differently_compares_heads_through_the_alignment():
    # text "abcde": gold tokens a b c d e, system ab c d e; aligned c, d, e
    gold = [row(1, "a", 2, "nmod"), row(2, "b", 4, "nsubj"), row(3, "c", 4, "obj"), row(4, "d", 0, "root"),
            row(5, "e", 2, "amod")]
    system = [row(1, "ab", 3, "nsubj"), row(2, "c", 3, "obj"), row(3, "d", 0, "root"), row(4, "e", 1, "amod")]
    r = evaluate(conllu(gold), conllu(system))
    assert counts(r["Words"])[:3] == (3, 5, 4)
    # c: gold head d (word 4), system head d (word 3) aligned to it: right (the numbers differ);
    # d: root on both sides: right; e: gold head b, system head ab, aligned to nothing: wrong
    # (a comparison of head numbers would find c wrong and e's 2 against 1 wrong too)
    assert counts(r["UAS"]) == (2, 5, 4, 3) and counts(r["LAS"]) == (2, 5, 4, 3)
    # every deprel is content: gold 5, system 4, aligned 3
    assert counts(r["MLAS"]) == (2, 5, 4, 3) and counts(r["BLEX"]) == (2, 5, 4, 3)
    assert r["UAS"]["precision"] == 0.5 and r["UAS"]["recall"] == 0.4


DONT = [span(1, 2, "don't"), row(1, "do", 3, "aux", "do", "AUX"), row(2, "n't", 3, "advmod", "not", "PART",
                                                                       "Polarity=Neg"),
        row(3, "go", 0, "root", "go", "VERB", "VerbForm=Inf")]


@pytest.mark.parametrize("system, expected", [
    # the same words as two tokens: aligned by their forms, every head and score right;
    # content words n't (advmod) and go (root), "do" (aux) is go's functional child
    ([row(1, "do", 3, "aux", "do", "AUX"), *DONT[2:]],
     {"UAS": (3, 3, 3, 3), "LAS": (3, 3, 3, 3), "MLAS": (2, 2, 2, 2), "BLEX": (2, 2, 2, 2)}),
    # the token split into other words (did + not): only go aligned; its functional child "did" aligns
    # to nothing, so MLAS is wrong where BLEX is right
    ([span(1, 2, "don't"), row(1, "did", 3, "aux", "do", "AUX"),
      row(2, "not", 3, "advmod", "not", "PART", "Polarity=Neg"), DONT[3]],
     {"UAS": (1, 3, 3, 1), "LAS": (1, 3, 3, 1), "MLAS": (0, 2, 2, 1), "BLEX": (1, 2, 2, 1)}),
    # the multiword token kept, n't attached to do: n't wrong; go keeps its one functional child
    ([DONT[0], DONT[1], row(2, "n't", 1, "advmod", "not", "PART", "Polarity=Neg"), DONT[3]],
     {"UAS": (2, 3, 3, 3), "LAS": (2, 3, 3, 3), "MLAS": (1, 2, 2, 2), "BLEX": (1, 2, 2, 2)}),
])
def test_multiword_tokens(system, expected):
    # HEAD 3 is the third word (go), of the second token: heads number words, not tokens
    assert tree_counts(evaluate(conllu(DONT), conllu(system))) == expected


def test_without_heads_on_either_side_no_dependency_scores():
    with_heads = conllu(READS)
    no_heads = without_heads(with_heads)
    for gold, system in [(with_heads, no_heads), (no_heads, with_heads), (no_heads, no_heads)]:
        r = evaluate(gold, system)
        assert list(r) == list(METRICS) and r["UPOS"]["f1"] == 1.0
        documents = evaluate_documents(read_document(io.StringIO(gold)), read_document(io.StringIO(system)))
        assert list(documents) == list(METRICS)
    # heads that could not be scored are not read where the other side has none: a tagger's scores stand
    broken = with_heads.replace("\t2\tnsubj\t", "\t9\tnsubj\t").replace("\t4\tamod\t", "\t_\tamod\t")
    assert list(evaluate(broken, no_heads)) == list(METRICS)
    with pytest.raises(InputError, match="HEAD 9 of word 1 is outside its sentence of 4 words"):
        evaluate(broken, with_heads)


def test_token_lists_with_heads_score_as_the_documents():
    # the pipeline's way: the system's columns as lists per sentence, heads as ints or strings
    gold_text = conllu(DONT, READS)
    # "don't" as two tokens, all right; "old" headed by "reads", wrong
    system_text = conllu([row(1, "do", 3, "aux", "do", "AUX"), *DONT[2:]],
                         [READS[0], READS[1], row(3, "old", 2, "amod", "old", "ADJ"), READS[3]])
    gold, system = read_document(io.StringIO(gold_text)), read_document(io.StringIO(system_text))
    found = [[SurfaceToken(t.start, t.end, t.form, tuple(w.form for w in t.words)) for t in s.tokens]
             for s in system.sentences]
    columns = {c: [[getattr(w, c) for w in s.words] for s in system.sentences]
               for c in ("upos", "feats", "lemma", "deprel")}
    by_documents = evaluate_documents(gold, system)
    assert tree_counts({m: s.as_dict() for m, s in by_documents.items()}) == {
        "UAS": (6, 7, 7, 7), "LAS": (6, 7, 7, 7), "MLAS": (5, 6, 6, 6), "BLEX": (5, 6, 6, 6)}
    for heads in ([[int(w.head) for w in s.words] for s in system.sentences],
                  [[w.head for w in s.words] for s in system.sentences]):
        annotation = Annotation.of_tokens(system.text, found, dict(columns, head=heads))
        assert annotation.column("head") == [h for s in heads for h in s]
        assert evaluate_annotations(Annotation.of_document(gold, "gold"), annotation) == by_documents
    without = evaluate_annotations(Annotation.of_document(gold, "gold"),
                                   Annotation.of_tokens(system.text, found, columns))
    assert list(without) == list(METRICS)


@pytest.mark.parametrize("head, message", [
    ("5", "HEAD 5 of word 2 is outside its sentence of 4 words"),
    ("x", "HEAD 'x' of word 2 is not a word number"),
    ("-1", "HEAD '-1' of word 2 is not a word number"),
    ("_", "word 2 has no HEAD (_) but other words have one"),
])
def test_a_head_that_is_no_word_of_its_sentence_is_refused_in_one_line(head, message):
    system = list(READS)
    system[1] = row(2, "reads", head, "root")
    with pytest.raises(InputError) as info:
        evaluate(conllu([row(1, "Hi", 0, "root")], READS), conllu([row(1, "Hi", 0, "root")], system))
    text = str(info.value)
    assert message in text and len(text.splitlines()) == 1
    assert info.value.line == 4            # word 2 of the second sentence


# ---------------------------------------------------------------- the reference

#: The script's relations, written out again here: a slip in the module's copy shows.
CONTENT = {"nsubj", "obj", "iobj", "csubj", "ccomp", "xcomp", "obl", "vocative", "expl", "dislocated", "advcl",
           "advmod", "discourse", "nmod", "appos", "nummod", "acl", "amod", "conj", "fixed", "flat", "compound",
           "list", "parataxis", "orphan", "goeswith", "reparandum", "root", "dep"}
FUNCTIONAL = {"aux", "cop", "mark", "det", "clf", "case", "cc"}


def test_the_relations_are_the_scripts():
    assert conll18.CONTENT_DEPRELS == CONTENT and conll18.FUNCTIONAL_DEPRELS == FUNCTIONAL


class Word:
    """A word of the reference: its fields, its head a Word (None: the root)."""

    def __init__(self, form, lemma, upos, feats, deprel):
        self.form, self.lemma, self.upos, self.feats, self.deprel = form, lemma, upos, feats, deprel
        self.head = None

    def universal_deprel(self):
        return self.deprel.split(":")[0]

    def universal_features(self):
        return "|".join(sorted(f for f in self.feats.split("|") if f.split("=")[0] in conll18.UNIVERSAL_FEATURES))


def reference_scores(gold_words, system_words, pairs):
    """The four scores as the script defines them: a key per word, the gold
    word's compared with the system word's, whose words are replaced by
    their aligned gold words ("unaligned" where none)."""
    gold_of = {system_words[s]: gold_words[g] for g, s in pairs}

    def as_gold(word):
        return None if word is None else gold_of.get(word, "unaligned")

    def same(w):
        return w

    def functional_children(word, words):
        return [c for c in words if c.head is word and c.universal_deprel() in FUNCTIONAL]

    def uas(w, ga, words):
        return ga(w.head)

    def las(w, ga, words):
        return ga(w.head), w.universal_deprel()

    def mlas(w, ga, words):
        return (ga(w.head), w.universal_deprel(), w.upos, w.universal_features(),
                [(ga(c), c.universal_deprel(), c.upos, c.universal_features()) for c in functional_children(w, words)])

    def blex(w, ga, words, gold_word):
        return ga(w.head), w.universal_deprel(), w.lemma if gold_word.lemma != "_" else "_"

    def content(w):
        return w.universal_deprel() in CONTENT

    def score(key, counted=lambda w: True):
        correct = aligned = 0
        for g, s in pairs:
            g, s = gold_words[g], system_words[s]
            if counted(g):
                aligned += 1
                correct += key(g, same, gold_words) == key(s, as_gold, system_words)
        return (correct, sum(map(counted, gold_words)), sum(map(counted, system_words)), aligned)

    def blex_key(w, ga, words):
        return blex(w, ga, words, w if ga is same else gold_of[w])

    return {"UAS": score(uas), "LAS": score(las), "MLAS": score(mlas, content), "BLEX": score(blex_key, content)}


DEPRELS = ["nsubj", "nsubj:pass", "obj", "root", "amod", "advmod", "conj", "flat:name", "aux", "aux:pass", "det",
           "case", "cc", "mark", "cop", "punct", "dep"]
UPOS = ["NOUN", "VERB", "DET", "ADP"]
FEATS = ["_", "Number=Sing", "Number=Plur", "Definite=Def|Number=Sing", "Number=Sing|Typo=Yes", "Typo=Yes"]
LEMMAS = ["_", "x", "y"]


def random_word(rnd, form):
    return Word(form, rnd.choice(LEMMAS), rnd.choice(UPOS), rnd.choice(FEATS), rnd.choice(DEPRELS))


def random_head(rnd, word, words):
    """Another word of the sentence or the root (None), a neighbour half the
    time, as in real trees: a functional word's head is often next to it."""
    i = words.index(word)
    near = [words[k] for k in (i - 1, i + 1) if 0 <= k < len(words)]
    if near and rnd.random() < 0.5:
        return rnd.choice(near)
    return rnd.choice([None] + [h for h in words if h is not word])


def random_document(rnd):
    """Sentences of tokens (lists of Words; a multiword token's form is its
    words' forms joined), each word headed by another word of its sentence
    or the root."""
    sentences = []
    for _ in range(rnd.randint(1, 3)):
        tokens = [[random_word(rnd, "".join(rnd.choice("ab") for _ in range(rnd.randint(1, 2))))
                   for _ in range(rnd.choice((1, 1, 2, 3)))] for _ in range(rnd.randint(1, 6))]
        words = [w for t in tokens for w in t]
        for w in words:
            w.head = random_head(rnd, w, words)
        sentences.append(tokens)
    return sentences


def copy_document(sentences):
    new = {}
    for t in (t for s in sentences for t in s):
        for w in t:
            new[w] = Word(w.form, w.lemma, w.upos, w.feats, w.deprel)
    for w, c in new.items():
        c.head = None if w.head is None else new[w.head]
    return [[[new[w] for w in t] for t in s] for s in sentences]


def redirect(sentence_words, old, new):
    for w in sentence_words:
        if w.head is old:
            w.head = new


def with_errors(rnd, gold):
    """The gold document with random errors: fields, heads, tokens merged
    or split (the text kept), multiword tokens split into tokens or made,
    sentences joined."""
    doc = copy_document(gold)
    for s in doc:
        for _ in range(rnd.randint(0, 3)):
            k = rnd.randrange(len(s))
            token = s[k]
            if len(token) > 1 and rnd.random() < 0.5:        # a multiword token as tokens, or words of other forms
                if rnd.random() < 0.5 or len(token[1].form) == 1:
                    s[k:k + 1] = [[w] for w in token]
                else:                                       # a letter moved from the second word to the first
                    token[0].form += token[1].form[0]
                    token[1].form = token[1].form[1:]
            elif k + 1 < len(s) and len(s[k + 1]) == 1 and len(token) == 1:
                if rnd.random() < 0.5:                      # two tokens made one multiword token
                    s[k:k + 2] = [token + s[k + 1]]
                else:                                       # two tokens made one word
                    a, b = token[0], s[k + 1][0]
                    a.form += b.form
                    del s[k + 1]
                    redirect([w for t in s for w in t], b, a)
                    if a.head is a:
                        a.head = None
            elif len(token) == 1 and len(token[0].form) > 1:   # a word split into two tokens
                a = token[0]
                b = random_word(rnd, a.form[1:])
                a.form = a.form[0]
                b.head = rnd.choice([None, a])
                s[k:k + 1] = [[a], [b]]
    if len(doc) > 1 and rnd.random() < 0.3:
        doc[0:2] = [doc[0] + doc[1]]
    for s in doc:
        words = [w for t in s for w in t]
        for w in words:
            if rnd.random() < 0.2:
                w.head = random_head(rnd, w, words)
            if rnd.random() < 0.15:
                w.deprel = rnd.choice(DEPRELS)
            if rnd.random() < 0.1:
                w.upos = rnd.choice(UPOS)
            if rnd.random() < 0.1:
                w.feats = rnd.choice(FEATS)
            if rnd.random() < 0.1:
                w.lemma = rnd.choice(LEMMAS)
    return doc


def conllu_of(sentences):
    """The CoNLL-U text of a document of Words, heads numbered in their sentence."""
    out = []
    for s in sentences:
        words = [w for t in s for w in t]
        number = {w: i for i, w in enumerate(words, 1)}
        lines, n = [], 0
        for t in s:
            if len(t) > 1:
                lines.append(span(n + 1, n + len(t), "".join(w.form for w in t)))
            for w in t:
                n += 1
                head = 0 if w.head is None else number[w.head]
                lines.append(row(n, w.form, head, w.deprel, w.lemma, w.upos, w.feats))
        out.append(lines)
    return conllu(*out)


@settings(max_examples=300)
@given(st.randoms(use_true_random=False))
def test_the_dependency_scores_are_the_reference_on_random_trees(rnd):
    gold = random_document(rnd)
    system = with_errors(rnd, gold)
    pairs = []

    def keep_pairs(g, s, aligned):
        pairs.extend(aligned)
        return {}

    g = Annotation.of_document(read_document(io.StringIO(conllu_of(gold))), "gold")
    s = Annotation.of_document(read_document(io.StringIO(conllu_of(system))), "system")
    scores = evaluate_annotations(g, s, [keep_pairs])
    expected = reference_scores([w for sent in gold for t in sent for w in t],
                                [w for sent in system for t in sent for w in t], pairs)
    assert {m: tuple(scores[m]) for m in DEPENDENCY_METRICS} == expected


# ---------------------------------------------------------------- the console script

@register("chain_tree")
class ChainTree(Component):
    """A stand-in parser: each word headed by the word before it (the first
    by the root), ``root`` then ``obj``; it learns nothing."""
    fills = ("head", "deprel")

    @classmethod
    def annotated(cls, treebank):
        return True

    @classmethod
    def learn(cls, train, dev=None, *, init=None, verbose=None, **options):
        return cls()

    def fill(self, words, columns):
        return {"head": [list(range(len(s))) for s in words],
                "deprel": [["root"] + ["obj"] * (len(s) - 1) for s in words]}

    def to_parts(self):
        return {"kind": "chain_tree"}, {}

    @classmethod
    def from_parts(cls, header, arrays):
        return cls()


# the chain tree gets "Go" (root) and "home" (obj) right, "to" and "eat" wrong; content words: gold go,
# home, eat (to is case), system all four (obj); the system has no UPOS, FEATS or lemmas: MLAS right for go
# and home, BLEX for home only (its gold lemma _)
GO = conllu([row(1, "Go", 0, "root", "go"), row(2, "home", 1, "obj"), row(3, "to", 4, "case", "to"),
             row(4, "eat", 1, "advcl", "eat")])


@pytest.fixture(scope="module")
def chain_model(tmp_path_factory):
    folder = tmp_path_factory.mktemp("chain")
    (folder / "gold.conllu").write_text(GO, encoding="utf-8")
    pipe = Pipeline.train(folder / "gold.conllu", components=[ChainTree], verbose=False)
    pipe.save(folder / "chain.ftm")
    return folder


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory, cli_command):
    """The console script's environment, with this module installed as the plugin that declares ``chain_tree``."""
    site = tmp_path_factory.mktemp("site")
    info = site / "fasttag_chain_tree-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fasttag-chain-tree\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[{ENTRY_POINTS}]\nchain_tree = {Path(__file__).stem}:ChainTree\n")
    command, env = cli_command
    return command, dict(env, PYTHONPATH=os.pathsep.join([env["PYTHONPATH"], str(site), str(HERE)]))


def _eval(plugin_env, folder, gold, *options):
    command, env = plugin_env
    proc = subprocess.run(command + ["eval", str(folder / "chain.ftm"), str(gold), "--gold-tokens", *options],
                          capture_output=True, cwd=folder, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout.decode()


def test_fasttag_eval_reports_the_dependency_scores(chain_model, plugin_env):
    result = json.loads(_eval(plugin_env, chain_model, chain_model / "gold.conllu", "--json"))
    assert {k for k, v in result.items() if isinstance(v, dict) and "f1" in v} == \
        {"Tokens", "Sentences", "Words", *DEPENDENCY_METRICS}
    assert tree_counts(result) == {"UAS": (2, 4, 4, 4), "LAS": (2, 4, 4, 4), "MLAS": (2, 3, 4, 3),
                                   "BLEX": (1, 3, 4, 3)}
    assert result["MLAS"]["f1"] == pytest.approx(4 / 7) and result["BLEX"]["recall"] == pytest.approx(1 / 3)
    text = _eval(plugin_env, chain_model, chain_model / "gold.conllu").splitlines()
    table = [line for line in text if "|" in line]
    assert [line.split("|")[0].strip() for line in table] == \
        ["Metric", "Tokens", "Sentences", "Words", "UAS", "LAS", "MLAS", "BLEX"]
    assert "UAS        |     50.00 |     50.00 |     50.00 |     50.00" in text
    assert "MLAS       |     50.00 |     66.67 |     57.14 |     66.67" in text
    assert "BLEX       |     25.00 |     33.33 |     28.57 |     33.33" in text


def test_fasttag_eval_against_gold_without_heads_gives_no_dependency_scores(chain_model, plugin_env):
    no_heads = chain_model / "no_heads.conllu"
    no_heads.write_text(without_heads(GO), encoding="utf-8")
    result = json.loads(_eval(plugin_env, chain_model, no_heads, "--json"))
    assert {k for k, v in result.items() if isinstance(v, dict) and "f1" in v} == {"Tokens", "Sentences", "Words"}
    assert not any(m in result or m.lower() in result for m in DEPENDENCY_METRICS)
    assert "UAS" not in _eval(plugin_env, chain_model, no_heads)
