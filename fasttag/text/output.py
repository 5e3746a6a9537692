"""How the tagging commands write predictions.

Human output is one sentence a line of ``word/TAG`` tokens, or for
``fasttag ner`` one entity a line (``LINE<TAB>START<TAB>END<TAB>TYPE<TAB>TEXT``,
character offsets in the input line).  ``--json`` writes JSON Lines, one
object per sentence, with ``tokens``, ``tags`` (IOB2 for span models, and
``"scheme": "iob2"``), ``line``, ``offsets``, ``spans`` and ``nbest``; the
keys are documented in docs/formats.md and are a public contract.
"""
import json

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


#: The most sequences an n-best request may ask for (``n_best``, ``--nbest``):
#: the decoder keeps that many per tag and position, so an unbounded number
#: is unbounded memory.
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


def write_json(out, obj):
    """One JSON Lines record (UTF-8 text, not ASCII escapes)."""
    out.write(json.dumps(obj, ensure_ascii=False))
    out.write("\n")


def write_tagged(out, words, tags, end="\n"):
    """``word/TAG word/TAG ...``, then ``end``: the line end, or a space
    before the next piece of the same line.  The words are written as
    they are, the model's tags printable (a tag cannot end the line or
    send an escape sequence to a terminal)."""
    out.write(" ".join(f"{w}/{printable(t)}" for w, t in zip(words, tags)))
    out.write(end)


_ONE_FIELD = str.maketrans({c: " " for c in "\t\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def write_entities(out, line, spans):
    """One ``LINE START END TYPE TEXT`` line (tab-separated) per span of
    a sentence (:class:`fasttag.text.rawtext.Span` items).  TEXT is the line's
    characters START to END as they are, except that tabs and line
    breaks, which would end the field or the line, are written as spaces;
    TYPE, the model's, printable."""
    for s in spans:
        out.write(f"{line}\t{s.start}\t{s.end}\t{printable(s.label)}\t{s.text.translate(_ONE_FIELD)}\n")


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
