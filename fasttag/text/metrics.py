"""Every score fasttag reports, in one place, as fractions in [0, 1]
(docs/python-api.md).  The fast dev scorers used while training
(:func:`bmes_word_f1`, :func:`span_f1`) give exactly the full functions' scores.
"""
import itertools
from collections import Counter
from typing import Iterable, List, Optional, Sequence, Tuple

import numpy as np

from . import conll18, schemes
from ..errors import InputError

__all__ = ["score_tagging", "score_spans", "score_segmentation", "score_tokenization", "bmes_word_f1", "span_f1",
           "prf", "foreign_tags"]


def prf(correct: int, gold: int, pred: int) -> Tuple[float, float, float]:
    """Precision, recall and F1 of ``correct`` items among ``pred``
    predicted and ``gold`` gold ones (0.0 where a ratio is undefined)."""
    precision = correct / pred if pred else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def foreign_tags(gold, model_tags, what="tag"):
    """An InputError when most gold tags (a Counter) are not the model's:
    a score near 0 would hide the wrong tag column or tag set."""
    known = set(model_tags)
    total = sum(gold.values())
    foreign = sum(c for t, c in gold.items() if t not in known)
    if total and 2 * foreign > total:
        def some(tags):
            tags = sorted(tags)
            return " ".join(tags[:6]) + (" ..." if len(tags) > 6 else "") + f" ({len(tags)} {what}s)"
        raise InputError(f"{100 * foreign / total:.1f}% of the gold {what}s are not in the model's "
                         f"{what} set: gold {some(gold)}; model {some(known)}; is it the right "
                         f"tag column (option column)?")


# ---------------------------------------------------------------- tagging

def score_tagging(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]],
                  known: Optional[Sequence[bool]] = None) -> dict:
    """Token accuracy of predicted against gold tag lists; with ``known``
    (a flag per token: seen in training) the accuracy of known and unknown
    tokens (None where there are none).  Per-tag precision, recall, f1
    and support; the 20 most frequent confusions as [gold, predicted,
    count]."""
    if len(gold) != len(pred) or any(len(g) != len(p) for g, p in zip(gold, pred)):
        raise InputError("the gold and predicted tags differ in length")
    gold_flat = [t for ts in gold for t in ts]
    pred_flat = [t for ts in pred for t in ts]
    n = len(gold_flat)
    correct = np.fromiter((g == p for g, p in zip(gold_flat, pred_flat)), dtype=bool, count=n)
    tp, fp, fn = Counter(), Counter(), Counter()
    confusions = Counter()
    for g, p in zip(gold_flat, pred_flat):
        if g == p:
            tp[g] += 1
        else:
            fp[p] += 1
            fn[g] += 1
            confusions[(g, p)] += 1
    per_tag = {}
    for t in sorted(set(gold_flat) | set(pred_flat)):
        precision, recall, f1 = prf(tp[t], tp[t] + fn[t], tp[t] + fp[t])
        per_tag[t] = {"precision": precision, "recall": recall, "f1": f1, "support": tp[t] + fn[t]}
    result = {
        "accuracy": float(correct.mean()) if n else 0.0,
        "tokens": n,
        "sentences": len(gold),
        "per_tag": per_tag,
        "confusions": [[g, p, c] for (g, p), c in confusions.most_common(20)],
    }
    if known is not None:
        known = np.asarray(known, dtype=bool)
        if known.shape != (n,):
            raise InputError(f"{len(known)} known-word flags for {n} tokens")
        result["known_accuracy"] = float(correct[known].mean()) if known.any() else None
        result["unknown_accuracy"] = float(correct[~known].mean()) if (~known).any() else None
        result["unknown_tokens"] = int((~known).sum())
    return result


# ---------------------------------------------------------------- spans

def score_spans(
    gold_sequences: Iterable[Sequence[str]],
    pred_sequences: Iterable[Sequence[str]],
    scheme: str = "iob2",
) -> dict:
    """conlleval's scores of predicted against gold tag sequences (a chunk is
    correct when type, start and end match): a dict of precision, recall, f1,
    accuracy, tokens, gold_chunks, pred_chunks, correct_chunks and per_type
    ({type: {precision, recall, f1, gold, pred, correct}}); 0.0 where a ratio
    is undefined.  InputError when the sides differ in sequences or lengths.
    """
    schemes.check_scheme(scheme)
    tokens = correct_tags = 0
    counts: dict = {}  # type -> [gold, pred, correct]
    for index, (gold, pred) in _in_step(gold_sequences, pred_sequences, lambda side, index: InputError(
            f"the {side} has fewer sequences than the other side ({index})")):
        if len(gold) != len(pred):
            raise InputError(
                f"sequence {index}: gold has {len(gold)} tags, prediction has {len(pred)}"
            )
        tokens += len(gold)
        correct_tags += sum(1 for g, p in zip(gold, pred) if g == p)
        gold_spans = schemes.spans(gold, scheme)
        pred_spans = schemes.spans(pred, scheme)
        pred_set = set(pred_spans)
        for typ, _, _ in gold_spans:
            counts.setdefault(typ, [0, 0, 0])[0] += 1
        for span in pred_spans:
            counts.setdefault(span[0], [0, 0, 0])[1] += 1
        for span in set(gold_spans) & pred_set:
            counts[span[0]][2] += 1

    per_type = {}
    for typ in sorted(counts):
        g, p, c = counts[typ]
        tp, tr, tf = prf(c, g, p)
        per_type[typ] = {"precision": tp, "recall": tr, "f1": tf, "gold": g, "pred": p, "correct": c}
    gold_chunks = sum(v[0] for v in counts.values())
    pred_chunks = sum(v[1] for v in counts.values())
    correct_chunks = sum(v[2] for v in counts.values())
    precision, recall, f1 = prf(correct_chunks, gold_chunks, pred_chunks)
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "accuracy": correct_tags / tokens if tokens else 0.0,
        "tokens": tokens,
        "gold_chunks": gold_chunks,
        "pred_chunks": pred_chunks,
        "correct_chunks": correct_chunks,
        "per_type": per_type,
    }


def _in_step(gold, pred, error):
    """(index, (gold item, predicted item)) of two iterables read in step;
    ``error(side, index)`` is raised when the side "gold" or "prediction"
    ends before the other."""
    missing = object()
    for index, (g, p) in enumerate(itertools.zip_longest(gold, pred, fillvalue=missing)):
        if g is missing or p is missing:
            raise error("gold" if g is missing else "prediction", index)
        yield index, (g, p)


def span_f1(gold_spans: set, pred_spans: set) -> float:
    """F1 of two sets of spans (any hashable span identity)."""
    return prf(len(gold_spans & pred_spans), len(gold_spans), len(pred_spans))[2]


# ---------------------------------------------------------------- segmentation

def _clean(words: Sequence[str]) -> List[str]:
    """The words with any whitespace inside removed, empty ones dropped."""
    out = []
    for w in words:
        w = "".join(w.split())
        if w:
            out.append(w)
    return out


def _word_spans(words: Sequence[str]) -> List[Tuple[int, int]]:
    """(start, end) character offsets of consecutive words within their line."""
    out = []
    pos = 0
    for w in words:
        out.append((pos, pos + len(w)))
        pos += len(w)
    return out


def score_segmentation(
    gold: Iterable[Sequence[str]],
    pred: Iterable[Sequence[str]],
    words: Optional[Iterable[str]] = None,
) -> dict:
    """Score a predicted segmentation against the gold one (a list of words
    per line).  `words`: the training word list for oov_rate, oov_recall and
    iv_recall (else None).  Returns precision, recall, f1, those three, and
    gold_words, pred_words, correct_words, lines; a recall over no OOV (or IV)
    token is None, another undefined ratio 0.0.  InputError (naming the line) when a line's words spell
    different text on the two sides, or the sides differ in lines.
    """
    if words is not None and not isinstance(words, (set, frozenset, dict)):
        words = set(words)
    n_lines = gold_words = pred_words = correct = 0
    oov = oov_correct = 0
    for i, (g, p) in _in_step(gold, pred, lambda side, i: InputError(
            f"line {i + 1}: the {side} has no line {i + 1}", line=i + 1)):
        lineno = i + 1
        g, p = _clean(g), _clean(p)
        g_text, p_text = "".join(g), "".join(p)
        if g_text != p_text:
            raise InputError(
                f"line {lineno}: gold and predicted words spell different text "
                f"({g_text[:30]!r} vs {p_text[:30]!r})",
                line=lineno,
            )
        pred_spans = set(_word_spans(p))
        for w, span in zip(g, _word_spans(g)):
            hit = span in pred_spans
            correct += hit
            if words is not None and w not in words:
                oov += 1
                oov_correct += hit
        gold_words += len(g)
        pred_words += len(p)
        n_lines = lineno

    precision, recall, f1 = prf(correct, gold_words, pred_words)
    result = {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "oov_rate": None,
        "oov_recall": None,
        "iv_recall": None,
        "gold_words": gold_words,
        "pred_words": pred_words,
        "correct_words": correct,
        "lines": n_lines,
    }
    if words is not None:
        result["oov_rate"] = oov / gold_words if gold_words else 0.0
        result["oov_recall"] = oov_correct / oov if oov else None
        result["iv_recall"] = (correct - oov_correct) / (gold_words - oov) if gold_words > oov else None
    return result


def bmes_word_f1(pred: List[np.ndarray], gold: List[np.ndarray]) -> float:
    """Word F1 of predicted against gold BMES id arrays (one per line),
    from the word ends alone; equal to :func:`score_segmentation`'s f1
    for valid BMES sequences."""
    if not pred:
        return 0.0
    p = np.concatenate(pred) >= 2           # a word ends after this character (E or S)
    g = np.concatenate(gold) >= 2
    lengths = np.array([len(x) for x in gold], dtype=np.int64)
    first = np.zeros(len(g), dtype=bool)
    first[np.cumsum(lengths)[:-1][lengths[1:] > 0]] = True
    if len(g):
        first[0] = True
    # a gold word is right when the prediction agrees with every end flag
    # from the previous word's end (exclusive at a line start) to its own
    bad = np.concatenate(([0], np.cumsum(p != g)))
    g_end = np.flatnonzero(g)
    g_start = np.concatenate(([0], g_end[:-1] + 1))
    lo = np.where(first[g_start], g_start, g_start - 1)
    correct = int(np.sum(bad[g_end + 1] - bad[lo] == 0))
    return prf(correct, int(g.sum()), int(p.sum()))[2]


# ---------------------------------------------------------------- tokenization

def score_tokenization(gold, system):
    """Scores of a tokenization against the gold one, as the CoNLL 2018
    script computes them (:mod:`fasttag.text.conll18`; docs/tasks.md,
    scores).  ``gold`` and ``system``: lists of sentences of
    :class:`fasttag.text.goldtext.SurfaceToken` over the same text.  Returns
    ``token_precision``, ``token_recall``, ``token_f1``, the same for
    ``sentence_`` and ``word_``, and ``gold_tokens``, ``system_tokens``,
    ``correct_tokens`` (and for sentences and words)."""
    # Offsets into one text serve as the script's offsets into the text
    # without spaces: tokens begin and end on other characters, so every
    # comparison the alignment makes comes out the same.
    def spans(sents):
        toks = [(t.start, t.end) for s in sents for t in s]
        sent = [(s[0].start, s[-1].end) for s in sents if s]
        return toks, sent

    g_tok, g_sent = spans(gold)
    s_tok, s_sent = spans(system)
    g_words, s_words = _word_list(gold), _word_list(system)
    scores = {"token": conll18.Score(conll18.span_matches(g_tok, s_tok), len(g_tok), len(s_tok)),
              "sentence": conll18.Score(conll18.span_matches(g_sent, s_sent), len(g_sent), len(s_sent)),
              "word": conll18.Score(len(conll18.align_words(g_words, s_words)), len(g_words), len(s_words))}
    out = {}
    for what, score in scores.items():
        out[f"{what}_precision"], out[f"{what}_recall"], out[f"{what}_f1"] = score.precision, score.recall, score.f1
        out[f"gold_{what}s"], out[f"system_{what}s"], out[f"correct_{what}s"] = score.gold, score.system, score.correct
    return out


def _word_list(sentences):
    """The words of sentences of tokens as :class:`conll18.Unit`: the words
    of a multiword token have the token's span."""
    return [conll18.Unit(t.start, t.end, len(t.words) > 1, w.lower())
            for s in sentences for t in s for w in t.words]
