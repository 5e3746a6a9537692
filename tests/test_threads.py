"""One tagger shared by many threads.

The word-type cache is filled while tagging; threads that meet new words at
the same time must neither corrupt it nor read each other's half-written
rows.  Every test compares with single-threaded tagging on a fresh copy of
the model (the cache is invisible in the tags).  Thread switches are forced
often so that interleavings which used to corrupt the cache happen within a
few seconds.
"""
import random
import sys
import threading
from pathlib import Path

import pytest

import fasttag
from fasttag import SpanTagger

DATA = Path(__file__).resolve().parents[1] / "data"
N_THREADS = 6
CALLS = 60             # calls per thread, each with new word types
SENTS_PER_CALL = 3

KNOWN = ["the", "of", "and", "to", "a", "in", "is", "Bonn", "EU", "said", "German", "."]
POS = ["NNP", "NN", "VBZ", "JJ", "IN", "DT", "CD", "NNS"]
CHUNK = ["B-NP", "I-NP", "B-VP", "B-PP", "O"]


@pytest.fixture(autouse=True)
def frequent_thread_switches():
    """Switch threads every few microseconds instead of every 5 ms."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _word(rng, tag):
    """An unseen word of a varied shape (so the tags vary), unique to
    ``tag`` (a thread and a call)."""
    stem = "".join(rng.choice("bcdfgklmnprstvz") + rng.choice("aeiou") for _ in range(rng.randint(1, 4)))
    form = rng.choice(["{}", "{}", "{}s", "{}ing", "{}ed", "{}ly", "{}-{}", "{}'s"])
    word = form.format(stem, tag) if "-" in form else form.format(stem) + tag
    if rng.random() < 0.3:
        word = word.capitalize()
    if rng.random() < 0.1:
        word = str(rng.randint(0, 9999)) + tag
    return word


def _workloads(seed, known=KNOWN):
    """Per thread, per call: sentences of new words mixed with ``known``
    ones; no two calls (of any workload) share a new word."""
    rng = random.Random(seed)
    loads = []
    for k in range(N_THREADS):
        calls = []
        for c in range(CALLS):
            tag = f"q{seed}t{k}c{c}"
            calls.append([[_word(rng, tag) if rng.random() < 0.7 else rng.choice(known)
                           for _ in range(rng.randint(4, 12))] for _ in range(SENTS_PER_CALL)])
        loads.append(calls)
    return loads


def _columns(sentences, seed):
    """Feature columns (POS, chunk) per token; some values are new too."""
    rng = random.Random(seed)
    return [[(rng.choice(POS) if rng.random() < 0.9 else f"X{rng.randint(0, 10 ** 6)}",
              rng.choice(CHUNK)) for _ in s] for s in sentences]


def _run_threads(tag_call, loads):
    """Each thread makes its calls on the shared tagger; returns (outputs
    per thread per call, exceptions)."""
    outputs = [[None] * len(calls) for calls in loads]
    errors = []
    start = threading.Barrier(len(loads))

    def work(k):
        try:
            start.wait()
            for c, sents in enumerate(loads[k]):
                outputs[k][c] = tag_call(sents)
        except Exception as exc:        # reported by the test
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(loads))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return outputs, errors


def _assert_same_as_alone(shared, fresh, tag_call_of, loads, seed):
    """Threads on ``shared`` tag as ``fresh`` does alone; afterwards, in one
    thread, ``shared`` still does, on the words it has cached and on new
    ones (a corrupted cache shows there even when the calls that corrupted
    it happened to come out right)."""
    outputs, errors = _run_threads(tag_call_of(shared), loads)
    assert not errors, f"{len(errors)} thread(s) failed, e.g. {errors[0]!r}"
    alone = tag_call_of(fresh)
    wrong = sum(outputs[k][c] != alone(sents) for k, calls in enumerate(loads)
                for c, sents in enumerate(calls))
    assert wrong == 0, f"{wrong} of {N_THREADS * CALLS} concurrent calls gave other tags than alone"
    seen = [s for calls in loads for sents in calls for s in sents]
    after, expected = tag_call_of(shared)(seen), alone(seen)
    wrong = sum(a != b for a, b in zip(after, expected))
    assert wrong == 0, f"after the threads, {wrong} of {len(seen)} sentences are tagged otherwise"
    for sents in _workloads(seed)[0][:10]:       # new words, one thread
        assert tag_call_of(shared)(sents) == alone(sents)


@pytest.fixture(scope="module")
def pos_bytes():
    return fasttag.load().to_bytes()


@pytest.fixture(scope="module")
def ner_bytes():
    tagger = SpanTagger.train(DATA / "sample_ner.conll", task="ner", epochs=4, verbose=False,
                              gazetteers={"LOC": ["Bonn", "New York"]}, feature_columns=[1, 2],
                              document_features=True)
    return tagger.to_bytes()


def _pos_call(tagger):
    return tagger.tag_sents


def _ner_call(tagger):
    # the columns are a function of the sentences, so every tagger sees the same
    return lambda sents: tagger.tag_sents(sents, columns=_columns(sents, repr(sents)))


def test_pos_tagger_shared_by_threads_tags_new_words_as_alone(pos_bytes):
    shared = fasttag.loads(pos_bytes)
    _assert_same_as_alone(shared, fasttag.loads(pos_bytes), _pos_call, _workloads(1), 2)


def test_span_tagger_shared_by_threads_tags_new_words_as_alone(ner_bytes):
    shared = fasttag.loads(ner_bytes)
    assert {"doc", "gaz"} <= set(shared.meta["extras"])       # every feature path runs
    _assert_same_as_alone(shared, fasttag.loads(ner_bytes), _ner_call, _workloads(3), 4)


@pytest.mark.parametrize("kind", ["pos", "ner"])
def test_cache_cleared_while_other_threads_read_it(kind, pos_bytes, ner_bytes):
    """A tiny cache limit makes nearly every call clear the cache (start
    over) while other threads still hold ids into it."""
    data, call = (pos_bytes, _pos_call) if kind == "pos" else (ner_bytes, _ner_call)
    shared = fasttag.loads(data)
    featurizer = shared.model.featurizer
    words = featurizer if kind == "pos" else featurizer.words
    words.MAX_CACHE = 60
    if kind == "ner":
        featurizer.MAX_CACHE = 20          # the feature-column caches too
    _assert_same_as_alone(shared, fasttag.loads(data), call, _workloads(5), 6)
    # one thread, a batch of known and new words across a clear
    fresh = fasttag.loads(data)
    sents = [KNOWN] + _workloads(7)[0][0] * 10
    assert call(shared)(sents) == call(fresh)(sents)
