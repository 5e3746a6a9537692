"""Universal Dependencies documents: CoNLL-U read into sentences, surface
tokens and syntactic words, and written back as valid CoNLL-U.

A raw-text pipeline needs both levels CoNLL-U keeps apart: the surface
tokens of the text (``zum``, with its character offsets) and the words a
tagger annotates (``zu``, ``dem``).  The document's raw text is rebuilt from
its tokens: a token is followed by the spacing its MISC gives
(``SpaceAfter=No``: nothing; ``SpacesAfter=\\s\\n``: those characters; else
one space), and a sentence that opens a paragraph or a document (``#
newpar``, ``# newdoc``) follows a newline instead.  Empty nodes (``8.1``)
are kept aside, unannotated by the taggers and skipped by the CoNLL 2018
evaluation, and written back where they were.
"""
from __future__ import annotations

import contextlib
import gc
import io
from typing import Iterable, Iterator

from ..errors import InputError
from ..files import atomic_file
from .parsers import parse_conllu, split_spacing
from .sources import is_path, open_lines

__all__ = ["UDWord", "UDToken", "UDSentence", "UDDocument", "read_document", "parse_document", "document_of",
           "document_lines",
           "write_document", "format_document", "escape_spaces", "paused_gc", "tokens_lines", "WORD_COLUMNS", "FILLED_COLUMNS"]


class UDWord:
    """A syntactic word: the ten CoNLL-U fields (``id`` an int, the others
    strings, ``_`` where empty) and ``line``, its line in the file read
    (None when built).  A word that is a whole token keeps no
    ``SpaceAfter``/``SpacesAfter`` in ``misc``: its token's ``spacing`` says it."""
    __slots__ = ("id", "form", "lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc", "line")

    def __init__(self, id, form, lemma="_", upos="_", xpos="_", feats="_", head="_", deprel="_", deps="_",
                 misc="_", line=None):
        self.id, self.form, self.lemma, self.upos, self.xpos = id, form, lemma, upos, xpos
        self.feats, self.head, self.deprel, self.deps, self.misc = feats, head, deprel, deps, misc
        self.line = line

    def fields(self):
        """The ten fields as strings."""
        return [str(self.id), self.form, self.lemma, self.upos, self.xpos, self.feats, self.head, self.deprel,
                self.deps, self.misc]

    def __repr__(self):
        return f"UDWord({self.id}, {self.form!r}, upos={self.upos!r})"


class UDToken:
    """A surface token: ``form`` as written, ``start``/``end`` offsets into
    the document's text, ``spacing`` (the text after it: ``""`` for
    ``SpaceAfter=No``, ``" "`` by default), ``words`` (one, or the words of
    a multiword token), ``misc`` (the range line's MISC without the spacing,
    ``_`` for a one-word token) and ``line``."""
    __slots__ = ("form", "start", "end", "spacing", "words", "misc", "line")

    def __init__(self, form, start, end, words, spacing=" ", misc="_", line=None):
        self.form, self.start, self.end, self.words = form, start, end, words
        self.spacing, self.misc, self.line = spacing, misc, line

    @property
    def multiword(self):
        """Whether the token holds several words (a range line ``3-4``)."""
        return len(self.words) > 1

    @property
    def space_after(self):
        """False where CoNLL-U says ``SpaceAfter=No``."""
        return self.spacing != ""

    def __repr__(self):
        return f"UDToken({self.form!r}, {self.start}, {self.end}, {[w.form for w in self.words]})"


class UDSentence:
    """A sentence: ``tokens``; ``newdoc`` and ``newpar`` (None, or the id
    after ``# newdoc id =``, ``""`` without one); ``sent_id``; ``text_comment``
    (the ``# text`` as read, or None) and its ``text_line``; ``comments``
    (other comment lines, verbatim); ``empty_nodes`` (the ten fields of each
    ``8.1`` line); ``start``/``end`` offsets into the document's text;
    ``line`` (its first line)."""
    __slots__ = ("tokens", "newdoc", "newpar", "sent_id", "text_comment", "text_line", "comments", "empty_nodes",
                 "start", "end", "line")

    def __init__(self, tokens, start=0, end=0, newdoc=None, newpar=None, sent_id=None, text_comment=None,
                 text_line=None, comments=(), empty_nodes=(), line=None):
        self.tokens, self.start, self.end = tokens, start, end
        self.newdoc, self.newpar, self.sent_id = newdoc, newpar, sent_id
        self.text_comment, self.text_line = text_comment, text_line
        self.comments, self.empty_nodes, self.line = list(comments), list(empty_nodes), line

    @property
    def words(self):
        """The sentence's syntactic words, in order."""
        return [w for t in self.tokens for w in t.words]

    @property
    def opens_paragraph(self):
        """Whether the text has a paragraph break before it (``# newpar`` or ``# newdoc``)."""
        return self.newpar is not None or self.newdoc is not None


class UDDocument:
    """A CoNLL-U document: ``sentences``, the rebuilt raw ``text`` the
    offsets point into, and ``path`` (the name of what was read, or None)."""

    def __init__(self, sentences, text, path=None):
        self.sentences, self.text, self.path = sentences, text, path

    def sentence_text(self, sentence):
        """The raw text of ``sentence``: its first token's start to its last token's end."""
        return self.text[sentence.start:sentence.end]

    @property
    def tokens(self):
        """Every token of the document, in order."""
        return [t for s in self.sentences for t in s.tokens]

    @property
    def words(self):
        """Every word of the document, in order."""
        return [w for s in self.sentences for t in s.tokens for w in t.words]

    @classmethod
    def from_tokens(cls, text, sentences, path=None):
        """The document of a raw ``text`` split into ``sentences`` of tokens,
        each with ``start``, ``end`` and ``words`` (word forms, or
        :class:`UDWord`), as a tokenizer gives them: the spacing after a token
        is the text up to the next token; a sentence after a gap that holds a
        line break opens a paragraph; the first opens the document; sentences
        are numbered ``sent_id`` 1, 2, ...; the fields not given are ``_``."""
        sentences = [list(s) for s in sentences]
        sentences = [s for s in sentences if s]
        _check_tokens(text, sentences)
        out = []
        for i, (toks, opens, spacings) in enumerate(_layout(text, sentences)):
            sent = UDSentence([], toks[0].start, toks[-1].end, sent_id=str(i + 1))
            if i == 0:
                sent.newdoc = sent.newpar = ""
            elif opens:
                sent.newpar = ""
            n = 0
            for t, spacing in zip(toks, spacings):
                words = []
                for w in t.words:
                    n += 1
                    if not isinstance(w, UDWord):
                        w = UDWord(n, w)
                    w.id = n
                    words.append(w)
                sent.tokens.append(UDToken(text[t.start:t.end], t.start, t.end, words, spacing))
            out.append(sent)
        return cls(out, text, path)


def _token_fault(text, i, j, t, end):
    """Raise the ValueError of :func:`_check_tokens` for token ``j`` of
    sentence ``i``, the previous token ending at ``end``."""
    where = f"sentence {i + 1}, token {j + 1} ({t.start}, {t.end})"
    if not 0 <= t.start < t.end <= len(text):
        raise ValueError(f"{where}: not a non-empty span of the text of {len(text)} characters")
    if t.start < end:
        raise ValueError(f"{where}: begins before the previous token ends ({end})")
    gap = text[end:t.start]
    if gap and not gap.isspace():
        raise ValueError(f"{where}: the text before it is not whitespace: {gap[:20]!r}")
    raise ValueError(f"{where}: a token without words")


def _layout(text, sentences):
    """Per sentence of tokens (none empty): (its tokens, whether a line
    break before it opens a paragraph, the spacing after each token): the
    text up to the next token; after a sentence's last token, a paragraph
    break or the text's end is one space."""
    last = len(sentences) - 1
    prev_end = None
    for i, toks in enumerate(sentences):
        opens = prev_end is not None and _has_break(text[prev_end:toks[0].start])
        spacings = [text[a.end:b.start] for a, b in zip(toks, toks[1:])]
        end = toks[-1].end
        spacing = text[end:len(text) if i == last else sentences[i + 1][0].start]
        if _has_break(spacing) or (i == last and spacing):
            spacing = " "
        spacings.append(spacing)
        prev_end = end
        yield toks, opens, spacings


def _check_tokens(text, sentences):
    """ValueError naming the first token that is not a non-empty stretch of
    ``text`` after the previous one with only whitespace between them (the
    tokens cover every other character)."""
    end, size = 0, len(text)
    for i, toks in enumerate(sentences):
        for j, t in enumerate(toks):
            start = t.start
            if not end <= start < t.end <= size or not t.words or (start > end and not text[end:start].isspace()):
                _token_fault(text, i, j, t, end)
            end = t.end
    if text[end:] and not text[end:].isspace():
        raise ValueError(f"the text after the last token is not whitespace: {text[end:end + 20]!r}")


def _has_break(gap):
    """Whether ``gap`` holds a line end (those of ``str.splitlines``)."""
    return bool(gap) and gap.splitlines() != [gap]


# ---------------------------------------------------------------- reading

_UNESCAPES = {" ": "\\s", "\t": "\\t", "\n": "\\n", "\r": "\\r", "|": "\\p", "\\": "\\\\"}


def escape_spaces(spacing):
    """The ``SpacesAfter`` value of a run of whitespace (``\\s``, ``\\n``,
    ``\\u00A0`` ...)."""
    return "".join(_UNESCAPES.get(c) or f"\\u{ord(c):04X}" for c in spacing)


def read_document(source) -> UDDocument:
    """The :class:`UDDocument` of a CoNLL-U file (a path or a file object).
    A malformed line raises :class:`fasttag.InputError` naming the file and
    the line."""
    name, lines, close = open_lines(source)
    try:
        with paused_gc():
            return parse_document(lines, name)
    finally:
        close()


@contextlib.contextmanager
def paused_gc():
    """The garbage collector paused in the ``with`` block: building a
    document's many small objects would trigger collection after
    collection (over half the reading time)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_document(lines, name):
    """The :class:`UDDocument` of CoNLL-U ``lines`` read from ``name``."""
    return document_of(parse_conllu(lines, name, 1), name)


def document_of(parsed, name):
    """The :class:`UDDocument` of the sentences :func:`fasttag.text.parsers.parse_conllu`
    read from ``name`` (a reader that keeps them too parses the file once)."""
    pieces = []               # the text, in pieces
    length = 0                # len("".join(pieces))
    sentences = []
    shared = {}               # each field value once: a tag or a lemma repeats across the document
    for parsed_sentence in parsed:
        sent = _sentence(parsed_sentence, name, shared.setdefault)
        if sentences:
            sep = "\n" if sent.opens_paragraph else sentences[-1].tokens[-1].spacing
            pieces.append(sep)
            length += len(sep)
        sent.start = length
        last = len(sent.tokens) - 1
        for i, t in enumerate(sent.tokens):
            t.start, t.end = length, length + len(t.form)
            pieces.append(t.form)
            length = t.end
            if i < last:
                pieces.append(t.spacing)
                length += len(t.spacing)
        sent.end = length
        sentences.append(sent)
    return UDDocument(sentences, "".join(pieces), name)


def _comment(sent, line, lineno):
    body = line[1:].strip()
    key, eq, value = body.partition("=")
    key = key.strip()
    for mark in ("newdoc", "newpar"):
        if body == mark or body.startswith((mark + " ", mark + "=")):
            rest = body[len(mark):].strip()
            ident = ""
            if rest.startswith("id") and rest[2:].lstrip().startswith("="):
                ident = rest[2:].lstrip()[1:].strip()
            elif rest:
                sent.comments.append(line)      # "# newpar something" unlike UD's: kept as read
            setattr(sent, mark, ident)
            return
    if eq and key == "text":
        value = line[line.index("=") + 1:]
        sent.text_comment = value[1:] if value.startswith(" ") else value
        sent.text_line = lineno
    elif eq and key == "sent_id":
        sent.sent_id = value.strip() or None        # "# sent_id =" names nothing
    else:
        sent.comments.append(line)


def _sentence(parsed, name, shared):
    """The :class:`UDSentence` of a sentence :func:`parse_conllu` read and
    checked (offsets not yet set); ``shared(value, value)``: the one copy
    of a field value kept."""
    sent = UDSentence([], line=parsed.start_line)
    tokens = sent.tokens
    mwt = None                # the multiword token being filled, and its last word's id
    for lineno, line in enumerate(parsed.lines, parsed.start_line):
        if not line or line.isspace():
            # comments without a sentence (a file header) end here: only document and paragraph marks carry on
            sent.text_comment = sent.text_line = sent.sent_id = None
            continue
        if line[0] == "#":
            _comment(sent, line, lineno)
            continue
        fields = line.split("\t")
        wid, form = fields[0], fields[1]
        if "." in wid:                      # the parser checked every ID's place
            sent.empty_nodes.append(fields)
            continue
        if "-" in wid:
            spacing, misc = split_spacing(fields[9], name, lineno)
            mwt = (UDToken(form, 0, 0, [], spacing, misc, lineno), int(wid.partition("-")[2]))
            continue
        misc = fields[9]
        spacing = " "
        if "Space" in misc:
            spacing, fields[9] = split_spacing(misc, name, lineno)
        word = UDWord(int(wid), form, *[shared(v, v) for v in fields[2:]], line=lineno)
        if mwt is None:
            tokens.append(UDToken(form, 0, 0, [word], spacing, "_", lineno))
            continue
        mwt[0].words.append(word)
        if word.id == mwt[1]:
            tokens.append(mwt[0])
            mwt = None
    return sent


# ---------------------------------------------------------------- writing

def _misc(misc, spacing=None):
    """MISC with the spacing item ``spacing`` calls for (none for None or
    one space) in place of any it had."""
    if "Space" in misc:
        misc = "|".join(x for x in misc.split("|") if not x.startswith(("SpaceAfter=", "SpacesAfter="))) or "_"
    if spacing is None or spacing == " ":
        return misc
    item = "SpaceAfter=No" if spacing == "" else "SpacesAfter=" + escape_spaces(spacing)
    return item if misc == "_" else misc + "|" + item


def _check_field(value, what, where, spaces=True):
    """``value`` as a field (``_`` where empty), or ValueError naming what
    CoNLL-U cannot hold."""
    if not isinstance(value, str):
        raise TypeError(f"{where}: {what} is {type(value).__name__}, not str")
    if not value:
        if what == "FORM" or what == "a token's form":
            raise ValueError(f"{where}: an empty {what}")
        return "_"
    if "\t" in value or "\n" in value or "\r" in value:
        raise ValueError(f"{where}: {what} {value!r} holds a tab or a line break, which CoNLL-U cannot hold")
    if not spaces and " " in value:
        raise ValueError(f"{where}: {what} {value!r} holds a space, which CoNLL-U allows only in FORM, LEMMA "
                         f"and MISC")
    return value


def _head_lines(where, newdoc, newpar, sent_id, text):
    """A sentence's ``# newdoc``, ``# newpar``, ``# sent_id`` and ``# text`` lines."""
    for what, value in (("newdoc", newdoc), ("newpar", newpar), ("sent_id", sent_id)):
        if value is not None and (not isinstance(value, str) or value != "".join(value.split())):
            raise ValueError(f"{where}: {what} {value!r} is not a string without spaces")
    out = []
    if newdoc is not None:
        out.append("# newdoc" + (f" id = {newdoc}" if newdoc else ""))
    if newpar is not None:
        out.append("# newpar" + (f" id = {newpar}" if newpar else ""))
    if sent_id is not None:
        out.append(f"# sent_id = {sent_id}")
    out.append("# text = " + " ".join(text.splitlines()))
    return out


def _check_token(form, spacing, n_words, where):
    """A token's form, checked (with its spacing and its words)."""
    if not n_words:
        raise ValueError(f"{where}: token {form!r} has no words")
    if spacing and not spacing.isspace():
        raise ValueError(f"{where}: the spacing after token {form!r} is not whitespace ({spacing!r})")
    return _check_field(form, "a token's form", where)


def _word_line(n, fields, spacing, where):
    """The line of word ``n`` of its sentence: ``fields`` FORM to MISC
    (nine), each checked (``_`` where empty), MISC given the spacing item of
    ``spacing`` (None: the word's token is a multiword one).  The common
    case, fields without a space, tab, line break or emptiness, is checked
    on the joined line at once."""
    try:
        line = f"{n}\t" + "\t".join(fields)
    except TypeError:           # a field not a string: named below
        line = None
    if line is None or " " in line or "\n" in line or "\r" in line or "\t\t" in line or line[-1] == "\t" \
            or line.count("\t") != 9:
        fields = [_check_field(v, name, where, name in _SPACED) for v, name in zip(fields, _NAMES)]
        line = f"{n}\t" + "\t".join(fields)
    if (spacing is None or spacing == " ") and "Space" not in line:
        return line
    head, _, misc = line.rpartition("\t")
    return head + "\t" + _misc(misc, spacing)


def _range_line(n, n_words, form, misc, spacing, where):
    """The range line of a multiword token whose first word is ``n``."""
    misc = _misc(_check_field(misc, "MISC", where), spacing)
    return f"{n}-{n + n_words - 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}"


def _sentence_lines(doc, index, sent):
    where = f"sentence {index + 1}"
    if not sent.tokens:
        raise ValueError(f"{where} has no tokens: CoNLL-U has no empty sentences")
    out = _head_lines(where, sent.newdoc, sent.newpar, sent.sent_id, doc.sentence_text(sent))
    for c in sent.comments:
        _check_field(c, "a comment", where)
        out.append(c if c.startswith("#") else "# " + c)
    empty = {}
    for fields in sent.empty_nodes:
        empty.setdefault(int(fields[0].split(".")[0]), []).append("\t".join(fields))
    out.extend(empty.pop(0, ()))
    n = 0
    for t in sent.tokens:
        form = _check_token(t.form, t.spacing, len(t.words), where)
        if t.multiword:
            out.append(_range_line(n + 1, len(t.words), form, t.misc, t.spacing, where))
        spacing = None if t.multiword else t.spacing
        for w in t.words:
            n += 1
            out.append(_word_line(n, w.fields()[1:], spacing, where))
            out.extend(empty.pop(n, ()))
    for rest in empty.values():         # empty nodes after a word the sentence no longer has
        out.extend(rest)
    out.append("")
    return out


_NAMES = ("FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
_SPACED = frozenset(("FORM", "LEMMA", "MISC"))
#: The word columns a tagger may fill, by their :class:`UDWord` names, in field order.
WORD_COLUMNS = ("lemma", "upos", "xpos", "feats")
#: Every column of a word after its FORM, by their :class:`UDWord` names, in field order:
#: what a pipeline's components may fill.
FILLED_COLUMNS = ("lemma", "upos", "xpos", "feats", "head", "deprel", "deps", "misc")


def tokens_lines(text, sentences, columns, first_id=1) -> Iterator[str]:
    """The lines :func:`document_lines` writes of
    ``UDDocument.from_tokens(text, sentences)`` with each word's fields of
    ``columns`` (a :data:`FILLED_COLUMNS` name -> per sentence the values of
    its words) filled in, sentences numbered from ``first_id`` (the first
    opens the document where that is 1), without building the document:
    raw text to CoNLL-U at the speed of its tokens and tag lists."""
    kept = [(s, i) for i, s in enumerate(sentences) if s]
    _check_tokens(text, [s for s, _ in kept])
    unknown = sorted(set(columns) - set(FILLED_COLUMNS))
    if unknown:
        raise ValueError(f"columns: {unknown[0]!r} is not one of {', '.join(FILLED_COLUMNS)}")
    for c, values in columns.items():
        if len(values) != len(sentences):
            raise ValueError(f"columns: {c} has values for {len(values)} sentences, not {len(sentences)}")
    for k, (toks, opens, spacings) in enumerate(_layout(text, [s for s, _ in kept])):
        i = kept[k][1]
        where = f"sentence {k + 1}"
        sent_id = first_id + k
        first = k == 0
        yield from _head_lines(where, "" if first and sent_id == 1 else None, "" if first or opens else None,
                               str(sent_id), text[toks[0].start:toks[-1].end])
        n_words = sum(len(t.words) for t in toks)
        blank = ["_"] * n_words
        cols = [columns[c][i] if c in columns else blank for c in FILLED_COLUMNS]
        for c, values in zip(FILLED_COLUMNS, cols):
            if len(values) != n_words:
                raise ValueError(f"columns: {c} has {len(values)} values for the {n_words} words of sentence "
                                 f"{i + 1}")
        rows = zip(*cols)
        n = 0
        for t, spacing in zip(toks, spacings):
            form = _check_token(text[t.start:t.end], spacing, len(t.words), where)
            multi = len(t.words) > 1
            if multi:
                yield _range_line(n + 1, len(t.words), form, "_", spacing, where)
            for w in t.words:
                n += 1
                yield _word_line(n, (w, *next(rows)), None if multi else spacing, where)
        yield ""


def document_lines(doc) -> Iterator[str]:
    """The lines (without terminators) of ``doc`` as CoNLL-U: ``# newdoc``,
    ``# newpar``, ``# sent_id`` where the sentences have them, ``# text``
    (the sentence's raw text, each line end as a space), the other comments,
    range lines of multiword tokens, ``SpaceAfter=No``/``SpacesAfter`` in the
    MISC of the token's line, words numbered 1, 2, ... in each sentence,
    ``_`` for empty fields; a blank line after each sentence."""
    for i, sent in enumerate(doc.sentences):
        yield from _sentence_lines(doc, i, sent)


def write_document(doc, dest):
    """Write ``doc`` as CoNLL-U to ``dest``, a path (written whole or not at
    all) or a text file object; every line is formed before the first is
    written, so a document that cannot be written leaves nothing behind."""
    text = "".join(line + "\n" for line in document_lines(doc))
    if is_path(dest):
        with atomic_file(dest, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
    else:
        dest.write(text)


def format_document(doc) -> str:
    """``doc`` as one CoNLL-U string."""
    buf = io.StringIO()
    write_document(doc, buf)
    return buf.getvalue()

