"""Scoring only the classes that can win: a lemmatizer's decoder sees the
edit scripts that fit each form.  Checked against the obvious ways: every
script tried on the form, and decoding every class then keeping what fits."""
import random

import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag.features.editscripts import STORED, apply

STEMS = ["talo", "kirja", "auto", "Helsinki", "koira", "mets", "kissa", "ÄITI", "pöytä", "käsi", "vesi", "uni"]
#: (form ending, lemma ending, UPOS): suffixes, a prefix and casing, so that scripts strip at both ends
ENDINGS = [("ssa", "", "NOUN"), ("lla", "", "NOUN"), ("sta", "", "NOUN"), ("t", "", "NOUN"), ("ni", "", "NOUN"),
           ("en", "i", "NOUN"), ("ien", "", "NOUN"), ("", "", "PROPN"), ("issa", "i", "NOUN"), ("kin", "", "ADV")]


def _sentences(seed, n=300):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        sent = []
        for _ in range(rng.randint(2, 8)):
            stem, (end, lemma_end, upos) = rng.choice(STEMS), rng.choice(ENDINGS)
            form = stem + end
            if rng.random() < 0.1:
                form, lemma = "epä" + form, stem + lemma_end        # a prefix stripped
            else:
                lemma = stem + lemma_end
            if rng.random() < 0.2:
                form = form.capitalize()
            sent.append((form, upos, lemma.lower() if upos != "PROPN" else lemma))
        out.append(sent)
    return out


@pytest.fixture(scope="module")
def lemmatizer():
    return fasttag.Lemmatizer.train(_sentences(1), epochs=3, verbose=False)


forms = st.one_of(st.text(min_size=1, max_size=12).filter(lambda w: w.strip() == w and w),
                  st.builds(lambda s, e, p: p + s + e[0], st.sampled_from(STEMS), st.sampled_from(ENDINGS),
                            st.sampled_from(["", "epä", "Epä"])))


@settings(max_examples=300, deadline=None)
@given(form=forms)
def test_the_fitting_scripts_are_those_that_apply(lemmatizer, form):
    tags = lemmatizer.model.tags
    chunk = [([form], [("NOUN",)])]
    got, = lemmatizer.model.candidate_sets(chunk)
    stored = lemmatizer.model.tag_index[STORED]
    in_lexicon = form in {f for f, _, _, _ in lemmatizer._lexicon}      # the stored lemma fits those forms
    expected = tuple(i for i, t in enumerate(tags) if apply(t, form) is not None or (i == stored and in_lexicon))
    assert got == expected
    assert got and list(got) == sorted(set(got))           # never empty: K|||| keeps any form


def _unrestricted(model, examples):
    """Tag ids of every example decoded over every class."""
    sets, model.candidate_sets = model.candidate_sets, None
    try:
        return [list(r) for r in model.predict_ids(examples)]
    finally:
        model.candidate_sets = sets


@pytest.mark.parametrize("seed", range(5))
def test_restricted_decoding_agrees_where_every_class_fits(lemmatizer, seed):
    """Where the decoder over every class picks a fitting script for every
    word of a sentence, restricting it to the fitting ones changes nothing;
    elsewhere the lemma is still one a fitting script makes."""
    sents = _sentences(100 + seed, 60)
    words = [[w for w, _, _ in s] for s in sents]
    upos = [[u for _, u, _ in s] for s in sents]
    examples = [(w, [(u,) for u in us]) for w, us in zip(words, upos)]
    free = _unrestricted(lemmatizer.model, examples)
    restricted = [list(r) for r in lemmatizer.model.predict_ids(examples)]
    tags = lemmatizer.model.tags
    agreeing = 0
    for w, f, r in zip(words, free, restricted):
        assert all(apply(tags[t], form) is not None or tags[t] == STORED for form, t in zip(w, r))
        if all(apply(tags[t], form) is not None for form, t in zip(w, f)):
            assert r == f
            agreeing += 1
    assert agreeing >= len(words) // 2


def test_a_chunk_whose_words_are_all_left_open_decodes_over_every_class(lemmatizer):
    """``candidate_sets`` may leave every word of a chunk open (None): the
    decoder then scores every class, as without candidate sets."""
    sents = _sentences(7, 20)
    examples = [([w for w, _, _ in s], [(u,) for _, u, _ in s]) for s in sents]
    model = lemmatizer.model
    sets = model.candidate_sets
    model.candidate_sets = lambda chunk: [None] * sum(len(words) for words, _ in chunk)
    try:
        open_ = [list(r) for r in model.predict_ids(examples)]
    finally:
        model.candidate_sets = sets
    assert open_ == _unrestricted(model, examples)
