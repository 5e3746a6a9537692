"""Shared machinery for fasttag's side-by-side benchmarks.

Everything here is independent of fasttag itself (the benchmarks must not
trust the code they measure), so the corpus readers and scorers below are
small re-implementations:

* ``run_isolated`` runs one system in a fresh ``spawn`` process so that its
  peak RSS is measured alone;
* ``timer`` measures wall time and CPU time together;
* ``make_result`` builds the uniform result dict every system returns
  (anchors and fasttag alike), so rows from different systems line up in one
  table;
* scorers: ``tagging_metrics`` (token accuracy, known/unknown split),
  ``conll_f1`` (conlleval span semantics), ``score_seg`` (word P/R/F1 with OOV
  and IV recall);
* corpus readers for the shared corpora in ``../shared/data`` (relative to the
  repository root).

Result dicts use fractions in [0, 1] for scores, seconds for times and bytes
for sizes; formatting (percentages, "12.3x") happens only in the tables.
"""
from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import resource
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

REPO_ROOT = Path(__file__).resolve().parent.parent
DATA_ROOT = REPO_ROOT.parent / "shared" / "data"

__all__ = [
    "REPO_ROOT", "DATA_ROOT", "IsolatedError", "run_isolated", "run_jobs",
    "Timer", "timer", "make_result", "format_table", "ratio", "pct", "mb",
    "data_path", "load_conllu", "load_columns", "load_columns_all",
    "load_segmented", "load_lines", "load_wordlist", "iob1_to_iob2",
    "rows_iob1_to_iob2", "tagging_metrics", "conll_spans", "conll_f1",
    "score_seg", "vocabulary", "Job", "quiet", "NER_COLUMN_OPTIONS",
]

#: CoNLL-2003 NER trained as the recorded NER numbers were: the POS and
#: chunk columns and the document features beside the words (``task="ner"``
#: trains on the words alone by default, so that its model tags raw text).
NER_COLUMN_OPTIONS = {"feature_columns": [1, 2], "document_features": True}


# --------------------------------------------------------------------------
# Process isolation
# --------------------------------------------------------------------------

class IsolatedError(RuntimeError):
    """An exception raised inside ``run_isolated``'s child process.

    ``child_traceback`` holds the child's formatted traceback; it is also part
    of the message so that it shows up when the error is printed.
    """

    def __init__(self, fn_name: str, child_traceback: str):
        self.child_traceback = child_traceback
        super().__init__(
            f"{fn_name} failed in its isolated process; child traceback:\n"
            f"{child_traceback}"
        )


def _ru_maxrss_mb(who=resource.RUSAGE_SELF) -> float:
    # ru_maxrss is in kilobytes on Linux (bytes on macOS).
    peak = resource.getrusage(who).ru_maxrss
    if os.uname().sysname == "Darwin":
        peak /= 1024
    return peak / 1024


def _proc_status_mb(field: str) -> float | None:
    """A memory field of /proc/self/status in MB (Linux), else None."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _vm_hwm_mb() -> float | None:
    """Peak RSS of this process's current address space (Linux VmHWM)."""
    return _proc_status_mb("VmHWM")


def _peak_rss_mb() -> float:
    """This process's peak RSS in MB.

    Not plain ``ru_maxrss`` on Linux: a ``spawn`` child is fork+exec'd from
    the parent, and at exec the kernel folds the pre-exec address space's
    high-water mark (a copy of the parent's, i.e. the parent's RSS) into the
    child's ``ru_maxrss``; so every child would report at least the parent's
    RSS (measured: a child of a 300 MB parent reports 315 MB, VmHWM 15 MB).
    ``VmHWM`` from /proc/self/status covers only the child's own address
    space since exec. Elsewhere, fall back to ``ru_maxrss``.
    """
    hwm = _vm_hwm_mb()
    return hwm if hwm is not None else _ru_maxrss_mb()


def _isolated_child(conn, fn, args, kwargs):
    try:
        # RSS of the bare child (interpreter, harness, unpickled arguments)
        # before the system imports or does anything.
        baseline = _proc_status_mb("VmRSS")
        result = fn(*args, **kwargs)
        if not isinstance(result, dict):
            raise TypeError(
                f"{getattr(fn, '__name__', fn)} returned {type(result).__name__}, "
                "expected a dict"
            )
        result = dict(result)
        result["peak_rss_mb"] = _peak_rss_mb()
        result["baseline_rss_mb"] = baseline
        # The raw value, for reference (inflated by the parent's RSS on Linux).
        result["ru_maxrss_mb"] = _ru_maxrss_mb()
        children = _ru_maxrss_mb(resource.RUSAGE_CHILDREN)
        if children:
            # Only systems that start their own worker processes get this key
            # (same caveat: it includes the fork-time copy of the child).
            result["peak_rss_children_mb"] = children
        conn.send(("ok", result))
    except BaseException:  # noqa: BLE001 - everything goes back to the parent
        conn.send(("error", traceback.format_exc()))
    finally:
        conn.close()


def run_isolated(fn: Callable[..., dict], *args, **kwargs) -> dict:
    """Run ``fn(*args, **kwargs)`` in a fresh ``spawn`` process.

    ``fn`` must be a module-level function (it is pickled by reference) and
    must return a dict. Returns that dict plus ``peak_rss_mb``, the child's
    peak resident set size when ``fn`` returned (over its whole life: the
    interpreter, the imports, the arguments it received and the system's own
    work; see ``_peak_rss_mb`` for why this is VmHWM rather than
    ``ru_maxrss`` on Linux, which is kept as ``ru_maxrss_mb``). Exceptions in
    the child are re-raised as ``IsolatedError`` carrying the child's
    traceback text. ``baseline_rss_mb`` is the child's RSS just before
    ``fn`` is called (interpreter + harness + the unpickled arguments), so
    ``peak_rss_mb - baseline_rss_mb`` is what the system itself added
    (library imports included). ``fn`` may live in a script's ``__main__``
    only if that script guards its entry point with
    ``if __name__ == "__main__"`` (spawn re-imports it).
    """
    ctx = multiprocessing.get_context("spawn")
    parent_conn, child_conn = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_isolated_child, args=(child_conn, fn, args, kwargs))
    proc.start()
    child_conn.close()  # so that recv() sees EOF if the child dies silently
    name = getattr(fn, "__qualname__", repr(fn))
    try:
        status, payload = parent_conn.recv()
    except EOFError:
        proc.join()
        raise IsolatedError(
            name, f"child exited with code {proc.exitcode} without a result "
            "(killed, out of memory, or a crash in native code)\n",
        ) from None
    finally:
        parent_conn.close()
    proc.join()
    if status != "ok":
        raise IsolatedError(name, payload)
    return payload


@dataclass
class Job:
    """One benchmark run: ``label`` names the row, ``fn(*args, **kwargs)``."""

    label: str
    fn: Callable[..., dict]
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)


def run_jobs(jobs: Iterable[Job], verbose: bool = True) -> tuple[list[dict], list[tuple[str, str]]]:
    """Run each job isolated, one after another.

    Returns ``(rows, failures)``: the result dicts (each with ``label`` added)
    and ``(label, traceback)`` for the jobs that raised. A failure does not
    stop the other jobs.
    """
    rows, failures = [], []
    for job in jobs:
        if verbose:
            print(f"  running {job.label} ...", flush=True)
        t0 = time.perf_counter()
        try:
            res = run_isolated(job.fn, *job.args, **job.kwargs)
        except IsolatedError as exc:
            failures.append((job.label, exc.child_traceback))
            if verbose:
                print(f"  FAILED {job.label}:\n{exc.child_traceback}", flush=True)
            continue
        res = {"label": job.label, **res}
        rows.append(res)
        if verbose:
            print(f"  done {job.label} in {time.perf_counter() - t0:.1f}s", flush=True)
    return rows, failures


# --------------------------------------------------------------------------
# Timing
# --------------------------------------------------------------------------

def _children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


class Timer:
    """Wall and CPU time of a block.

    ``cpu`` is this process's CPU time (``time.process_time``: user + system,
    all threads) plus the CPU time of child processes reaped during the
    block, so a system that fans work out to worker processes is not
    flattered. ``wall`` is ``time.perf_counter`` time.
    """

    wall: float = 0.0
    cpu: float = 0.0

    def __enter__(self) -> "Timer":
        self._w0 = time.perf_counter()
        self._c0 = time.process_time()
        self._k0 = _children_cpu()
        return self

    def __exit__(self, *exc) -> None:
        self.wall = time.perf_counter() - self._w0
        self.cpu = (time.process_time() - self._c0) + (_children_cpu() - self._k0)

    def __repr__(self) -> str:
        return f"Timer(wall={self.wall:.3f}s, cpu={self.cpu:.3f}s)"


def timer() -> Timer:
    """``with timer() as t: ...`` then read ``t.wall`` and ``t.cpu`` (seconds)."""
    return Timer()


def make_result(
    system: str,
    *,
    train: Timer | None = None,
    tag: Timer | None = None,
    n_items: int | None = None,
    unit: str = "tokens",
    model_bytes: int | None = None,
    load: Timer | None = None,
    **metrics: Any,
) -> dict:
    """The uniform result dict.

    ``train``/``tag``/``load`` are finished timers; ``n_items`` is how many
    ``unit`` (tokens, chars, rows) the tag phase processed. Keys produced:
    ``system``, ``train_cpu_s``, ``train_wall_s``, ``tag_cpu_s``,
    ``tag_wall_s``, ``tag_<unit>_per_s`` (on wall time),
    ``tag_<unit>_per_cpu_s``, ``load_cpu_s``/``load_wall_s`` (model loading,
    when separate from training), ``model_bytes`` and the metrics given.
    """
    res: dict[str, Any] = {"system": system}
    if train is not None:
        res["train_cpu_s"] = train.cpu
        res["train_wall_s"] = train.wall
    if load is not None:
        res["load_cpu_s"] = load.cpu
        res["load_wall_s"] = load.wall
    if tag is not None:
        res["tag_cpu_s"] = tag.cpu
        res["tag_wall_s"] = tag.wall
        if n_items is not None:
            res[f"n_{unit}"] = n_items
            res[f"tag_{unit}_per_s"] = n_items / tag.wall if tag.wall > 0 else None
            res[f"tag_{unit}_per_cpu_s"] = n_items / tag.cpu if tag.cpu > 0 else None
    res["model_bytes"] = model_bytes
    res.update(metrics)
    return res


# --------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------

def pct(x: float | None, digits: int = 2) -> str:
    """0.9712 -> '97.12'."""
    return "n/a" if x is None else f"{100 * x:.{digits}f}"


def mb(nbytes: float | None, digits: int = 1) -> str:
    """Bytes -> megabytes text."""
    return "n/a" if nbytes is None else f"{nbytes / 1e6:.{digits}f}"


def seconds(v: float | None) -> str:
    """CPU seconds: whole from 100 up, one decimal below ('-' when missing)."""
    return "-" if v is None else f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def whole(v: float | None) -> str:
    """A count or rate as a whole number with thousands separators ('-' when missing)."""
    return "-" if v is None else f"{v:,.0f}"


def plain(v: Any) -> str:
    """The value as it prints ('-' when missing)."""
    return "-" if v is None else str(v)


def ratio(a: float | None, b: float | None, digits: int = 1) -> str:
    """``a / b`` as '12.3x' ('n/a' when either is missing or b is 0)."""
    if a is None or b is None or b == 0:
        return "n/a"
    return f"{a / b:.{digits}f}x"


def _default_fmt(v: Any) -> str:
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if v == 0:
            return "0"
        if abs(v) >= 1000:
            return f"{v:,.0f}"
        if abs(v) >= 100:
            return f"{v:.1f}"
        return f"{v:.3g}" if abs(v) < 1 else f"{v:.2f}"
    return str(v)


def format_table(rows: Sequence[dict], columns: Sequence) -> str:
    """A Markdown table of ``rows`` (dicts).

    Each column is a key, or ``(key, header)``, or ``(key, header, fmt)``
    where ``fmt`` is a callable (value -> str) or a format string such as
    ``"{:.2f}"``. ``key`` may also be a callable row -> value (useful for
    ratios against a baseline row). Missing values print as ``-``.
    """
    specs = []
    for col in columns:
        if isinstance(col, str):
            col = (col, col)
        key, header, fmt = (tuple(col) + (None,))[:3]
        specs.append((key, header, fmt))
    header = "| " + " | ".join(h for _, h, _ in specs) + " |"
    align = "|" + "|".join("---" if i == 0 else "---:" for i in range(len(specs))) + "|"
    lines = [header, align]
    for row in rows:
        cells = []
        for key, _, fmt in specs:
            if callable(key):
                v = key(row)
            else:
                if key not in row:
                    cells.append("-")
                    continue
                v = row[key]
            if fmt is None:
                s = _default_fmt(v)
            elif callable(fmt):
                s = fmt(v)
            else:
                s = "n/a" if v is None else fmt.format(v)
            cells.append(str(s).replace("|", "\\|"))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

def data_path(*parts: str) -> Path:
    """A path under ``../shared/data`` (relative to the repository root).

    Raises ``SystemExit`` with a clear message if the folder or the file is
    absent (a fresh clone elsewhere does not have the shared corpora).
    """
    if not DATA_ROOT.is_dir():
        raise SystemExit(
            "benchmark corpora not found: expected the shared data folder "
            "../shared/data beside the repository root (see its README.md)"
        )
    path = DATA_ROOT.joinpath(*parts)
    if not path.exists():
        rel = "/".join(("../shared/data",) + parts)
        raise SystemExit(f"benchmark corpus file not found: {rel}")
    return path


def _read_lines(path) -> list[str]:
    with open(path, encoding="utf-8-sig") as f:
        return [line.rstrip("\r\n") for line in f]


_CONLLU_COLS = {"id": 0, "form": 1, "lemma": 2, "upos": 3, "xpos": 4, "feats": 5}


def load_conllu(path, column: str = "upos") -> list[tuple[list[str], list[str]]]:
    """CoNLL-U -> ``[(words, tags)]`` with ``tags`` from ``column``
    (``upos``, ``xpos``, ``lemma``, ... or a 0-based int). Skips comments,
    multiword-token ranges (``1-2``) and empty nodes (``8.1``)."""
    col = _CONLLU_COLS[column] if isinstance(column, str) else int(column)
    sents: list[tuple[list[str], list[str]]] = []
    words: list[str] = []
    tags: list[str] = []
    for line in _read_lines(path) + [""]:
        if not line.strip():
            if words:
                sents.append((words, tags))
                words, tags = [], []
            continue
        if line.startswith("#"):
            continue
        fields = line.split("\t")
        tid = fields[0]
        if "-" in tid or "." in tid:
            continue
        words.append(fields[1])
        tags.append(fields[col])
    return sents


# "# key = value" comment lines (Brown's "# source = ca01 (news)", CoNLL-U
# style), but not a token line whose word is "#" ("# # B-NP" in CoNLL-2000,
# "#<TAB>tag" in Brown).
_COMMENT_RE = re.compile(r"^#\s*[A-Za-z_][\w.-]*\s*=")


def _split_fields(line: str) -> list[str]:
    return line.split("\t") if "\t" in line else line.split()


def load_columns_all(path) -> list[list[list[str]]]:
    """Column files (CoNLL-2000/2003, Brown) -> sentences of token rows, each
    row the list of all columns. Blank lines separate sentences;
    ``-DOCSTART-`` lines and ``# key = value`` comment lines are skipped."""
    sents: list[list[list[str]]] = []
    cur: list[list[str]] = []
    for line in _read_lines(path) + [""]:
        if not line.strip():
            if cur:
                sents.append(cur)
                cur = []
            continue
        if line.startswith("-DOCSTART-") or _COMMENT_RE.match(line):
            continue
        cur.append(_split_fields(line.strip("\r\n")))
    return sents


def load_columns(path, word_col: int = 0, tag_col: int = -1) -> list[tuple[list[str], list[str]]]:
    """Column files -> ``[(words, tags)]`` from the given columns."""
    return [
        ([row[word_col] for row in sent], [row[tag_col] for row in sent])
        for sent in load_columns_all(path)
    ]


def load_segmented(path) -> list[list[str]]:
    """Segmented text (words separated by any whitespace: one space in
    People's Daily, two in SIGHAN gold) -> list of word lists. Blank lines
    are dropped (SIGHAN files end with one)."""
    return [line.split() for line in _read_lines(path) if line.strip()]


def load_lines(path) -> list[str]:
    """Raw text lines (CRLF and surrounding whitespace stripped), blank lines
    dropped, so ``load_lines(pku_test)`` aligns with ``load_segmented(gold)``."""
    return [line.strip() for line in _read_lines(path) if line.strip()]


def load_wordlist(path) -> set[str]:
    """One word per line -> set (e.g. SIGHAN's ``pku_training_words.utf8``)."""
    return {line.strip() for line in _read_lines(path) if line.strip()}


def vocabulary(sents: Iterable) -> set[str]:
    """Word forms of ``[(words, tags)]`` or ``[[word, ...]]`` sentences."""
    vocab: set[str] = set()
    for s in sents:
        words = s[0] if isinstance(s, tuple) else s
        vocab.update(words)
    return vocab


# --------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------

def tagging_metrics(gold: Sequence[tuple[Sequence[str], Sequence[str]]],
                    pred_tags: Sequence[Sequence[str]],
                    train_vocab: set[str] | None = None) -> dict:
    """Per-token accuracy; with ``train_vocab`` also accuracy on known and on
    unknown tokens (word form, case-sensitive, seen in training or not)."""
    if len(gold) != len(pred_tags):
        raise ValueError(f"{len(gold)} gold sentences but {len(pred_tags)} predicted")
    n = c = nk = ck = nu = cu = 0
    for i, ((words, tags), pred) in enumerate(zip(gold, pred_tags)):
        if len(pred) != len(tags):
            raise ValueError(f"sentence {i}: {len(tags)} gold tags, {len(pred)} predicted")
        for w, g, p in zip(words, tags, pred):
            ok = g == p
            n += 1
            c += ok
            if train_vocab is not None:
                if w in train_vocab:
                    nk += 1
                    ck += ok
                else:
                    nu += 1
                    cu += ok
    res = {"accuracy": c / n if n else None, "n_eval_tokens": n}
    if train_vocab is not None:
        res["known_accuracy"] = ck / nk if nk else None
        res["unknown_accuracy"] = cu / nu if nu else None
        res["unknown_rate"] = nu / n if n else None
    return res


def _split_tag(tag: str) -> tuple[str, str]:
    if tag in ("O", "", "-X-"):
        return "O", ""
    if "-" in tag:
        prefix, typ = tag.split("-", 1)
        return prefix, typ
    return tag, ""  # bare "B"/"I" (untyped) tags


def iob1_to_iob2(tags: Sequence[str]) -> list[str]:
    """IOB1 (CoNLL-2003: B- only between adjacent same-type chunks) -> IOB2
    (every chunk starts with B-). Idempotent on valid IOB2."""
    out = []
    prev_p, prev_t = "O", ""
    for tag in tags:
        p, t = _split_tag(tag)
        if p == "I" and (prev_p == "O" or prev_t != t):
            tag = f"B-{t}" if t else "B"
            p = "B"
        out.append(tag)
        prev_p, prev_t = p, t
    return out


def rows_iob1_to_iob2(sents: Sequence[Sequence[Sequence[str]]], col: int = -1) -> list[list[list[str]]]:
    """Convert column ``col`` of token-row sentences from IOB1 to IOB2."""
    out = []
    for sent in sents:
        new = iob1_to_iob2([row[col] for row in sent])
        rows = []
        for row, tag in zip(sent, new):
            row = list(row)
            row[col] = tag
            rows.append(row)
        out.append(rows)
    return out


def _end_of_chunk(prev_p, p, prev_t, t) -> bool:
    # conlleval's endOfChunk (plus S-, which conlleval does not know).
    if prev_p in ("E", "S"):
        return True
    if prev_p in ("B", "I") and p in ("B", "O", "S"):
        return True
    if prev_p != "O" and prev_t != t:
        return True
    return False


def _start_of_chunk(prev_p, p, prev_t, t) -> bool:
    # conlleval's startOfChunk (plus S-).
    if p in ("B", "S"):
        return True
    if p in ("I", "E") and prev_p in ("O", "E", "S"):
        return True
    if p != "O" and prev_t != t:
        return True
    return False


def conll_spans(tags: Sequence[str]) -> set[tuple[int, int, str]]:
    """Chunks ``(start, end_exclusive, type)`` with conlleval semantics: a
    chunk starts at B-X, or at I-X after O or after another type; so IOB1
    and IOB2 input both work."""
    spans = set()
    start = None
    prev_p, prev_t = "O", ""
    for i, tag in enumerate(list(tags) + ["O"]):
        p, t = _split_tag(tag)
        if start is not None and _end_of_chunk(prev_p, p, prev_t, t):
            spans.add((start, i, prev_t))
            start = None
        if _start_of_chunk(prev_p, p, prev_t, t):
            start = i
        prev_p, prev_t = p, t
    return spans


def _prf(correct: int, n_pred: int, n_gold: int) -> tuple[float, float, float]:
    p = correct / n_pred if n_pred else 0.0
    r = correct / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def conll_f1(gold_seqs: Sequence[Sequence[str]], pred_seqs: Sequence[Sequence[str]]) -> dict:
    """Span precision/recall/F1 as conlleval computes them (a chunk is
    correct when its start, end and type all match), plus token accuracy and
    ``per_type``: type -> F1 (``per_type_counts``: type -> (correct, pred,
    gold)). Sentences are scored independently (conlleval resets at blank
    lines). Feed IOB2 to both sides for the benchmarks."""
    if len(gold_seqs) != len(pred_seqs):
        raise ValueError(f"{len(gold_seqs)} gold sequences but {len(pred_seqs)} predicted")
    counts: dict[str, list[int]] = {}
    correct = n_pred = n_gold = tok = tok_ok = 0
    for i, (g, p) in enumerate(zip(gold_seqs, pred_seqs)):
        if len(g) != len(p):
            raise ValueError(f"sequence {i}: {len(g)} gold tags, {len(p)} predicted")
        tok += len(g)
        tok_ok += sum(a == b for a, b in zip(g, p))
        gs, ps = conll_spans(g), conll_spans(p)
        hit = gs & ps
        correct += len(hit)
        n_pred += len(ps)
        n_gold += len(gs)
        for spans, k in ((hit, 0), (ps, 1), (gs, 2)):
            for _, _, t in spans:
                counts.setdefault(t, [0, 0, 0])[k] += 1
    prec, rec, f1 = _prf(correct, n_pred, n_gold)
    return {
        "precision": prec,
        "recall": rec,
        "f1": f1,
        "accuracy": tok_ok / tok if tok else None,
        "per_type": {t: _prf(*c)[2] for t, c in sorted(counts.items())},
        "per_type_counts": {t: tuple(c) for t, c in sorted(counts.items())},
    }


def _word_spans(words: Sequence[str]) -> list[tuple[int, int, str]]:
    spans, pos = [], 0
    for w in words:
        spans.append((pos, pos + len(w), w))
        pos += len(w)
    return spans


def _clean_words(line) -> list[str]:
    if isinstance(line, str):
        return line.split()
    return ["".join(w.split()) for w in line if w and not w.isspace()]


def score_seg(gold_lines: Sequence, pred_lines: Sequence, training_words: Iterable[str] | None = None) -> dict:
    """Word segmentation scores, as the SIGHAN scorer computes them.

    Lines are word lists or whitespace-separated strings; whitespace inside
    or between words is ignored. A predicted word is correct when its
    character span matches a gold word's span. With ``training_words`` (a
    set of words, e.g. the training vocabulary or SIGHAN's official training
    word list) also OOV rate, OOV recall and IV recall (of gold words).
    Raises ``ValueError`` if a line's characters differ between gold and
    prediction (misaligned input, or a segmenter that changed the text).
    """
    if len(gold_lines) != len(pred_lines):
        raise ValueError(f"{len(gold_lines)} gold lines but {len(pred_lines)} predicted")
    tw = set(training_words) if training_words is not None and not isinstance(training_words, set) else training_words
    correct = n_gold = n_pred = 0
    n_oov = oov_hit = n_iv = iv_hit = 0
    for i, (g, p) in enumerate(zip(gold_lines, pred_lines)):
        gw, pw = _clean_words(g), _clean_words(p)
        if "".join(gw) != "".join(pw):
            raise ValueError(
                f"line {i}: characters differ between gold and prediction: "
                f"{''.join(gw)[:40]!r} vs {''.join(pw)[:40]!r}"
            )
        gs = _word_spans(gw)
        ps = {(a, b) for a, b, _ in _word_spans(pw)}
        n_gold += len(gs)
        n_pred += len(ps)
        for a, b, w in gs:
            hit = (a, b) in ps
            correct += hit
            if tw is not None:
                if w in tw:
                    n_iv += 1
                    iv_hit += hit
                else:
                    n_oov += 1
                    oov_hit += hit
    prec, rec, f1 = _prf(correct, n_pred, n_gold)
    res = {"precision": prec, "recall": rec, "f1": f1, "n_gold_words": n_gold, "n_pred_words": n_pred}
    if tw is not None:
        res["oov_rate"] = n_oov / n_gold if n_gold else None
        res["oov_recall"] = oov_hit / n_oov if n_oov else None
        res["iv_recall"] = iv_hit / n_iv if n_iv else None
    return res


@contextlib.contextmanager
def quiet(stdout: bool = True, stderr: bool = False):
    """Silence chatty libraries (pkuseg's trainer prints every iteration)."""
    with open(os.devnull, "w") as devnull, contextlib.ExitStack() as stack:
        if stdout:
            stack.enter_context(contextlib.redirect_stdout(devnull))
        if stderr:
            stack.enter_context(contextlib.redirect_stderr(devnull))
        yield
