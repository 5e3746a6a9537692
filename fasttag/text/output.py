"""How the tagging commands write predictions (the JSON keys, a public
contract, are documented in docs/formats.md).
"""
import json
from typing import NamedTuple

from . import formats as ftio
from .. import parallel
from .rawtext import Span
from ..display import printable

#: The scheme of a span model's tags in JSON records.
SPAN_SCHEME = "iob2"


def record(words, tags=None, line=None, offsets=None, spans=None, text=None, scheme=None):
    """The JSON object of one sentence.  ``spans``: (label, first token,
    end token) triples; ``text``: the line ``offsets`` point into;
    ``scheme``: the span scheme of ``tags``, for span models."""
    out = {}
    if line is not None:
        out["line"] = line
    out["tokens"] = list(words)
    if tags is not None:
        out["tags"] = list(tags)
    if scheme is not None:
        out["scheme"] = scheme
    if offsets is not None:
        out["offsets"] = [[a, b] for a, b in offsets]
    if spans is not None:
        items = []
        for label, i, j in spans:
            item = {"start": i, "end": j, "label": label}
            if offsets is not None:
                a, b = offsets[i][0], offsets[j - 1][1]
                item.update(text=text[a:b], start_char=a, end_char=b)
            else:
                item["text"] = " ".join(words[i:j])
            items.append(item)
        out["spans"] = items
    return out


#: The most sequences an n-best request may ask for: the decoder keeps that
#: many per tag and position.
MAX_NBEST = 1000


def alternatives(best, spans_of=None):
    """The ``nbest`` entry of a record: ``best`` is a list of (tags, score)
    pairs; ``spans_of(tags)`` gives the (label, start, end) spans of a
    span model's tags."""
    out = []
    for tags, score in best:
        item = {"tags": list(tags), "score": float(score)}
        if spans_of is not None:
            item["spans"] = [{"start": i, "end": j, "label": label} for label, i, j in spans_of(tags)]
        out.append(item)
    return out


_ONE_FIELD = str.maketrans({c: " " for c in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def offsets_in(text, words):
    """(start, end) of each of ``words`` in ``text``, which holds them in
    order with only whitespace between (segmenter output); None if it does
    not."""
    out, at = [], 0
    for w in words:
        while at < len(text) and text[at].isspace():
            at += 1
        if not text.startswith(w, at):
            return None
        out.append((at, at + len(w)))
        at += len(w)
    return out


# ---------------------------------------------------------------- records

class Record(NamedTuple):
    """What a tagging command writes of one sentence (or piece of a line):
    ``line``, its 1-based input line; ``offsets`` into ``text``, that line;
    ``spans``, (label, first token, end token); ``nbest``, the
    :func:`alternatives` entry; ``sentence``, the CoNLL-U or column-file
    sentence to write back; ``ends_line``, False for a piece of a line that
    more pieces follow; ``scheme``, the span scheme of ``tags`` in JSON;
    ``multiword``, the (first word, end word, text) of each surface token
    of several words (raw text in JSON)."""
    words: list
    tags: list = None
    line: int = None
    offsets: list = None
    text: str = None
    spans: list = None
    nbest: list = None
    sentence: object = None
    ends_line: bool = True
    scheme: str = None
    multiword: list = None


#: The styles of :func:`write`.  ``paragraphs``, the plain output of raw
#: text (docs/cli.md): each input line, blank ones included, is a block of
#: its sentences one a line, closed by an empty line.
STYLES = ("json", "tagged", "entities", "conllu", "conll", "words", "paragraphs")


def write(out, records, style, column=None):
    """Write ``records`` (:class:`Record`) to the text stream ``out`` in
    ``style`` (one of :data:`STYLES`; ``column``: the CoNLL-U column that
    ``conllu`` fills).  The model's tags are written printable, and an
    entity's text with its tabs and line breaks as spaces: neither can
    break the line format."""
    if style not in STYLES:
        raise ValueError(f"unknown output style {style!r}: one of {', '.join(STYLES)}")
    if style == "paragraphs":
        _write_paragraphs(out, records)
        return
    started = False                    # words: a piece of this line was written
    for r in records:
        if style == "json":
            obj = record(r.words, r.tags, r.line, r.offsets, r.spans, r.text, r.scheme)
            if r.multiword:
                obj["multiword"] = [{"start": i, "end": j, "text": form} for i, j, form in r.multiword]
            if r.nbest is not None:
                obj["nbest"] = r.nbest
            out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        elif style == "tagged":
            out.write(_sentence_line(r))
            out.write("\n" if r.ends_line else " ")
        elif style == "entities":
            for s in (entity(r, label, i, j) for label, i, j in r.spans):
                out.write(f"{r.line}\t{s.start}\t{s.end}\t{printable(s.label)}\t{s.text.translate(_ONE_FIELD)}\n")
        elif style == "conllu":
            ftio.write_conllu(r.sentence, r.tags, out, column=column)
        elif style == "conll":
            ftio.write_conll(r.sentence, r.tags, out, mode="append")
        elif style == "words":
            if r.words:
                out.write((" " if started else "") + " ".join(r.words))
                started = True
            if r.ends_line:
                out.write("\n")
                started = False


def _write_paragraphs(out, records):
    """Records as a block per input line, blank ones too: its sentences one
    a line, closed by an empty line.  A block is closed once the next
    line's record comes, at the end, or as soon as the input pauses (all
    the records of the lines read are written by then: a pipe given a line
    at a time gets each line's block whole)."""
    line = None                        # the line of the last sentence written
    closed = False                     # its block closed already (the input paused)

    def close():
        nonlocal closed
        if line is not None and not closed:
            out.write("\n")
            closed = True
    with parallel.before_waiting(close):
        for r in records:
            if r.line != line:         # close the blocks before, blank lines not given as records
                out.write("\n" * (r.line - (1 if line is None else line) - closed))
                line, closed = r.line, False
            if r.words:
                out.write(_sentence_line(r) + "\n")
    close()


def _sentence_line(r):
    """The words of the record ``r`` on one line, ``word/TAG`` when tagged."""
    if r.tags is None:
        return " ".join(r.words)
    if len(_SHOWN_TAGS) > 65536:
        _SHOWN_TAGS.clear()
    shown = [_SHOWN_TAGS.get(t) or _SHOWN_TAGS.setdefault(t, printable(t)) for t in r.tags]
    return " ".join(map("/".join, zip(r.words, shown)))


_SHOWN_TAGS = {}        # tag -> printable(tag): a model has few tags, and a file millions of words


def text_style(fmt):
    """The plain style of text input: raw text (``fmt`` "raw") is cut into
    sentences, so each line gives a block (``paragraphs``); pretokenized
    text (``fmt`` "text") is a sentence a line, so a line gives a line."""
    return "paragraphs" if fmt == "raw" else "tagged"


def entity(r, label, i, j):
    """The :class:`fasttag.text.rawtext.Span` of tokens ``i`` to ``j`` of
    the record ``r`` of a line of text."""
    a, b = r.offsets[i][0], r.offsets[j - 1][1]
    return Span(label, r.text[a:b], a, b)


# ---------------------------------------------------------------- reports

def _pct(x):
    return "n/a" if x is None else f"{100 * x:.2f}%"


def report(result):
    """The human-readable text of an ``evaluate`` result, as ``fasttag
    eval`` prints it (what the result holds tells which task's)."""
    if "per_type" in result:
        return _span_report(result)
    if "token_f1" in result:
        return "\n".join([f"{what + 's':<10} precision {100 * result[what + '_precision']:6.2f}%  "
                          f"recall {100 * result[what + '_recall']:6.2f}%  F1 {100 * result[what + '_f1']:6.2f}%"
                          for what in ("token", "sentence", "word")]
                         + [f"speed      {result['chars_per_second']:,.0f} chars/s"])
    if "oov_rate" in result:
        return "\n".join([
            f"precision         {_pct(result['precision'])}",
            f"recall            {_pct(result['recall'])}",
            f"F1                {_pct(result['f1'])}   ({result['gold_words']} gold words, {result['lines']} lines)",
            f"OOV rate          {_pct(result['oov_rate'])}",
            f"OOV recall        {_pct(result['oov_recall'])}",
            f"IV recall         {_pct(result['iv_recall'])}",
            f"speed             {result['chars_per_second']:,.0f} chars/s"])
    if "ufeats" in result:
        return "\n".join([f"bundles           {_pct(result['accuracy'])}   ({result['tokens']} words)",
                          f"UFeats            {_pct(result['ufeats'])}",
                          f"Feat=Val F1       {_pct(result['feature_f1'])}   "
                          f"(precision {_pct(result['feature_precision'])}, recall {_pct(result['feature_recall'])})"])
    if "per_tag" not in result or "known_accuracy" not in result:
        return f"accuracy          {100 * result['accuracy']:.2f}%   ({result['tokens']} tokens)"
    skipped = result.get("unannotated_tokens")
    lines = [f"accuracy          {100 * result['accuracy']:.2f}%   ({result['tokens']} tokens"
             + (f"; {skipped} with gold tag '_' left out)" if skipped else ")"),
             f"known words       {_pct(result['known_accuracy'])}",
             f"unknown words     {_pct(result['unknown_accuracy'])}   ({result['unknown_tokens']} tokens)",
             f"speed             {result['tokens_per_second']:,.0f} tokens/s", "",
             f"{'tag':<10} {'precision':>9} {'recall':>9} {'f1':>9} {'support':>8}"]
    for t, r in result["per_tag"].items():
        lines.append(f"{t:<10} {100 * r['precision']:8.2f}% {100 * r['recall']:8.2f}% "
                     f"{100 * r['f1']:8.2f}% {r['support']:8d}")
    if result["confusions"]:
        lines += ["", "most frequent confusions (gold -> predicted)"]
        lines += [f"  {g:<8} -> {p:<8} {c}" for g, p, c in result["confusions"][:10]]
    return "\n".join(lines)


def _span_report(result):
    """conlleval's text."""
    lines = [f"processed {result['tokens']} tokens with {result['gold_chunks']} phrases; "
             f"found: {result['pred_chunks']} phrases; correct: {result['correct_chunks']}.",
             f"accuracy: {100 * result['accuracy']:6.2f}%; precision: {100 * result['precision']:6.2f}%; "
             f"recall: {100 * result['recall']:6.2f}%; FB1: {100 * result['f1']:6.2f}"]
    for typ, r in result["per_type"].items():
        lines.append(f"{typ:>17}: precision: {100 * r['precision']:6.2f}%; recall: {100 * r['recall']:6.2f}%; "
                     f"FB1: {100 * r['f1']:6.2f}  {r['pred']}")
    lines.append(f"speed: {result['tokens_per_second']:,.0f} tokens/s")
    return "\n".join(lines)
