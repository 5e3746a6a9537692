"""What the tasks that read each word's UPOS share (lemmas, morphological
features): reading CoNLL-U's FORM, UPOS and one more column, the UPOS as
the featurizer's one column, checking the UPOS a caller gives, and the
best-scored class that a word allows when the predicted one does not.
"""
from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..features.words import POS_TEMPLATES, bad_token, token_lists
from ..model import confidence
from ..text import formats as ftio, output
from .base import Examples
from .records import closed_after

#: The UPOS of a word whose tag nobody gave.
NO_UPOS = "_"

#: Beside the POS tagger's templates: the UPOS (``col1``) alone, with the
#: word's affixes and with its neighbours' UPOS.
UPOS_TEMPLATES = POS_TEMPLATES + (
    "col1[0]", "col1[-1]|col1[0]", "col1[0]|col1[1]",
    "col1[0]|suffix1[0]", "col1[0]|suffix2[0]", "col1[0]|suffix3[0]", "col1[0]|suffix4[0]",
    "col1[0]|suffix5[0]", "col1[0]|lower[0]", "col1[0]|prefix1[0]", "col1[0]|prefix2[0]",
    "col1[0]|short_shape[0]",
)


def read_examples(data, what, field, name):
    """``(words, upos, values)`` per sentence of CoNLL-U ``data`` (a path or
    file; ``field``: the 0-based column of the values) or of Python
    sentences: lists of ``(form, upos, value)`` triples, or Sentence objects;
    ``name`` names the value in messages (``lemma``)."""
    if ftio.is_source(data):
        _, sentences = ftio.read_all(data, "conllu", "upos")
        return Examples([(s.words, s.tags, [r[field] for r in s.rows]) for s in sentences if s.words], {})
    if not hasattr(data, "__iter__") or isinstance(data, (str, bytes)):
        raise TypeError(f"{what} must be a path or a list of sentences, not {type(data).__name__}")
    out = []
    for i, sent in enumerate(data):
        if isinstance(sent, ftio.Sentence):
            if any(len(r) != 10 for r in sent.rows):
                raise InputError(f"{what}: sentence {i} is not CoNLL-U")
            triples = [(r[1], r[3], r[field]) for r in sent.rows]
        else:
            try:
                triples = [tuple(t) for t in sent]
            except TypeError:
                raise TypeError(f"{what}: sentence {i} must be a list of (form, upos, {name}) triples, "
                                f"not {type(sent).__name__}") from None
            if any(len(t) != 3 or not all(isinstance(v, str) for v in t) for t in triples):
                raise TypeError(f"{what}: sentence {i} must be a list of (form, upos, {name}) triples of str")
        if triples:
            words, upos, values = (list(c) for c in zip(*triples))
            out.append((words, upos, values))
    return out


def inputs(examples):
    """The model inputs of ``(words, upos, values)`` examples: the UPOS as the one column."""
    return [(words, [(u,) for u in upos]) for words, upos, _ in examples]


def prediction_examples(sentences, upos):
    """``(words, upos, None)`` examples of token lists and their UPOS
    lists (None: unknown), checked (ValueError naming ``upos``)."""
    sents = token_lists(sentences)
    if upos is None:
        return [(s, [NO_UPOS] * len(s), None) for s in sents]
    upos = list(upos)
    if len(upos) != len(sents):
        raise ValueError(f"upos has {len(upos)} entries for {len(sents)} sentences: give one per sentence")
    for i, (s, u) in enumerate(zip(sents, upos)):
        if isinstance(u, str) or len(u) != len(s) or not all(isinstance(t, str) for t in u):
            raise ValueError(f"upos: sentence {i} needs a list of {len(s)} str tags, one per word")
    return [(s, list(u), None) for s, u in zip(sents, upos)]


def predict_words(predict, sentences, upos, n_threads):
    """``predict`` (a task's prediction over examples) of sentences of
    words and their UPOS; a word that is not a str is a one-line error
    naming it, not a TypeError from deep inside."""
    examples = prediction_examples(sentences, upos)
    try:
        return predict(examples, n_threads)
    except TypeError:
        err = bad_token([words for words, _, _ in examples])
        if err is None:
            raise
        raise err from None


def ranked_words(model, examples, wanted):
    """``((s, i), classes)`` for each ``(s, i)`` of ``wanted`` (ascending):
    word ``i`` of example ``s``'s classes, best-scored first, the examples
    that need it scored in one pass (one sentence's scores held at a time):
    a prediction that a word does not allow is rare."""
    by_sent = {}
    for s, i in wanted:
        by_sent.setdefault(s, []).append(i)
    order = list(by_sent)
    lats = confidence.lattices(model, inputs([examples[s] for s in order]))
    for s, lat in zip(order, lats):
        for i in by_sent[s]:
            yield (s, i), np.argsort(-lat.E[i], kind="stable").tolist()


def conllu_records(tagged, source, json, n_threads, predict, column, what, format=None, column_given=None,
                   tokenizer=None, nbest=None):
    """``(records, how)`` of ``tag_file`` for a task that fills the CoNLL-U
    ``column`` (``lemma``, ``feats``) from FORM and UPOS with
    ``predict(word lists, UPOS lists)``, batches run by the task's
    ``tagged`` on ``n_threads`` threads; ``what`` names the task in messages."""
    if nbest is not None:
        raise InputError(f"option nbest: a {what} gives one answer per word")
    if tokenizer is not None:
        raise InputError(f"option tokenizer: a {what} reads CoNLL-U with UPOS, not raw text")
    if column_given not in (None, column):
        raise InputError(f"option column {column_given}: a {what} fills the {column.upper()} column")
    name, fmt, lines, close = ftio.open_tagging_input(source, format)
    if fmt != "conllu":
        close()
        raise InputError(f"a {what} reads CoNLL-U (FORM and UPOS), not {fmt} input", name)
    sentences = ftio.parse_lines(lines, name, "conllu", "upos")
    records = tagged(ftio.batches(sentences),
                     lambda batch: predict([s.words for s in batch], [s.tags for s in batch]),
                     lambda sent, out: output.Record(sent.words, out, sent.start_line, sentence=sent),
                     n_threads)
    return closed_after(records, close), {"style": "json" if json else "conllu", "column": column}
