#!/usr/bin/env python3
"""A fuzzer for fasttag model files.

Every case is a real model file (a tiny model of every kind the registry
knows, trained at fuzz time from the samples in ``data/`` and a hand-made
treebank here: taggers, segmenters, span taggers, tokenizers of both
engines (the character tagger's from tests/data/previous), lemmatizer,
morphologizer, dependency parser, UD pipelines with and without a parser,
feature tagger, linear estimators and MLPs; or now and then a bundled
model) changed by a few
mutations: of the decoded JSON header (numbers to 0, -1, huge, NaN,
Infinity, strings, null, lists, dicts; lists emptied, cut, lengthened,
duplicated 100,000 times, shuffled; keys dropped or added; kinds swapped),
of the arrays (cut, lengthened, emptied, reshaped, recast among the stored
dtypes, filled with out-of-range, negative, huge, NaN or infinite values,
keys duplicated or unsorted, arrays dropped, added or renamed), of the array
table itself (lying shapes such as ``[0, 2**63]`` or 65 dimensions,
Infinity or strings in shape/offset/nbytes, overlapping or misaligned
offsets, forbidden dtypes), of the container (format version, header
length, a nested or undecodable header) and raw byte flips in the payload;
and of what a model is trusted with: tag names with newlines, tabs, escape
codes, NULs or lone surrogates, and so the strings a model writes (lemmas,
edit scripts' added text, FEATS bundles, multiword expansions, a parser's
labels, also grown past their bounds), a parser's label list changed with
its weight table kept within it (the root label alone or missing, lifted
labels naming no label, thousands of labels), emission and transition
weights scaled up to float32's maximum, template counts around and far
beyond the bound, a header around its size bound, and the training
settings fine-tuning and ``update`` reuse (algorithm, MIRA's k and C,
fine_tuned, temperature).
The container is written here, not with ``fasttag.model.modelfile.dumps``, and
every checksum (per array and the trailer) is recomputed after the
mutations, so the cases get past the checksums to the semantic validation
and to the compiled code.

Each case is loaded and, when the load succeeds, used in every way its
kind allows (tagged, segmented, evaluated, n-best lists, marginals checked
to be probabilities, explain, ``tag_file`` checked line by line, what
``inspect`` computes, fine-tuned, ``update``, predicted, ``partial_fit``,
raw text to CoNLL-U, ``tag_file`` in every output format, spaCy's
components where spaCy is installed, saved with ``to_bytes`` and loaded
again with the same outputs; what CoNLL-U's models write is checked to be
UTF-8 and valid CoNLL-U or JSON) in a worker
subprocess, so that a crash of the compiled code is recorded instead of
killing the run.  Results:

``rejected``     the load raised ModelFormatError (what a bad file must do);
``ok``           it loaded and every use worked;
``load-error``   the load raised anything else (a failure);
``use-error``    it loaded, then a use raised (a failure: loading must
                 validate everything that using the model relies on);
``crash``        the worker died (a signal, an abort, a non-zero exit);
``hang``         the case ran past its time limit.

Command line::

    python tests/fuzz_models.py --cases 6000 --jobs 2 --out fuzz-out   # a fresh seed, printed
    python tests/fuzz_models.py --cases 6000 --seed 1 --jobs 2       # the same cases every time
    python tests/fuzz_models.py --replay 1:123           # regenerate and run case 123 of seed 1
    python tests/fuzz_models.py --run fuzz-out/case-000123.ftm   # rerun a kept case here

The long mode prints a summary table and the first reproductions of every
failure class, and exits with status 1 when any case fails; ``--out`` keeps
every failing case file with a JSON line in ``failures.jsonl`` (description,
result, reproduction).  Without ``--seed`` a run draws a fresh seed and
prints it.  No mode writes into the current folder (a replay's case file
goes to a new temporary folder, or ``--out``).  The test suite runs cases
0..499 of seed 1 through :func:`run_cases` (tests/test_model_fuzz.py).

Adding a model kind: add a seed builder to :func:`_build_seed_models` (its
family says which inputs use it), the kind to ``KINDS`` and, for a new
class, a ``_use_*`` function in :func:`_uses`; tests/test_model_fuzz.py
fails for a registered kind without a seed.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
REPO = HERE.parents[1]
DATA = REPO / "data"

try:                                    # an installed fasttag, or the one of PYTHONPATH
    import fasttag                      # noqa: F401
except ImportError:                     # else the checkout this file is in
    sys.path.insert(0, str(REPO))

SEEDS_VERSION = 6               # bump when the seed models change
DEFAULT_TIMEOUT = 20.0          # seconds per case (bundled models: times BUNDLED_SCALE)
BUNDLED_SCALE = 4.0
FAILURES = ("load-error", "use-error", "crash", "hang")

# =====================================================================
# the container, written by hand so that it can lie
# =====================================================================

MAGIC = b"FASTTAG\x00"
FORMAT_VERSION = 1
_PREFIX = struct.Struct("<8sIQ")
_TRAILER = struct.Struct("<I")
ALLOWED_DTYPES = ("<u8", "<i8", "<u4", "<i4", "<u2", "<i2", "|u1", "|i1", "<f4", "<f8")
FORBIDDEN_DTYPES = ("<f2", "|b1", ">i4", ">f8", "<c16", "|O", "O", "<U4", "|S3", "|V8", "<M8[s]",
                    "<m8[ns]", "float64", "int", "", "<i16", "<u0", None, 4, ["<i4"])


def _align(n):
    return (n + 7) & ~7


def decode(data):
    """(version, header without its array table, [[name, array], ...]) of a
    valid model file.  No checks: this reads the seed files only."""
    _, version, head_len = _PREFIX.unpack_from(data, 0)
    header = json.loads(bytes(data[_PREFIX.size:_PREFIX.size + head_len]).decode("utf-8"))
    payload = data[_PREFIX.size + head_len:len(data) - _TRAILER.size]
    arrays = []
    for spec in header.pop("arrays"):
        raw = payload[spec["offset"]:spec["offset"] + spec["nbytes"]]
        arr = np.frombuffer(raw, dtype=np.dtype(spec["dtype"])).reshape(spec["shape"])
        arrays.append([spec["name"], arr.astype(arr.dtype.newbyteorder("="))])
    return version, header, arrays


class Draft:
    """A model file being mutated: the decoded parts plus the lies to tell
    when it is written (table, payload, header text and prefix edits)."""

    def __init__(self, version, header, arrays):
        self.version = version
        self.header = header
        self.arrays = arrays            # [[name, ndarray], ...] in file order
        self.table_ops = []             # f(specs, payload) -> specs (may return a non-list)
        self.payload_ops = []           # f(payload bytearray, specs)
        self.text_ops = []              # f(header_text) -> header_text
        self.head_len_delta = 0

    def encode(self):
        chunks, specs, offset = [], [], 0
        for name, arr in self.arrays:
            a = np.ascontiguousarray(arr)
            dt = a.dtype if a.dtype.byteorder in ("|", "<") else a.dtype.newbyteorder("<")
            raw = a.astype(dt, copy=False).tobytes()
            specs.append({"name": name, "dtype": dt.str, "shape": list(a.shape), "offset": offset,
                          "nbytes": len(raw)})
            chunks.append(raw + b"\x00" * (_align(len(raw)) - len(raw)))
            offset += _align(len(raw))
        payload = bytearray(b"".join(chunks))
        for op in self.payload_ops:
            op(payload, specs)
        table = specs
        for op in self.table_ops:
            try:
                table = op(table, payload)
            except (TypeError, ValueError, KeyError, AttributeError, OverflowError):
                pass                        # an earlier lie left nothing for this one to change
        if isinstance(table, list):
            for spec in table:
                if isinstance(spec, dict) and "crc32" not in spec:
                    spec["crc32"] = _region_crc(spec, payload)
        header = dict(self.header)
        header["arrays"] = table
        text = json.dumps(header, ensure_ascii=True, allow_nan=True, separators=(",", ":"))
        for op in self.text_ops:
            text = op(text)
        # lone surrogates here are raw bytes of a text op (see op_container)
        head = text.encode("utf-8", "surrogateescape")
        head += b" " * (_align(_PREFIX.size + len(head)) - _PREFIX.size - len(head))
        head_len = max(0, len(head) + self.head_len_delta)
        body = _PREFIX.pack(MAGIC, self.version % 2 ** 32, head_len % 2 ** 64) + head + bytes(payload)
        return body + _TRAILER.pack(zlib.crc32(body))


def _as_int(v):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return None
    return None


def _region_crc(spec, payload):
    """The CRC of the bytes a table entry points at (as the loader will
    read them), or of nothing when it points outside the payload."""
    off, n = _as_int(spec.get("offset")), _as_int(spec.get("nbytes"))
    if off is not None and n is not None and 0 <= off and 0 <= n and off + n <= len(payload):
        return zlib.crc32(bytes(payload[off:off + n]))
    return 0


# =====================================================================
# value pools
# =====================================================================

NAN, INF = float("nan"), float("inf")
INTS = [0, -1, 1, 2, 3, 4, 7, 8, 63, 64, 65, 255, 256, 65535, 65536, 2 ** 31 - 1, 2 ** 31, -2 ** 31,
        -2 ** 31 - 1, 2 ** 32 - 1, 2 ** 32, 2 ** 53 + 1, 2 ** 63 - 1, 2 ** 63, -2 ** 63, 2 ** 64,
        10 ** 30, -10 ** 30]
FLOATS = [0.0, -0.0, 0.5, -2.5, 3.0, 1e-300, 5e-324, 1e308, -1e308, 3.5e38, NAN, INF, -INF]
STRINGS = ["", " ", "x", "0", "-1", "1e400", "NaN", "Infinity", "null", "O", "B-", "I-", "E-X", "S-",
           "B-PER", "I-LOC", "X-Y", "B-PER|I-LOC", "\n", "\t", "a b", "\x00", "\u2028", "😀", "\udc80",
           "\ud800x", "é" * 3, "word[0]", "bias", "word[-1]|word[1]", "word[99999]",
           "norm[2147483647]", "lower[-2147483648]", "shape[2147483648]", "word[99999999999999999999]",
           "nosuch[0]", "word[0]|word[1]|word[2]|word[3]|word[4]", "word", "word[]", "|", "[0]",
           "viterbi", "greedy", "beam", "tagger", "segmenter", "spans", "linear.Perceptron",
           "linear.SGDClassifier", "chars", "numeric", "features", "iob1", "iob2", "bioes", "bogus",
           "hinge", "log_loss", "modified_huber", "squared_error", "huber", "optimal", "invscaling",
           "constant", "PA", "MIRA", "PA-II", "identity", "relu", "logistic", "random", "zeros",
           "<U0", "<U5", "|O", "O", "|V8", "<f2", "<i8", "|b1", "<M8[s]", "|S3", ">f8", "float32",
           "gd", "sgd", "doc", "gaz", "headline", "x" * 100_000]
OTHERS = [None, True, False, [], {}, [0], [[]], [-1], [None], ["x"], [0, 0], [[0, 1], [1, 0]],
          {"a": 1}, {"": None}, {"latin": "yes"}, [1e308], [NAN], list(range(1000)),
          ["O"] * 1000]


def _pool_value(rnd):
    r = rnd.random()
    if r < 0.35:
        return rnd.choice(INTS)
    if r < 0.5:
        return rnd.choice(FLOATS)
    if r < 0.8:
        return rnd.choice(STRINGS)
    return _copy(rnd.choice(OTHERS))


def _copy(v):
    return json.loads(json.dumps(v, allow_nan=True))


def _near_ints(v, ctx):
    out = [v + 1, v - 1, -v, v * 2, v * 1000, 0, -1]
    for n in ctx.sizes:
        out += [n, n - 1, n + 1]
    return out


def _mutant_value(rnd, old, ctx):
    """A new value for a header field: usually of the same type and near
    the interesting edges, sometimes anything at all."""
    if rnd.random() < 0.35:
        return _pool_value(rnd)
    if isinstance(old, bool):
        return rnd.choice([not old, 0, 1, 2, None, "true"])
    if isinstance(old, int):
        return rnd.choice(INTS + _near_ints(old, ctx) + [float(old), str(old)])
    if isinstance(old, float):
        return rnd.choice(FLOATS + [old * -1, old * 1e300, int(old) if math.isfinite(old) else 0])
    if isinstance(old, str):
        # the edits that multiply a string grow from a short piece of it: a
        # field mutated again and again must not exhaust the harness's memory
        piece = old[:1000]
        choices = STRINGS + [piece + piece, old[:-1], old + "x", old.upper(), piece + "|" + piece, " " + old,
                             piece * 1000, old.replace("-", ""), "B-" + old, old + "[0]"]
        return rnd.choice(choices)
    if isinstance(old, list):
        return _mutant_list(rnd, list(old), ctx)[0]
    if isinstance(old, dict):
        return _mutant_dict(rnd, dict(old), ctx)[0]
    return _pool_value(rnd)


def _mutant_list(rnd, lst, ctx):
    """(new list, description)."""
    n = len(lst)
    ops = ["empty", "append", "prepend-dup"]
    if n:
        ops += ["truncate", "drop", "dup", "dup", "dup-many", "shuffle", "reverse", "replace", "double",
                "nest", "sort", "single"]
    op = rnd.choice(ops)
    if op == "empty":
        return [], "emptied"
    if op == "append":
        v = _pool_value(rnd)
        return lst + [v], f"appended {_short(v)}"
    if op == "prepend-dup":
        v = lst[0] if lst else _pool_value(rnd)
        return [_copy(v)] + lst, "prepended a copy of the first element"
    if op == "truncate":
        k = rnd.randrange(n)
        return lst[:k], f"cut to {k} of {n}"
    if op == "drop":
        i = rnd.randrange(n)
        return lst[:i] + lst[i + 1:], f"dropped element {i}"
    if op == "dup":
        i = rnd.randrange(n)
        return lst[:i + 1] + [_copy(lst[i])] + lst[i + 1:], f"duplicated element {i}"
    if op == "dup-many":
        i = rnd.randrange(n)
        k = rnd.choice([10, 1000, 100_000])
        return lst + [lst[i]] * k, f"appended {k} copies of element {i}"
    if op == "shuffle":
        rnd.shuffle(lst)
        return lst, "shuffled"
    if op == "reverse":
        return lst[::-1], "reversed"
    if op == "replace":
        i = rnd.randrange(n)
        v = _mutant_value(rnd, lst[i], ctx)
        lst[i] = v
        return lst, f"element {i} = {_short(v)}"
    if op == "double":
        return lst + _copy(lst), "doubled"
    if op == "nest":
        return [lst], "nested in a list"
    if op == "sort":
        try:
            return sorted(lst, reverse=rnd.random() < 0.5), "sorted"
        except TypeError:
            return lst[::-1], "reversed"
    return [lst[0]] * n, "every element = the first"


def _mutant_dict(rnd, d, ctx):
    ops = ["add", "empty"]
    if d:
        ops += ["delete", "delete", "rename", "set-null"]
    op = rnd.choice(ops)
    if op == "add":
        k = rnd.choice(["x", "", "arrays", "kind", "tags", "extra", "meta", "\udc80", "0"])
        v = _pool_value(rnd)
        d[k] = v
        return d, f"added key {k!r} = {_short(v)}"
    if op == "empty":
        return {}, "emptied"
    k = rnd.choice(sorted(d))
    if op == "delete":
        del d[k]
        return d, f"deleted key {k!r}"
    if op == "set-null":
        d[k] = None
        return d, f"{k!r} = null"
    new = rnd.choice([k.upper(), k + "_", "x", ""])
    d[new] = d.pop(k)
    return d, f"renamed key {k!r} to {new!r}"


def _short(v, n=60):
    try:
        s = json.dumps(v, allow_nan=True, ensure_ascii=True)
    except (TypeError, ValueError):
        s = repr(v)
    if isinstance(v, (list, str)) and len(s) > n:
        return f"{s[:n]}... (len {len(v)})"
    return s if len(s) <= n else s[:n] + "..."


class Ctx:
    """What mutations may want to know: the numbers worth hitting
    (number of tags, array lengths)."""

    def __init__(self, draft):
        sizes = set()
        tags = draft.header.get("tags")
        if isinstance(tags, list):
            sizes.add(len(tags))
        classes = draft.header.get("classes")
        if isinstance(classes, list):
            sizes.add(len(classes))
        for _, arr in draft.arrays:
            if arr.ndim and arr.shape[0] < 10 ** 6:
                sizes.add(int(arr.shape[0]))
        self.sizes = sorted(sizes)[:8]


# =====================================================================
# header mutations
# =====================================================================

def _pick_path(rnd, root, stop=0.35):
    path, node = [], root
    while True:
        if isinstance(node, dict) and node:
            if path and rnd.random() < stop:
                break
            k = rnd.choice(sorted(node, key=str))
            path.append(k)
            node = node[k]
        elif isinstance(node, list) and node:
            if rnd.random() < stop:
                break
            i = rnd.randrange(len(node))
            path.append(i)
            node = node[i]
        else:
            break
    return path


def _get(root, path):
    for p in path:
        root = root[p]
    return root


def _set(root, path, value):
    _get(root, path[:-1])[path[-1]] = value


def _fmt_path(path):
    return "header" + "".join(f"[{p!r}]" for p in path)


def op_header_value(rnd, d, ctx):
    path = _pick_path(rnd, d.header)
    if not path:
        return None
    old = _get(d.header, path)
    new = _mutant_value(rnd, old, ctx)
    _set(d.header, path, new)
    return f"{_fmt_path(path)} = {_short(new)} (was {_short(old, 30)})"


def op_header_list(rnd, d, ctx):
    lists = []

    def walk(node, path, depth):
        if depth > 4:
            return
        if isinstance(node, list):
            lists.append(path)
            for i in range(min(len(node), 3)):
                walk(node[i], path + [i], depth + 1)
        elif isinstance(node, dict):
            for k in sorted(node, key=str):
                walk(node[k], path + [k], depth + 1)
    walk(d.header, [], 0)
    if not lists:
        return None
    path = rnd.choice(lists)
    new, what = _mutant_list(rnd, list(_get(d.header, path)), ctx)
    _set(d.header, path, new)
    return f"{_fmt_path(path)}: {what}"


def op_header_key(rnd, d, ctx):
    dicts = []

    def walk(node, path, depth):
        if isinstance(node, dict) and depth <= 3:
            dicts.append(path)
            for k in sorted(node, key=str):
                walk(node[k], path + [k], depth + 1)
    walk(d.header, [], 0)
    path = rnd.choice(dicts)
    node = _get(d.header, path) if path else d.header
    new, what = _mutant_dict(rnd, dict(node), ctx)
    if path:
        _set(d.header, path, new)
    else:
        d.header = new
    return f"{_fmt_path(path)}: {what}"


KINDS = ["tagger", "segmenter", "spans", "tokenizer", "feature-tagger", "lemmatizer", "morphologizer", "pipeline",
         "parser",
         "linear.Perceptron", "linear.AveragedPerceptron",
         "linear.PassiveAggressiveClassifier", "linear.SGDClassifier", "linear.SGDRegressor",
         "linear.Neuron", "linear.MLPClassifier", "linear.MLPRegressor", "linear.LinearModel", "linear.", "linear",
         "Tagger", "", None, 0, ["tagger"],
         {"kind": "tagger"}]


def op_kind(rnd, d, ctx):
    old = d.header.get("kind")
    new = rnd.choice([k for k in KINDS if k != old])
    d.header["kind"] = new
    return f"kind {old!r} -> {new!r}"


# ---------------------------------------------------------------- targeted

def _tags(d):
    tags = d.header.get("tags")
    return tags if isinstance(tags, list) else None


def op_tags_coherent(rnd, d, ctx):
    """Change the tag list and resize the transition arrays to match, so
    that the change gets past the size checks."""
    tags = _tags(d)
    if tags is None:
        return None
    T = len(tags)
    choice = rnd.choice(["grow-dup", "grow-new", "shrink", "permute", "one", "rename"])
    if choice == "grow-dup":
        new = tags + [rnd.choice(tags)] * rnd.choice([1, 2, 5])
    elif choice == "grow-new":
        new = tags + [rnd.choice(["B-NEW", "E-NEW", "I-ZZ", "S-", "X", "", "O", "B-NEW|I-NEW", "\udc80"])
                      for _ in range(rnd.choice([1, 2, 3]))]
    elif choice == "shrink":
        new = tags[:rnd.randrange(0, T)] if T else []
    elif choice == "permute":
        new = list(tags)
        rnd.shuffle(new)
    elif choice == "one":
        new = [tags[0]] if tags else ["O"]
    else:
        new = list(tags)
        if new:
            new[rnd.randrange(len(new))] = rnd.choice(["O", "B-X", "S-PER", "Q", "", "B-PER"])
    d.header["tags"] = new
    n = len(new)
    if n > 8192:        # beyond MAX_TAGS: loading refuses it before the arrays matter
        return f"tags ({choice}): {T} -> {n} tags, too many to resize the transitions for"
    size = (n + 2) * n
    g = np.random.default_rng(rnd.getrandbits(32))
    kept = max(1, size // 10)               # the sparse form (a lemmatizer's): a tenth of the pairs
    index = np.sort(g.choice(size, size=min(kept, size), replace=False)).astype(np.uint32)
    for entry in d.arrays:
        if entry[0] == "transitions":
            entry[1] = g.normal(size=size).astype(np.float32)
        elif entry[0] == "transitions.index":
            entry[1] = index
        elif entry[0] == "transitions.values":
            entry[1] = g.normal(size=len(index)).astype(np.float32)
        elif entry[0] == "allowed":
            entry[1] = (g.random(size) < 0.7).astype(np.uint8)
    return f"tags ({choice}): {T} -> {n} tags {_short(new, 50)}, transitions resized"


TEMPLATE_EDITS = ["word[0]|word[0]", "word[-2147483648]", "word[2147483647]", "norm[99999999999]",
                  "bias|bias", "word[1]|word[2]|word[3]|word[4]", "word[1]|word[2]|word[3]|word[4]|word[5]",
                  "nosuch[0]", "", "bias", "c1[0]", "c9[0]", "gaz[0]", "doc[0]", "dict_start[0]", "char[0]",
                  "word[+1]", "word[ 1]", "word[0] | lower[0]", "Word[0]", "word[0]\n"]


def op_templates(rnd, d, ctx):
    t = d.header.get("templates")
    if not isinstance(t, list):
        return None
    op = rnd.choice(["add", "replace", "dup", "empty", "huge"])
    t = list(t)
    if op == "add" or not t:
        v = rnd.choice(TEMPLATE_EDITS)
        t.append(v)
        what = f"added {v!r}"
    elif op == "replace":
        i = rnd.randrange(len(t))
        own = [t[i].replace("[0]", "[-7]"), t[i] + "|" + t[i]] if isinstance(t[i], str) else []
        v = rnd.choice(TEMPLATE_EDITS + own)
        t[i] = v
        what = f"template {i} = {v!r}"
    elif op == "dup":
        t.append(rnd.choice(t))
        what = "duplicated one"
    elif op == "empty":
        t = []
        what = "emptied"
    else:
        t = t + [f"word[{k}]" for k in range(-3000, 3000)]
        what = "6000 more"
    d.header["templates"] = t
    return f"templates: {what}"


def op_tagdict(rnd, d, ctx):
    tags = _tags(d)
    classes = d.header.get("tagdict_classes")
    if tags is None or not isinstance(classes, list):
        return None
    T = len(tags)
    bad = rnd.choice([[T], [-1], [], [0, 0], [1, 0], list(range(T)), [T - 1], [2 ** 31], [0.5], ["0"],
                      [None], list(range(T)) * 2, [2 ** 63]])
    op = rnd.choice(["add", "replace", "many", "words"])
    classes = _copy(classes)
    if op == "add" or not classes:
        classes.append(bad)
        what = f"added class {_short(bad)}"
    elif op == "replace":
        i = rnd.randrange(len(classes))
        classes[i] = bad
        what = f"class {i} = {_short(bad)}"
    elif op == "many":
        classes = classes + [list(range(T))] * 100_000
        what = "100,000 more classes"
    else:
        words = d.header.get("tagdict_words")
        if not isinstance(words, list) or not words:
            return None
        words = list(words)
        op2 = rnd.choice(["dup", "empty-word", "drop", "surrogate"])
        if op2 == "dup":
            words[-1] = words[0]
        elif op2 == "empty-word":
            words[0] = ""
        elif op2 == "drop":
            words = words[:-1]
        else:
            words[0] = "\udc80"
        d.header["tagdict_words"] = words
        return f"tagdict_words: {op2}"
    d.header["tagdict_classes"] = classes
    return f"tagdict_classes: {what}"


def op_prune(rnd, d, ctx):
    if "prune_k" not in d.header and "tags" not in d.header:
        return None
    T = len(_tags(d) or [])
    v = rnd.choice([-1, 0, 1, T - 1, T, T + 1, 2 ** 31 - 1, 2 ** 31, 2 ** 63, -2 ** 31, 1.5, NAN, INF, "3",
                    None, True])
    d.header["prune_k"] = v
    return f"prune_k = {_short(v)}"


def op_decoder(rnd, d, ctx):
    if "decoder" not in d.header:
        return None
    v = rnd.choice(["greedy", "viterbi", "beam", "", None, 0, ["viterbi"], "VITERBI"])
    d.header["decoder"] = v
    return f"decoder = {_short(v)}"


def op_featurizer(rnd, d, ctx):
    fz = d.header.get("featurizer")
    if not isinstance(fz, dict):
        return None
    fz = _copy(fz)
    key = rnd.choice(sorted(fz) + ["runs", "max_word", "n_input_columns", "extras", "n_columns"])
    pools = {
        "runs": [None, False, True, {}, {"latin": False}, {"latin": "no", "digits": 0},
                 {"urls": True, "emails": True, "latin": True, "digits": True, "x": True}, [], "latin", 1],
        "max_word": [0, 1, 2, 6, 8, 100, -1, 2 ** 31, 7.0, "7", None],
        "n_input_columns": [0, 1, 2, 3, 5, 64, 1000, -1, 2 ** 31, 2 ** 63, 1.5, "2", None],
        "extras": [[], ["gaz"], ["doc"], ["docrun"], ["caprole"], ["doc", "doc"], ["headline", "gaz"],
                   ["docrun", "caprole", "gaz"], "doc", ["x"], [1], None,
                   ["doc", "headline", "docrun", "caprole", "gaz", "gaz"]],
        "n_columns": [0, 1, 100, -1],
        "name": ["word", "chars", "spans", "x", None],
    }
    v = rnd.choice(pools.get(key, [None, 0, -1, "x"]))
    fz[key] = _copy(v)
    d.header["featurizer"] = fz
    return f"featurizer[{key!r}] = {_short(v)}"


def op_meta(rnd, d, ctx):
    meta = d.header.get("meta")
    if not isinstance(meta, dict):
        return None
    meta = _copy(meta)
    key = rnd.choice(sorted(meta) + ["scheme", "internal_scheme", "feature_columns", "extras",
                                     "word_column", "tag_column", "format", "column"])
    fc = meta.get("feature_columns")
    pools = {
        "scheme": ["iob1", "iob2", "bioes", "BIO", None, 1],
        "internal_scheme": ["iob2", "bioes", "iob1", "x", None],
        "feature_columns": [[], [0], [1], [2], [3], [1, 1], [2, 1], [-1], [-5], [100], [2 ** 31], [2 ** 63],
                            [1.5], ["1"], [None], list(range(64)), [1] * 1000],
        "extras": [[], ["gaz"], ["doc", "headline"], ["docrun"], ["doc", "headline", "docrun", "caprole"],
                   ["gaz", "gaz"], "doc", None, [1]],
        "word_column": [0, 1, 2, 3, -1, -5, 100, 2 ** 31, 2 ** 63, 1.5, "0", None],
        "tag_column": [0, 1, 2, 3, -1, -5, 100, 2 ** 31, 1.5, "3", None],
        "format": ["conll", "conllu", "text", "xml", None, 1],
        "column": ["upos", "xpos", 0, 1, -1, 100, None, "x"],
        "n_columns": [0, 1, 4, -1, 10 ** 9],
        "document_features": [True, False, None, "x"],
        "task": ["ner", "chunk", None, "x"],
    }
    v = _copy(rnd.choice(pools.get(key, [None, 0, -1, "x", [], {}])))
    if key == "feature_columns" and isinstance(v, list) and rnd.random() < 0.7 and isinstance(fc, list):
        # keep n_input_columns in step, so that the change gets past that check
        fz = d.header.get("featurizer")
        if isinstance(fz, dict):
            fz["n_input_columns"] = len(v)
            t = d.header.get("templates")
            if isinstance(t, list) and len(v) > len(fc):
                d.header["templates"] = t + [f"c{len(v)}[0]"]
    meta[key] = v
    d.header["meta"] = meta
    return f"meta[{key!r}] = {_short(v)}"


def op_gazetteer(rnd, d, ctx):
    if d.header.get("kind") != "spans":
        return None
    v = _copy(rnd.choice([
        {}, {"LOC": []}, {"LOC": [""]}, {"LOC": [" "]}, {"LOC": ["a  b", "a"]}, {"": ["Paris"]},
        {"LOC": "Paris"}, {"LOC": [1, 2]}, {"LOC": [None]}, {"LOC": ["Paris"] * 1000},
        {"B-LOC": ["x"]}, {"LOC|ORG": ["Paris"]}, {"LOC": ["x " * 5000]}, ["Paris"], "LOC", 1, None,
        {"LOC": ["\udc80"]}, {"LOC": ["Paris"], "ORG": ["Paris"], "PER": ["Paris Paris"]}]))
    d.header["gazetteers"] = v
    extras = None
    if rnd.random() < 0.5:
        fz = d.header.get("featurizer")
        if isinstance(fz, dict) and isinstance(fz.get("extras"), list) and "gaz" not in fz["extras"]:
            fz["extras"] = fz["extras"] + ["gaz"]
            extras = "and 'gaz' added to the extras"
    return f"gazetteers = {_short(v)}" + (f" {extras}" if extras else "")


def op_linear(rnd, d, ctx):
    kind = d.header.get("kind")
    if not (isinstance(kind, str) and kind.startswith("linear.")):
        return None
    h = d.header
    what = rnd.choice(["param", "param", "classes", "classes_dtype", "input_kind", "n_features_in", "n_iter",
                       "loss_curve", "coef_classes"])
    if what == "param" and isinstance(h.get("params"), dict):
        params = h["params"]
        key = rnd.choice(sorted(params) + ["n_features", "nonexistent"])
        v = rnd.choice([0, -1, 1, 2, 2 ** 31, 2 ** 63, 10 ** 30, 0.0, -0.5, NAN, INF, -INF, None, True, False,
                        "x", "", "hinge", "log_loss", "modified_huber", "squared_error", "MIRA", "PA",
                        "relu", "heaviside", "sgd", "optimal", "random", [1], {}])
        params[key] = v
        return f"params[{key!r}] = {_short(v)}"
    if what == "classes":
        c = h.get("classes")
        v = rnd.choice([[], [0], [0, 0], [0, 1, 2, 3, 4, 5, 6], [1, 0], ["a", "b"], [None, None], [NAN, 1.0],
                        [2 ** 63, 0], [True, False], [[0], [1]], list(range(1000)), "ab", 3, None])
        if isinstance(c, list) and rnd.random() < 0.4:
            v, _ = _mutant_list(rnd, list(c), ctx)
        h["classes"] = _copy(v)
        return f"classes = {_short(v)}"
    if what == "classes_dtype":
        v = rnd.choice(["<i8", "<U1", "<U0", "|O", "O", "<f8", "|b1", "<M8[s]", "|V8", "|S1", "<c16", "x",
                        "", None, 3, "<i1", "|u1", "<f2", ">i8", "<U100000", "(2,)i4", "i4,i4", "<m8"])
        h["classes_dtype"] = v
        return f"classes_dtype = {_short(v)}"
    if what == "input_kind":
        v = rnd.choice(["numeric", "features", "", None, "Features", 1])
        h["input_kind"] = v
        return f"input_kind = {_short(v)}"
    if what == "n_features_in":
        v = rnd.choice([0, -1, 1, 2, 3, 4, 5, 6, 2 ** 31, 2 ** 63, 10 ** 30, 3.0, 4.5, NAN, INF, "5", None, [5]])
        h["n_features_in"] = v
        return f"n_features_in = {_short(v)}"
    if what == "n_iter":
        v = rnd.choice([0, -1, 2 ** 63, NAN, INF, "x", None, 1.5])
        h["n_iter"] = v
        return f"n_iter = {_short(v)}"
    if what == "loss_curve":
        v = rnd.choice([[], [NAN], [INF], "abc", None, 5, [[1]], [1.0] * 100_000])
        h["loss_curve"] = v
        return f"loss_curve = {_short(v)}"
    # coef columns against the classes
    for entry in d.arrays:
        if entry[0] == "coef" and entry[1].ndim == 2:
            n = entry[1].shape[0]
            K = rnd.choice([0, 1, 2, 3, 4, 7])
            g = np.random.default_rng(rnd.getrandbits(32))
            entry[1] = g.normal(size=(n, K))
            for e2 in d.arrays:
                if e2[0] == "intercept" and rnd.random() < 0.7:
                    e2[1] = g.normal(size=K)
            return f"coef reshaped to ({n}, {K}) columns (with the intercept, mostly)"
    return None


def op_linear_state(rnd, d, ctx):
    """Training-state arrays that disagree with coef (what partial_fit
    hands to the compiled epoch)."""
    states = [e for e in d.arrays if isinstance(e[0], str) and e[0].startswith("state.")]
    if not states:
        return None
    e = rnd.choice(states)
    a = e[1]
    g = np.random.default_rng(rnd.getrandbits(32))
    op = rnd.choice(["rows-1", "rows+3", "cols+1", "cols-1", "flat", "scalar", "int", "step"])
    if op == "rows-1" and a.ndim >= 1 and a.shape[0] > 0:
        e[1] = a[:-1]
    elif op == "rows+3" and a.ndim >= 1:
        e[1] = np.concatenate([a, a[:1].repeat(3, axis=0) if len(a) else np.zeros((3,) + a.shape[1:], a.dtype)])
    elif op == "cols+1" and a.ndim == 2:
        e[1] = np.hstack([a, np.ones((a.shape[0], 1), a.dtype)])
    elif op == "cols-1" and a.ndim == 2 and a.shape[1] > 0:
        e[1] = a[:, :-1]
    elif op == "flat":
        e[1] = a.ravel()
    elif op == "scalar":
        e[1] = np.zeros(0, a.dtype)
    elif op == "int":
        e[1] = a.astype(np.int64) if a.dtype.kind == "f" else a.astype(np.float64)
    else:
        e[1] = np.array([g.choice([-1, 2 ** 62, 0, 2 ** 31]), -5][: max(1, a.size)], dtype=np.int64)
    return f"array {e[0]!r} ({op}): shape {a.shape} -> {e[1].shape}, dtype {e[1].dtype}"


def op_emit_coherent(rnd, d, ctx):
    """An emission table that is inconsistent in one way only."""
    names = {e[0]: e for e in d.arrays}
    if "emit.labels" not in names or "emit.counts" not in names:
        return None
    T = len(_tags(d) or [])
    labels, counts = names["emit.labels"], names["emit.counts"]
    keys, weights = names.get("emit.keys"), names.get("emit.weights")
    op = rnd.choice(["label-T", "label-max", "label-neg", "label-int32-big", "count-zero", "count-huge",
                     "count-shift", "keys-dup", "keys-unsorted", "weights-nan", "weights-huge", "labels-unsorted",
                     "keys-extreme"])
    lab = labels[1].astype(np.int64)
    if op.startswith("label") and len(lab):
        i = rnd.randrange(len(lab))
        v = {"label-T": T, "label-max": 65535, "label-neg": -1, "label-int32-big": 2 ** 31 - 1}.get(op, T)
        lab[i] = v
        labels[1] = lab.astype(np.int32 if v < 0 or v > 65535 else labels[1].dtype)
        return f"emit.labels[{i}] = {v} ({T} tags)"
    c = counts[1].astype(np.int64)
    if op == "count-zero" and len(c):
        i = rnd.randrange(len(c))
        c[i] = 0
        counts[1] = c.astype(np.uint32)
        return f"emit.counts[{i}] = 0"
    if op == "count-huge" and len(c):
        i = rnd.randrange(len(c))
        c[i] = 2 ** 32 - 1
        counts[1] = c.astype(np.uint32)
        return f"emit.counts[{i}] = 2**32-1"
    if op == "count-shift" and len(c) > 1:
        i = rnd.randrange(len(c) - 1)
        c[i] += 1
        c[i + 1] -= 1
        counts[1] = c.astype(np.uint32)
        return f"emit.counts[{i}] += 1, [{i + 1}] -= 1 (same total)"
    if op == "labels-unsorted" and len(lab) > 1:
        # swap two labels inside one feature's block
        pos = np.cumsum(counts[1].astype(np.int64))
        starts = pos - counts[1]
        multi = np.flatnonzero(counts[1] > 1)
        if len(multi):
            f = int(rnd.choice(list(multi)))
            s = int(starts[f])
            lab[s], lab[s + 1] = lab[s + 1], lab[s]
            labels[1] = lab.astype(labels[1].dtype)
            return f"emit.labels of feature {f} out of order"
    if keys is not None and len(keys[1]) > 1:
        k = keys[1].copy()
        if op == "keys-dup":
            i = rnd.randrange(1, len(k))
            k[i] = k[i - 1]
            keys[1] = k
            return f"emit.keys[{i}] = emit.keys[{i - 1}] (duplicate key)"
        if op == "keys-unsorted":
            keys[1] = k[np.random.default_rng(rnd.getrandbits(32)).permutation(len(k))]
            return "emit.keys shuffled"
        if op == "keys-extreme":
            k[rnd.randrange(len(k))] = rnd.choice([0, 2 ** 64 - 1, 2 ** 63])
            keys[1] = k
            return "one emit.key = an extreme value"
    if weights is not None and len(weights[1]):
        w = weights[1].astype(np.float32)
        i = rnd.randrange(len(w))
        w[i] = NAN if op == "weights-nan" else np.float32(3.4e38)
        weights[1] = w
        return f"emit.weights[{i}] = {w[i]}"
    return None


def op_words_array(rnd, d, ctx):
    """The segmenter's packed word lists and the tagger's vocabulary."""
    names = {e[0]: e for e in d.arrays}
    cands = [n for n in ("vocab", "train_dict") if n in names]
    if not cands:
        return None
    e = names[rnd.choice(cands)]
    a = e[1]
    if a.dtype == np.uint8:
        raw = bytes(a)
        v = rnd.choice([b"", b"\n", b"\n\n\n", b"\xff\xfe", b"\xed\xa0\x80", b"a" * 100_000, b"\x00",
                        raw + b"\n" + raw, raw[:-1], "北京大学北京大学北京大学北京大学".encode() * 50,
                        "\n".join(["字"] * 100_000).encode()])
        e[1] = np.frombuffer(v, dtype=np.uint8).copy()
        return f"array {e[0]!r} = {_short(v.decode('utf-8', 'replace'), 40)} ({len(v)} bytes)"
    op = rnd.choice(["unsorted", "dup", "int64", "2d"])
    if op == "unsorted" and len(a) > 1:
        e[1] = a[::-1].copy()
    elif op == "dup" and len(a) > 1:
        b = a.copy()
        b[1] = b[0]
        e[1] = b
    elif op == "int64":
        e[1] = a.astype(np.int64)
    else:
        e[1] = a.reshape(-1, 1)
    return f"array {e[0]!r}: {op}"


# =====================================================================
# array mutations
# =====================================================================

def _extremes(dtype):
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return [NAN, INF, -INF, 0.0, -0.0, 1e30 if dt.itemsize == 4 else 1e308, -1.0, 3.4e38]
    info = np.iinfo(dt)
    vals = [0, 1, info.max, info.min, info.max - 1, 2 ** 31 - 1, 65535, 4, 17, 100]
    if dt.kind == "i":
        vals += [-1, -2]
    return [v for v in vals if info.min <= v <= info.max]


def _pick_array(rnd, d):
    if not d.arrays:
        return None
    return rnd.choice(d.arrays)


def op_array(rnd, d, ctx):
    e = _pick_array(rnd, d)
    if e is None:
        return op_array_add(rnd, d, ctx)
    name, a = e
    g = np.random.default_rng(rnd.getrandbits(32))
    op = rnd.choice(["truncate", "extend", "empty", "reshape", "astype", "view", "fill", "fill", "fill-all",
                     "dup-key", "unsort", "negate", "random"])
    n = a.shape[0] if a.ndim else 0
    if op == "truncate" and n:
        k = rnd.choice([0, n - 1, n // 2, rnd.randrange(n)])
        e[1] = a[:k]
        return f"array {name!r}: cut to {k} of {n}"
    if op == "extend" and a.ndim:
        k = rnd.choice([1, 2, 7, 1000])
        extra = np.zeros((k,) + a.shape[1:], a.dtype)
        if n:
            extra[...] = a[g.integers(0, n, size=k)]
        e[1] = np.concatenate([a, extra])
        return f"array {name!r}: {k} more rows"
    if op == "empty":
        shape = rnd.choice([(0,), (0,) + a.shape[1:], (0, 3), (3, 0), (0, 0, 0)])
        e[1] = np.zeros(shape, a.dtype)
        return f"array {name!r}: empty, shape {shape}"
    if op == "reshape":
        size = a.size
        shapes = [(size,), (size, 1), (1, size), (1, 1, size), ()]
        if size % 2 == 0 and size:
            shapes.append((size // 2, 2))
        shape = rnd.choice(shapes)
        if shape == () and size != 1:
            e[1] = a.ravel()[:1].reshape(()) if size else np.zeros((), a.dtype)
        else:
            e[1] = a.reshape(shape)
        return f"array {name!r}: reshaped {a.shape} -> {e[1].shape}"
    if op == "astype":
        dt = rnd.choice([t for t in ALLOWED_DTYPES if np.dtype(t) != a.dtype])
        with np.errstate(all="ignore"):
            e[1] = a.astype(np.dtype(dt))
        return f"array {name!r}: cast {a.dtype} -> {dt}"
    if op == "view" and a.nbytes:
        dts = [t for t in ALLOWED_DTYPES if a.nbytes % np.dtype(t).itemsize == 0 and np.dtype(t) != a.dtype]
        if dts:
            dt = rnd.choice(dts)
            e[1] = np.ascontiguousarray(a).ravel().view(np.dtype(dt)).copy()
            return f"array {name!r}: bytes read as {dt}"
    if op in ("fill", "fill-all") and a.size:
        b = a.copy()
        flat = b.reshape(-1)
        v = rnd.choice(_extremes(a.dtype) + [n, n - 1, n + 1] if a.dtype.kind != "f" else _extremes(a.dtype))
        with np.errstate(all="ignore"):
            v = np.array(v).astype(a.dtype) if a.dtype.kind == "f" else _fit_int(v, a.dtype)
        if op == "fill-all":
            flat[:] = v
            where = "every value"
        else:
            k = rnd.choice([1, 1, 2, max(1, flat.size // 10)])
            idx = g.integers(0, flat.size, size=k)
            flat[idx] = v
            where = f"{k} value(s)"
        e[1] = b
        return f"array {name!r}: {where} = {v!r}"
    if op == "dup-key" and n > 1:
        b = a.copy()
        i = rnd.randrange(1, n)
        b[i] = b[i - 1]
        e[1] = b
        return f"array {name!r}: row {i} = row {i - 1}"
    if op == "unsort" and n > 1:
        e[1] = a[g.permutation(n)]
        return f"array {name!r}: rows shuffled"
    if op == "negate" and a.size:
        with np.errstate(all="ignore"):
            e[1] = (-a.astype(np.float64)).astype(a.dtype) if a.dtype.kind != "u" else ~a
        return f"array {name!r}: negated"
    if a.size:
        b = a.copy()
        with np.errstate(all="ignore"):
            if a.dtype.kind == "f":
                b[...] = g.normal(scale=1e3, size=b.shape)
            else:
                info = np.iinfo(a.dtype)
                b[...] = g.integers(info.min, info.max, size=b.shape, dtype=a.dtype, endpoint=True)
        e[1] = b
        return f"array {name!r}: random values"
    return None


def _fit_int(v, dtype):
    info = np.iinfo(dtype)
    v = int(v)
    return np.array(min(max(v, info.min), info.max)).astype(dtype)


def op_array_add(rnd, d, ctx):
    g = np.random.default_rng(rnd.getrandbits(32))
    name = rnd.choice(["x", "", "emit.extra", "state.extra", "state.W", "vocab", "allowed", "tagdict_class",
                       "train_dict", "feature_keys", "transitions", "coef", "\udc80", "arrays", "a" * 1000])
    arr = rnd.choice([np.zeros(0, np.float32), g.normal(size=5), np.arange(10, dtype=np.int32),
                      np.ones((2, 3), np.uint8), np.array([2 ** 63], np.uint64)])
    existed = any(e[0] == name for e in d.arrays)
    d.arrays.append([name, arr])
    return f"array {name!r} added{' (a second one of that name)' if existed else ''}, {arr.dtype} {arr.shape}"


def op_array_drop(rnd, d, ctx):
    if not d.arrays:
        return None
    i = rnd.randrange(len(d.arrays))
    name = d.arrays.pop(i)[0]
    return f"array {name!r} dropped"


def op_array_rename(rnd, d, ctx):
    if not d.arrays:
        return None
    e = rnd.choice(d.arrays)
    others = [x[0] for x in d.arrays if x is not e]
    new = rnd.choice(others + ["", "x", e[0] + ".", e[0].upper()] if others else ["", "x"])
    old = e[0]
    e[0] = new
    return f"array {old!r} renamed {new!r}"


def op_array_swap(rnd, d, ctx):
    if len(d.arrays) < 2:
        return None
    a, b = rnd.sample(d.arrays, 2)
    a[1], b[1] = b[1], a[1]
    return f"arrays {a[0]!r} and {b[0]!r} swap contents"


# =====================================================================
# array table, container and raw bytes
# =====================================================================

def _shape_count(shape):
    count = 1
    for s in shape:
        i = _as_int(s)
        if i is None:
            return None
        count *= i
    return count


def op_table(rnd, d, ctx):
    """Lie in one entry of the array table (applied as the file is written)."""
    if not d.arrays:
        return None
    idx = rnd.randrange(len(d.arrays))
    name = d.arrays[idx][0]
    field = rnd.choice(["shape", "shape", "shape", "offset", "offset", "nbytes", "dtype", "dtype", "name",
                        "crc32", "entry"])
    if field == "shape":
        v = rnd.choice([[0, 2 ** 63], [2 ** 63, 0], [0, 2 ** 64], [2 ** 62, 4], [2 ** 31, 2 ** 31], [1] * 65,
                        [1] * 64, [1] * 1000, [0] * 70, [-1], [-1, -1], [INF], [NAN], [1.5], ["3"], [True], [None],
                        "abc", "", 5, {}, [], [[1]], [1e30], [10 ** 30, 0], [2 ** 64 - 1], [0, -1], ["x"]])
        consistent = rnd.random() < 0.7

        def op(specs, payload, idx=idx, v=v, consistent=consistent):
            if idx < len(specs) and isinstance(specs[idx], dict):
                specs[idx]["shape"] = _copy(v)
                if consistent:
                    count = _shape_count(v) if isinstance(v, list) else None
                    try:
                        item = np.dtype(specs[idx]["dtype"]).itemsize
                    except TypeError:
                        item = 1
                    if count is not None and 0 <= count * item <= len(payload):
                        specs[idx]["nbytes"] = count * item
            return specs
        d.table_ops.append(op)
        return f"table {name!r}.shape = {_short(v)}{' (nbytes to match)' if consistent else ''}"
    if field == "offset":
        kind = rnd.choice(["other", "plus1", "minus8", "neg", "huge", "end", "inf", "str", "float", "null",
                           "nan", "bool"])

        def op(specs, payload, idx=idx, kind=kind):
            if idx >= len(specs) or not isinstance(specs[idx], dict):
                return specs
            s = specs[idx]
            others = [x["offset"] for x in specs if isinstance(x, dict) and x is not s]
            v = {"other": others[0] if others else 0, "plus1": s["offset"] + 1, "minus8": s["offset"] - 8,
                 "neg": -1, "huge": 2 ** 64, "end": len(payload), "inf": INF, "str": str(s["offset"]),
                 "float": float(s["offset"]), "null": None, "nan": NAN, "bool": True}[kind]
            s["offset"] = v
            if kind in ("plus1", "other") and isinstance(v, int) and v + s["nbytes"] > len(payload):
                s["nbytes"] = max(0, len(payload) - v)
            return specs
        d.table_ops.append(op)
        return f"table {name!r}.offset: {kind}"
    if field == "nbytes":
        kind = rnd.choice(["zero", "plus1", "minus1", "huge", "inf", "neg", "str", "all"])

        def op(specs, payload, idx=idx, kind=kind):
            if idx < len(specs) and isinstance(specs[idx], dict):
                s = specs[idx]
                s["nbytes"] = {"zero": 0, "plus1": s["nbytes"] + 1, "minus1": s["nbytes"] - 1, "huge": 2 ** 63,
                               "inf": INF, "neg": -8, "str": "8", "all": len(payload)}[kind]
            return specs
        d.table_ops.append(op)
        return f"table {name!r}.nbytes: {kind}"
    if field == "dtype":
        same_size = rnd.random() < 0.6
        arr = d.arrays[idx][1]
        if same_size:
            cands = [t for t in ALLOWED_DTYPES if np.dtype(t).itemsize == arr.dtype.itemsize and
                     np.dtype(t) != arr.dtype]
            v = rnd.choice(cands) if cands else rnd.choice(ALLOWED_DTYPES)
        else:
            v = rnd.choice(FORBIDDEN_DTYPES + ALLOWED_DTYPES)
        adjust = rnd.random() < 0.5

        def op(specs, payload, idx=idx, v=v, adjust=adjust):
            if idx < len(specs) and isinstance(specs[idx], dict):
                s = specs[idx]
                s["dtype"] = _copy(v)
                if adjust and isinstance(v, str) and v in ALLOWED_DTYPES:
                    item = np.dtype(v).itemsize
                    if s["nbytes"] % item == 0:
                        s["shape"] = [s["nbytes"] // item]
            return specs
        d.table_ops.append(op)
        return f"table {name!r}.dtype = {_short(v)}{' (shape to match)' if adjust else ''}"
    if field == "name":
        v = rnd.choice([123, None, [], {}, "", True, "\udc80", d.arrays[rnd.randrange(len(d.arrays))][0]])

        def op(specs, payload, idx=idx, v=v):
            if idx < len(specs) and isinstance(specs[idx], dict):
                specs[idx]["name"] = _copy(v)
            return specs
        d.table_ops.append(op)
        return f"table {name!r}.name = {_short(v)}"
    if field == "crc32":
        # the right checksum written as a string or a float, or no number at
        # all (a wrong number would be a checksum error: not the point here)
        v = rnd.choice(["as-string", "as-float", INF, NAN, "x", None, [1]])

        def op(specs, payload, idx=idx, v=v):
            if idx < len(specs) and isinstance(specs[idx], dict):
                crc = _region_crc(specs[idx], payload)
                specs[idx]["crc32"] = str(crc) if v == "as-string" else float(crc) if v == "as-float" else v
            return specs
        d.table_ops.append(op)
        return f"table {name!r}.crc32 = {_short(v)}"
    kind = rnd.choice(["not-a-dict", "missing-key", "duplicate", "drop", "whole-table", "extra-key"])

    def op(specs, payload, idx=idx, kind=kind, key=rnd.choice(["name", "dtype", "shape", "offset", "nbytes",
                                                                  "crc32"]),
           v=rnd.choice([5, "x", [], None, [1, 2]]), table=rnd.choice([{}, "x", None, 5, [[]], [None]])):
        if not isinstance(specs, list) or idx >= len(specs):
            return specs
        if kind == "not-a-dict":
            specs[idx] = v
        elif kind == "missing-key" and isinstance(specs[idx], dict):
            specs[idx].pop(key, None)
            if key == "crc32":
                specs[idx]["crc32"] = None
        elif kind == "duplicate":
            specs.append(dict(specs[idx]) if isinstance(specs[idx], dict) else specs[idx])
        elif kind == "drop":
            specs.pop(idx)
        elif kind == "extra-key" and isinstance(specs[idx], dict):
            specs[idx]["extra"] = v
        elif kind == "whole-table":
            return table
        return specs
    d.table_ops.append(op)
    return f"table entry {name!r}: {kind}"


def op_payload_flip(rnd, d, ctx):
    k = rnd.choice([1, 1, 2, 4, 16])
    target = rnd.choice([None] + [e[0] for e in d.arrays])
    r = random.Random(rnd.getrandbits(32))

    def op(payload, specs, k=k, target=target, r=r):
        lo, hi = 0, len(payload)
        for s in specs:
            if s["name"] == target:
                lo, hi = s["offset"], s["offset"] + s["nbytes"]
        if hi <= lo:
            return
        for _ in range(k):
            i = r.randrange(lo, hi)
            payload[i] = r.choice([payload[i] ^ (1 << r.randrange(8)), 0, 0xFF, 0x7F, 0x80, r.randrange(256)])
    d.payload_ops.append(op)
    return f"{k} payload byte(s) changed{f' in {target!r}' if target else ''}"


def op_container(rnd, d, ctx):
    what = rnd.choice(["version", "head_len", "deep", "deep", "utf8", "dupkey", "not-object", "trailing",
                       "nan-literal", "bigint"])
    if what == "version":
        v = rnd.choice([0, 2, 3, 2 ** 31, 2 ** 32 - 1])
        d.version = v
        return f"format version {v}"
    if what == "head_len":
        v = rnd.choice(["past-end", "zero", "padded"])
        if v == "past-end":
            d.head_len_delta = 2 ** 40
        elif v == "zero":
            d.head_len_delta = -2 ** 40             # clipped to 0
        else:
            d.text_ops.append(lambda t: t + " " * 64)     # a valid file with a longer header
        return f"header length: {v}"
    if what == "deep":
        depth = rnd.choice([1000, 100_000])
        opener, closer = rnd.choice([("[", "]"), ('{"a":', "}")])
        d.text_ops.append(lambda t, depth=depth, o=opener, c=closer:
                          t[:-1] + ',"deep":' + o * depth + "0" + c * depth + "}")
        return f"a value nested {depth} deep in the header"
    if what == "utf8":
        d.text_ops.append(lambda t: t[:-1] + ',"bad":"\udcff\udcfe"}')      # bytes ff fe
        return "invalid UTF-8 in the header"
    if what == "dupkey":
        key, v = rnd.choice([("kind", '"tagger"'), ("kind", '"segmenter"'), ("tags", "[]"), ("arrays", "[]"),
                             ("meta", "null")])
        d.text_ops.append(lambda t, key=key, v=v: t[:-1] + f',"{key}":{v}' + "}")
        return f"the header repeats the key {key!r} ({v})"
    if what == "not-object":
        v = rnd.choice(["[]", "null", "1", '"x"', "[{}]"])
        d.text_ops.append(lambda t, v=v: v)
        return f"the header is {v}"
    if what == "trailing":
        d.text_ops.append(lambda t: t + "xyz")
        return "garbage after the header JSON"
    if what == "nan-literal":
        d.text_ops.append(lambda t: t[:-1] + ',"n":NaN,"i":-Infinity}')
        return "NaN and -Infinity literals in the header"
    d.text_ops.append(lambda t: t[:-1] + ',"big":' + "9" * 5000 + "}")
    return "a 5000-digit integer in the header"


# ---------------------------------------------------------------- what a model is trusted with

# tag names that break a field or a line of the output, a terminal, or
# UTF-8 (training refuses them), and unusual ones that are fine
TAG_NAMES = ["NOUN\n1\tinjected\t_\tX", "\n", "\t", " ", "a b", "\r", "\x00", "\x1b[31m", "\x7f", "\x85", "\x1f",
             "\u2028", "\u2029", "\u00a0", "\u3000", "\udc80", "\ud800", "\udfff", "", "\ufeff", "\u200b",
             "\u202e", "😀", "é", "/", "|", "_", "#", "=", "x" * 10_000]


def op_tag_chars(rnd, d, ctx):
    """One tag name gets characters of TAG_NAMES (a span tag keeps its
    B-/I- prefix, so that only the characters are at fault)."""
    tags = _tags(d)
    if not tags or not all(isinstance(t, str) for t in tags):
        return None
    tags = list(tags)
    i = rnd.randrange(len(tags))
    bad = rnd.choice(TAG_NAMES)
    how = rnd.choice(["replace", "append", "insert"])
    old = tags[i]
    if how == "replace":
        tags[i] = old[:2] + bad if old[1:2] == "-" else bad
    elif how == "append":
        tags[i] = old + bad
    else:
        k = rnd.randrange(len(old) + 1)
        tags[i] = old[:k] + bad + old[k:]
    d.header["tags"] = tags
    return f"tags[{i}] = {_short(tags[i], 40)} ({how}, was {_short(old, 20)})"


#: What a hostile file puts in a string fasttag writes: TAG_NAMES's, and what
#: only a spaced column (LEMMA, FORM) could hold.
WRITTEN_STRINGS = TAG_NAMES + ["de le", " ", "a\x0bb", "a\x1cb", "a\x1db", "a\x0cb", "\x9b", "_"]


def _written(root):
    """Paths (lists of keys) to what a model writes, wherever a pipeline
    nests it: lemmatizer lexicons and classes, morphologizer bundles,
    tokenizer expansions, tag lists, a parser's labels."""
    found = []

    def walk(node, path, depth):
        if depth > 4 or not isinstance(node, dict):
            return
        for key, value in node.items():
            if key in ("lexicon", "expansions", "tags", "labels") and isinstance(value, (list, dict)) and value:
                found.append(path + [key])
            elif isinstance(value, dict):
                walk(value, path + [key], depth + 1)
    walk(root, [], 0)
    return found


def op_written_strings(rnd, d, ctx):
    """A string the model writes (a lemma, an expansion's word, a script's
    or bundle's added text, a tag) gets hostile characters, is emptied, or
    an expansion grows past its bounds (a million words, long words, many
    entries)."""
    paths = _written(d.header)
    if not paths:
        return None
    path = rnd.choice(paths)
    node = _get(d.header, path)
    bad = rnd.choice(WRITTEN_STRINGS)
    where = _fmt_path(path)
    if path[-1] == "lexicon" and isinstance(node, list):
        i = rnd.randrange(len(node))
        entry = node[i]
        if not isinstance(entry, list) or len(entry) < 3:
            return None
        k = rnd.choice([2, 2, 2, 0, 1])
        entry[k] = rnd.choice([bad, str(entry[k]) + bad, ""])
        return f"{where}[{i}][{k}] = {_short(entry[k], 40)}"
    if path[-1] == "expansions" and isinstance(node, dict):
        how = rnd.choice(["word", "word", "many-words", "long-word", "many-entries", "bounds", "form"])
        forms = sorted(node) or ["du"]
        form = rnd.choice(forms)
        words = list(node.get(form) or ["de", "le"])
        if how == "word":
            words[rnd.randrange(len(words))] = rnd.choice([bad, "de" + bad])
        elif how == "many-words":
            words = words * rnd.choice([9, 1000, 100_000])
        elif how == "long-word":
            words[-1] = "x" * rnd.choice([2 * len(form) + 15, 300, 100_000])
        elif how == "many-entries":
            n = rnd.choice([1000, 200_001])
            node.update({f"f{j}": ["a", "b"] for j in range(n)})
            return f"{where}: {n:,} entries added"
        elif how == "bounds":                       # just within: 16 words of 2 * len(form) + 16 characters
            words = ["a"] * 15 + ["b" * (2 * len(form) + 1)]
        else:
            node[rnd.choice([bad, form + bad, ""])] = words
            return f"{where}: the form {_short(form + bad, 30)} added"
        node[form] = words
        return f"{where}[{_short(form, 20)}] ({how}) = {_short(words, 40)}"
    if path[-1] in ("tags", "labels") and isinstance(node, list) and all(isinstance(t, str) for t in node):
        i = rnd.randrange(len(node))
        old = node[i]
        if old.count("|") == 4:                     # an edit script: what it adds, percent-encoded
            enc = "".join(f"%{b:02X}" for b in bad.encode("utf-8", "surrogatepass"))
            node[i] = rnd.choice([f"K|||x|{enc}", f"L|{enc}|||", f"U||{enc}||"])
        elif "=" in old:                            # a FEATS bundle
            node[i] = rnd.choice([old + bad, old.replace("=", bad, 1), bad])
        else:
            node[i] = rnd.choice([bad, old + bad])
        return f"{where}[{i}] = {_short(node[i], 40)} (was {_short(old, 20)})"
    return None


def op_extreme_weights(rnd, d, ctx):
    """Emission and transition weights scaled to extremes the loader
    accepts (up to float32's maximum), perhaps at the lowest or highest
    temperature it accepts: what marginals, n-best and training must
    compute with."""
    names = {e[0]: e for e in d.arrays}
    targets = [n for n in ("emit.weights", "transitions", "transitions.values")
               if n in names and names[n][1].dtype.kind == "f"]
    if not targets:
        return None
    which = rnd.choice(targets + ["both"]) if len(targets) == 2 else targets[0]
    scale = rnd.choice([1e13, 1e15, 1e20, 1e30, 1e38, float(np.finfo(np.float32).max), 1e-30, 1e-45])
    how = rnd.choice(["scale", "scale", "all", "one", "signs"])
    g = np.random.default_rng(rnd.getrandbits(32))
    big = float(np.finfo(np.float32).max)
    for name in (targets if which == "both" else [which]):
        e = names[name]
        w = e[1].astype(np.float64).ravel()
        if not w.size:
            continue
        top = np.abs(w).max()
        with np.errstate(all="ignore"):
            if how == "scale":
                w = w / (top if top > 0 else 1.0) * scale
            elif how == "all":
                w = np.full_like(w, scale)
            elif how == "one":
                w[g.integers(0, w.size)] = scale * rnd.choice([1, -1])
            else:
                w = np.where(g.random(w.size) < 0.5, -scale, scale)
        e[1] = np.clip(w, -big, big).astype(e[1].dtype).reshape(e[1].shape)
    what = f"{which} ({how}) to {scale:g}"
    meta = d.header.get("meta")
    if isinstance(meta, dict) and rnd.random() < 0.5:
        meta["temperature"] = rnd.choice([0.001, 1000.0, 0.01, 1])
        what += f", temperature {meta['temperature']}"
    return what


_TEMPLATE_ATTR = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\[")


def op_template_count(rnd, d, ctx):
    """Many valid, distinct templates over the model's own attributes:
    just under, at and over the bound (1024), and far over it (300,000 in
    a few MB, which once needed tens of GiB to tag)."""
    t = d.header.get("templates")
    if not isinstance(t, list) or not all(isinstance(x, str) for x in t):
        return None
    attrs = sorted({m for x in t for m in _TEMPLATE_ATTR.findall(x)})
    if not attrs:
        return None
    n = rnd.choice([1023, 1024, 1025, 1100, 5000, 300_000])
    have = set(t)
    new = list(t)

    def candidates():
        for off in range(-1024, 1025):
            for a in attrs:
                yield f"{a}[{off}]"
        for i in range(-1024, 1025):
            for j in range(-1024, 1025):
                yield f"{attrs[0]}[{i}]|{attrs[-1]}[{j}]"
    for c in candidates():
        if len(new) >= n:
            break
        if c not in have:
            new.append(c)
    d.header["templates"] = new
    return f"templates: {len(t)} -> {len(new)}"


def op_header_size(rnd, d, ctx):
    """A header just under or over its bounds (16 MiB, 2**20 lists and
    objects): one long string, a long list of empty lists (the costliest
    JSON to parse), or spaces."""
    limit = 16 * 1024 * 1024
    size = rnd.choice([limit - 4096, limit - 200_000, limit + 1, limit + 100_000, 40 * 1024 * 1024])
    have = len(json.dumps(d.header, ensure_ascii=True)) + 200 * len(d.arrays)
    room = max(0, size - have)
    how = rnd.choice(["string", "string", "lists", "spaces"])
    meta = d.header.get("meta")
    holder, key = (meta, "corpus") if isinstance(meta, dict) else (d.header, "pad")
    if how == "string":
        holder[key] = "x" * room
    elif how == "lists":            # as many as fill the header, or around the bound of 2**20 lists
        n = rnd.choice([room // 3, (1 << 20) - 1000, (1 << 20) + 1])
        holder[key] = [[]] * n
        return f"header with {n:,} empty lists"
    else:
        d.text_ops.append(lambda text, room=room: text + " " * room)
    return f"header about {size:,} bytes ({how})"


def op_training_info(rnd, d, ctx):
    """The training settings fine-tuning and update() reuse (algorithm,
    MIRA's k and C, the online settings), the fine-tuning count, the
    temperature and the learning curve, to edge and wrong values."""
    if not isinstance(d.header.get("meta"), dict) or not isinstance(d.header.get("training"), dict):
        return None
    meta, info = d.header["meta"], d.header["training"]
    pools = {
        "algorithm": ["perceptron", "mira", "adam", "", None, 1, ["mira"]],
        "k": [1, 2, 3, 63, 64, 65, 1000, 10 ** 9, 2 ** 63, 0, -1, "x", "3", 2.0, 2.5, True, None],
        "C": [1.0, 0.001, 1e-300, 1e308, 5e-324, 0, 0.0, -1.0, NAN, INF, "1", True, None, [1]],
        "fine_tuned": [0, 1, 7, 2 ** 62, 2 ** 63, "many", -1, 1.5, None, True, [1]],
        "temperature": [0.001, 1000, 1000.0, 0.0009, 1001, 1e-300, NAN, INF, "1", True, None],
        "curve": [[], [0.5], [NAN], [INF], ["x"], "abc", None, [0.1] * 1000],
    }
    where = rnd.choice(["training", "training", "online", "meta"])
    if where == "training":
        key = rnd.choice(["algorithm", "k", "k", "C", "curve"])
        v = _copy(rnd.choice(pools[key]))
        if key == "curve":
            key = rnd.choice(["train_accuracy", "dev_scores"])
        info[key] = v
        if key in ("k", "C") and rnd.random() < 0.7:
            info["algorithm"] = "mira"
        return f"training[{key!r}] = {_short(v)}"
    if where == "online":
        online = {"algorithm": "mira", "k": 2, "C": 1.0}
        key = rnd.choice(["algorithm", "k", "C"])
        online[key] = _copy(rnd.choice(pools[key]))
        v = online if rnd.random() < 0.9 else rnd.choice([[], "mira", 3, {}])
        meta["online"] = v
        return f"meta['online'] = {_short(v)}"
    key = rnd.choice(["fine_tuned", "fine_tuned", "temperature"])
    v = _copy(rnd.choice(pools[key]))
    meta[key] = v
    return f"meta[{key!r}] = {_short(v)}"


def _parser_headers(root, path=(), depth=0):
    """Paths to the headers of parsers, wherever a pipeline nests them."""
    if depth > 4 or not isinstance(root, dict):
        return []
    found = [list(path)] if root.get("kind") == "parser" else []
    for key, value in root.items():
        if isinstance(value, dict):
            found += _parser_headers(value, path + (key,), depth + 1)
    return found


#: Label lists a parser might be given: the root label alone, none, its decorations broken.
PARSER_LABELS = [["root"], ["nsubj"], ["ROOT", "nsubj"], ["root", "root||root"], ["root", "nmod||zzz"],
                 ["root", "||"], ["root", "a||"], ["root", "||b"], ["root", "nsubj||obj||obl"], ["_", "root"],
                 ["root", "nsubj", "nsubj"], []]


def op_parser_labels(rnd, d, ctx):
    """Change a parser's label list and keep its weight table's classes
    within 1 + 2 * labels, so that the change gets past the size checks
    to what parsing does with the labels."""
    paths = _parser_headers(d.header)
    if not paths:
        return None
    path = rnd.choice(paths)
    node = _get(d.header, path)
    labels = node.get("labels")
    labels = list(labels) if isinstance(labels, list) else []
    choice = rnd.choice(["pool", "pool", "drop-root", "shrink", "grow", "many", "permute", "decorate"])
    if choice == "pool":
        new = _copy(rnd.choice(PARSER_LABELS))
    elif choice == "drop-root":
        new = [x for x in labels if x != "root"] or ["dep"]
    elif choice == "shrink":
        new = labels[:rnd.randrange(1, len(labels) + 1)] if labels else []
    elif choice == "grow":
        new = labels + [f"x{k}" for k in range(rnd.choice([1, 2, 7]))]
    elif choice == "many":
        new = labels + [f"rel{k}" for k in range(rnd.choice([1000, 5000]))]
    elif choice == "permute":
        new = list(labels)
        rnd.shuffle(new)
    else:
        new = [x + "||" + rnd.choice(labels + ["zzz"]) if isinstance(x, str) and rnd.random() < 0.5 else x
               for x in labels]
    node["labels"] = new
    _keep_classes(d, (f"{path[-1]}/" if path else "") + "weights", 1 + 2 * len(new))    # a part's: "dep/weights"
    return f"{_fmt_path(path + ['labels'])} ({choice}): {len(labels)} -> {len(new)} labels {_short(new, 50)}"


def _keep_classes(d, prefix, n_classes):
    """The weight table ``prefix`` without its weights of classes past
    ``n_classes`` (and the features left with none)."""
    arrays = {e[0]: e for e in d.arrays}
    try:
        keys, counts, labels, weights = (arrays[f"{prefix}.{k}"][1] for k in ("keys", "counts", "labels", "weights"))
        owner = np.repeat(np.arange(len(keys)), counts.astype(np.int64))
        keep = labels.astype(np.int64) < n_classes
        new_counts = np.bincount(owner[keep], minlength=len(keys)).astype(counts.dtype)
    except (KeyError, ValueError, TypeError):
        return                                  # an earlier mutation broke the table: nothing to keep in step
    arrays[f"{prefix}.keys"][1] = keys[new_counts > 0]
    arrays[f"{prefix}.counts"][1] = new_counts[new_counts > 0]
    arrays[f"{prefix}.labels"][1] = labels[keep]
    arrays[f"{prefix}.weights"][1] = weights[keep]


# (weight, operator)
OPERATORS = [
    (22, op_header_value), (10, op_header_list), (5, op_header_key), (3, op_kind),
    (6, op_tags_coherent), (4, op_templates), (4, op_tagdict), (3, op_prune), (2, op_decoder),
    (4, op_featurizer), (5, op_meta), (3, op_gazetteer), (8, op_linear), (5, op_linear_state),
    (7, op_emit_coherent), (3, op_words_array),
    (20, op_array), (3, op_array_add), (3, op_array_drop), (2, op_array_rename), (2, op_array_swap),
    (8, op_table), (4, op_payload_flip), (3, op_container),
    (5, op_tag_chars), (5, op_extreme_weights), (3, op_template_count), (1, op_header_size),
    (5, op_training_info), (6, op_written_strings), (4, op_parser_labels),
]


def mutate(data, rnd, n_ops=None):
    """(mutated file bytes, [description of each mutation])."""
    version, header, arrays = decode(data)
    d = Draft(version, header, arrays)
    if n_ops is None:
        n_ops = rnd.choices([1, 2, 3, 4], weights=[45, 30, 17, 8])[0]
    weights = [w for w, _ in OPERATORS]
    done = []
    tries = 0
    while len(done) < n_ops and tries < 50:
        tries += 1
        op = rnd.choices([f for _, f in OPERATORS], weights=weights)[0]
        try:
            what = op(rnd, d, Ctx(d))
        except (TypeError, AttributeError, ValueError, KeyError, IndexError, OverflowError) as exc:
            # an earlier mutation left something this one did not expect
            what = f"{op.__name__} stopped part way ({type(exc).__name__}: {exc})"
        if what:
            done.append(what)
    return d.encode(), done


# =====================================================================
# seed models
# =====================================================================

LINEAR_FEATURES_VOCAB = ["the", "cat", "dog", "sat", "on", "mat", "a", "ran", "big", "red"]


def _linear_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    y3 = (X[:, 0] > 0.4).astype(int) + (X[:, 1] > 0).astype(int)
    ybin = X[:, 0] + 0.3 * X[:, 2] > 0
    docs, labels = [], []
    for i in range(60):
        words = [LINEAR_FEATURES_VOCAB[j] for j in rng.integers(0, len(LINEAR_FEATURES_VOCAB), size=4)]
        docs.append([f"w={w}" for w in words] + [f"len={len(words[0])}"])
        labels.append("pos" if "cat" in words else ("neg" if "dog" in words else "neu"))
    dicts = [{f"w={w.split('=')[1]}": 1.0 for w in doc if w.startswith("w=")} | {"pos": "NN", "n": float(i % 3)}
             for i, doc in enumerate(docs)]
    return X, y3, ybin, docs, labels, dicts


#: The old engine's tokenizer file, from the release before (tests/test_previous_release.py).
OLD_TOKENIZER = HERE.parent / "data" / "previous" / "tokenizer.ftm"


def _ud_sentence(n, tokens, tree=None):
    """CoNLL-U of one sentence: ``tokens`` are (form, [(word, lemma, UPOS,
    XPOS, FEATS)], space after); ``tree``: the words' (HEAD, DEPREL), or
    None for ``_``."""
    text = "".join(form + (" " if space else "") for form, _, space in tokens).rstrip()
    lines = [f"# sent_id = {n}", f"# text = {text}"]
    k = 1
    for form, words, space in tokens:
        misc = "_" if space else "SpaceAfter=No"
        if len(words) > 1:
            lines.append(f"{k}-{k + len(words) - 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{misc}")
            misc = "_"
        for w in words:
            head, deprel = ("_", "_") if tree is None else tree[k - 1]
            lines.append(f"{k}\t" + "\t".join(w) + f"\t{head}\t{deprel}\t_\t{misc}")
            k += 1
    return "\n".join(lines) + "\n\n"


def _w(form, lemma, upos, xpos, feats="_"):
    return form, lemma, upos, xpos, feats


_DE_LE = [_w("de", "de", "ADP", "P"), _w("le", "le", "DET", "DA", "Definite=Def|Gender=Masc")]
_A_LE = [_w("à", "à", "ADP", "P"), _w("le", "le", "DET", "DA", "Definite=Def|Gender=Masc")]
#: A tiny hand-made treebank: multiword tokens whose words do not spell
#: them, lemmas by scripts and stored, features, XPOS, two paragraphs.
UD_SENTENCES = [
    [("Il", [_w("Il", "il", "PRON", "PRO", "Number=Sing|Person=3")], True),
     ("va", [_w("va", "aller", "VERB", "V", "Mood=Ind|Number=Sing|Person=3|Tense=Pres")], True),
     ("du", _DE_LE, True), ("marché", [_w("marché", "marché", "NOUN", "NC", "Gender=Masc|Number=Sing")], True),
     ("au", _A_LE, True), ("bureau", [_w("bureau", "bureau", "NOUN", "NC", "Gender=Masc|Number=Sing")], False),
     (".", [_w(".", ".", "PUNCT", "PONCT")], True)],
    [("Les", [_w("Les", "le", "DET", "DA", "Definite=Def|Number=Plur")], True),
     ("chats", [_w("chats", "chat", "NOUN", "NC", "Gender=Masc|Number=Plur")], True),
     ("mangent", [_w("mangent", "manger", "VERB", "V", "Mood=Ind|Number=Plur|Person=3|Tense=Pres")], True),
     ("du", _DE_LE, True), ("pain", [_w("pain", "pain", "NOUN", "NC", "Gender=Masc|Number=Sing")], False),
     ("!", [_w("!", "!", "PUNCT", "PONCT")], True)],
    [("Elle", [_w("Elle", "elle", "PRON", "PRO", "Gender=Fem|Number=Sing|Person=3")], True),
     ("parle", [_w("parle", "parler", "VERB", "V", "Mood=Ind|Number=Sing|Person=3|Tense=Pres")], True),
     ("au", _A_LE, True), ("chat", [_w("chat", "chat", "NOUN", "NC", "Gender=Masc|Number=Sing")], True),
     ("de", [_w("de", "de", "ADP", "P")], True),
     ("Paris", [_w("Paris", "Paris", "PROPN", "NPP", "Gender=Masc|Number=Sing")], False),
     (".", [_w(".", ".", "PUNCT", "PONCT")], True)],
    [("Nous", [_w("Nous", "nous", "PRON", "PRO", "Number=Plur|Person=1")], True),
     ("étions", [_w("étions", "être", "AUX", "V", "Mood=Ind|Number=Plur|Person=1|Tense=Imp")], True),
     ("là", [_w("là", "là", "ADV", "ADV")], False), ("?", [_w("?", "?", "PUNCT", "PONCT")], True)],
]
UD_CONLLU = "".join(_ud_sentence(n, tokens) for n, tokens in enumerate(UD_SENTENCES))
#: The treebank's trees, per word (HEAD, DEPREL); "de Paris" hangs from "Elle" across the root, a
#: non-projective arc, so that a parser learns a lifted label.
UD_TREES = [
    [(2, "nsubj"), (0, "root"), (5, "case"), (5, "det"), (2, "obl"), (8, "case"), (8, "det"), (2, "obl"),
     (2, "punct")],
    [(2, "det"), (3, "nsubj"), (0, "root"), (6, "case"), (6, "det"), (3, "obj"), (3, "punct")],
    [(2, "nsubj"), (0, "root"), (5, "case"), (5, "det"), (2, "obl:arg"), (7, "case"), (1, "nmod"), (2, "punct")],
    [(3, "nsubj"), (3, "cop"), (0, "root"), (3, "punct")],
]
UD_TREES_CONLLU = "".join(_ud_sentence(n, tokens, tree)
                          for n, (tokens, tree) in enumerate(zip(UD_SENTENCES, UD_TREES)))
#: Raw text for the models that read it: multiword tokens, unseen and odd words, two paragraphs.
RAW_TEXTS = ["Il va du marché au bureau. Elle parle du chat!", "DU PAIN au Chat de Zyxwvut ?\nÉtions-nous là",
             "😀 İ a\u00a0b 3.14 http://x.fr a@b.fr  ", "", "x"]
RAW_FILE = "\n".join(RAW_TEXTS) + "\n"
#: (feature dicts, tags) of the feature tagger.
FEATURE_PAIRS = [([{"w": w.lower(), "cap": w[:1].isupper()} for w in s], t) for s, t in (
    (["The", "cat", "sat", "."], ["D", "N", "V", "."]), (["A", "dog", "ran", "."], ["D", "N", "V", "."]),
    (["Cats", "sat"], ["N", "V"]))]


def _build_seed_models(dest):
    """Train the seed models into ``dest``; returns {name: info}.  Each info
    has ``file``, ``family`` (which inputs use it) and ``loader``."""
    from fasttag import linear as L
    from fasttag import Segmenter
    from fasttag import SpanTagger
    from fasttag import Tagger
    quiet = dict(verbose=False)
    seeds = {}

    def put(name, model, family, loader="fasttag.loads", weight=1.0):
        path = dest / f"{name}.ftm"
        path.write_bytes(model.to_bytes())
        seeds[name] = {"file": path.name, "family": family, "loader": loader, "weight": weight}

    put("pos_ud", Tagger.train(DATA / "sample.conllu", epochs=3, **quiet), "pos", weight=1.5)
    # a PTB-style tag set (20 tags) with a tag dictionary (the words seen
    # twice) and pruning; the words seen once stay open, so that the
    # emission table is not empty
    from fasttag.text import formats as ftio
    ptb = [(x.words, x.tags) for x in ftio.read(DATA / "sample.conll", column=1)] * 2 + \
        [(x.words, x.tags) for x in ftio.read(DATA / "sample.conllu", column="xpos")]
    put("pos_ptb_tagdict_prune", Tagger.train(ptb, tagdict_min_count=2, prune_k=4, epochs=3, **quiet), "pos",
        weight=2)
    put("pos_xpos_greedy", Tagger.train(DATA / "sample.conllu", column="xpos", decoder="greedy",
                                        tagdict_min_count=2, epochs=3, **quiet), "pos", weight=1.5)
    put("pos_mira", Tagger.train(ptb, algorithm="mira", k=2, tagdict_min_count=2, prune_k=3, epochs=3, **quiet),
        "pos", weight=1.5)
    put("seg", Segmenter.train(DATA / "sample_zh_train.txt", epochs=3, **quiet), "seg", weight=2.5)
    put("seg_dict", Segmenter.train(DATA / "sample_zh_train.txt", epochs=3, dictionary=DATA / "sample_userdict.txt",
                                    folds=2, runs={"latin": True, "digits": False}, prune=0.01, **quiet),
        "seg", weight=2.5)
    put("ner", SpanTagger.train(DATA / "sample_ner.conll", task="ner", epochs=3, **quiet), "ner", weight=1.5)
    put("ner_gazetteer", SpanTagger.train(DATA / "sample_ner.conll", task="ner", epochs=3,
                                          gazetteers={"LOC": ["Paris", "BRUSSELS"],
                                                      "ORG": ["Acme Travel", "EU", "European Union"]},
                                          **quiet), "ner", weight=2)
    put("chunk", SpanTagger.train(DATA / "sample_chunk.conll", task="chunk", epochs=3, **quiet), "chunk",
        weight=1.5)
    put("chunk_iob2_nocolumns", SpanTagger.train(DATA / "sample_chunk.conll", task="chunk", epochs=3,
                                                 internal_scheme="iob2", feature_columns=[], **quiet),
        "chunk", weight=1)

    # the models of CoNLL-U's word columns and raw text, from a tiny hand-made treebank
    from fasttag import Tokenizer
    from fasttag.tasks.featuredicts import FeatureTagger
    from fasttag.tasks.lemma import Lemmatizer
    from fasttag.tasks.morph import Morphologizer
    from fasttag.pipeline import Pipeline
    from fasttag.model import modelfile
    ud = dest / "ud.conllu"
    ud.write_text(UD_CONLLU * 3, encoding="utf-8")
    put("tok", Tokenizer.train(ud, epochs=3, **quiet), "tok", weight=1.5)
    put("tok_spaceless", Tokenizer.train(DATA / "sample_spaceless.conllu", epochs=2, **quiet), "tok", weight=1)
    put("lemma", Lemmatizer.train(ud, epochs=3, **quiet), "lemma", weight=1.5)
    # 140 edit scripts: a transition matrix large enough to be stored sparse (transitions.index/.values)
    many = [[(f"{stem}x{i}", "NOUN", stem) for stem in ("talo", "kirja")] for i in range(140)] * 2
    put("lemma_many_scripts", Lemmatizer.train(many, epochs=2, **quiet), "lemma", weight=1)
    put("morph", Morphologizer.train(ud, epochs=3, **quiet), "morph", weight=1)
    put("pipeline", Pipeline.train(ud, epochs=2, **quiet), "ud", weight=2)
    from fasttag.tasks.dep import DependencyParser
    trees = dest / "ud_trees.conllu"
    trees.write_text(UD_TREES_CONLLU * 3, encoding="utf-8")
    put("parser", DependencyParser.train(trees, epochs=3, **quiet), "dep", weight=1.5)
    put("pipeline_dep", Pipeline.train(trees, epochs=2, **quiet), "ud", weight=1.5)
    put("features", FeatureTagger.train(FEATURE_PAIRS * 3, epochs=3, **quiet), "features", weight=1)
    if OLD_TOKENIZER.exists():
        # the character tagger of earlier releases (it cannot be trained now), given expansions
        header, arrays = modelfile.loads(OLD_TOKENIZER.read_bytes())
        header["expansions"] = {"du": ["de", "le"], "au": ["à", "le"]}
        path = dest / "tok_chars.ftm"
        path.write_bytes(modelfile.dumps(header, arrays))
        seeds["tok_chars"] = {"file": path.name, "family": "tok", "loader": "fasttag.loads", "weight": 1}

    X, y3, ybin, docs, labels, dicts = _linear_data()
    try:
        import scipy.sparse as sp
        Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    except ImportError:                         # scipy is optional: dense stands in
        Xs = X
    common = dict(random_state=0, max_iter=5, tol=None)
    lin = [
        ("perceptron_dense_3class", L.Perceptron(**common), X, y3),
        ("perceptron_features_binary_str", L.Perceptron(n_features=None, **common), docs,
         ["pos" if lab == "pos" else "other" for lab in labels]),
        ("avgperceptron_sparse_bool", L.AveragedPerceptron(**common), Xs, ybin),
        ("avgperceptron_dicts_3class", L.AveragedPerceptron(**common), dicts, labels),
        ("pa_mira_sparse_avg", L.PassiveAggressiveClassifier(variant="MIRA", average=True, **common), Xs, y3),
        ("pa2_dense_binary_float", L.PassiveAggressiveClassifier(variant="PA-II", **common), X,
         ybin.astype(float) * 2 - 1),
        ("sgd_log_features_avg", L.SGDClassifier(loss="log_loss", average=True, **common), docs, labels),
        ("sgd_mhuber_dense_binary", L.SGDClassifier(loss="modified_huber", **common), X, ybin.astype(int)),
        ("sgd_hinge_sparse_3class", L.SGDClassifier(loss="hinge", average=3, **common), Xs, y3),
        ("sgd_hinge_hashed", L.SGDClassifier(loss="hinge", n_features=64, **common), docs, labels),
        ("sgdreg_dense", L.SGDRegressor(average=True, **common), X, X[:, 0] * 2 + 1),
        ("sgdreg_features_huber", L.SGDRegressor(loss="huber", **common), dicts,
         np.arange(len(dicts)) % 5 * 1.0),
        ("neuron_logistic_dense", L.Neuron("logistic", random_state=0, max_iter=20, tol=None), X,
         ybin.astype(float)),
        ("neuron_relu_features_sgd", L.Neuron("relu", solver="sgd", random_state=0, max_iter=3, tol=None), docs,
         np.arange(len(docs)) % 3 * 1.0),
    ]
    mlp = dict(hidden_layer_sizes=(4,), random_state=0, max_iter=5)
    lin += [("mlp_classifier_dense_3class", L.MLPClassifier(**mlp), X, y3),
            ("mlp_regressor_dense", L.MLPRegressor(**mlp), X, X[:, 0] * 2 + 1)]
    import warnings
    for name, est, Xt, yt in lin:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # an MLP does not converge in 5 iterations
            est.fit(Xt, yt)
        put(name, est, "linear", loader=f"linear.{type(est).__name__}", weight=0.7)
    return seeds


def _seed_key():
    h = hashlib.sha256(f"seeds {SEEDS_VERSION}".encode())
    import fasttag
    pkg = Path(fasttag.__file__).resolve().parent
    for path in sorted(list(pkg.rglob("*.py")) + list(pkg.rglob("*.pyx")) + list(pkg.rglob("*.pxd"))
                       + list(DATA.glob("*")) + [HERE]):
        h.update(path.name.encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def build_seeds(cache_dir=None, bundled=True):
    """The seed models: {name: info with an absolute ``path``}, trained once
    and cached (by a hash of the fasttag sources and the samples) in
    ``cache_dir`` (default: a folder in the system's temporary directory)."""
    base = Path(cache_dir) if cache_dir else Path(tempfile.gettempdir()) / "fasttag-fuzz-seeds"
    folder = base / _seed_key()
    manifest = folder / "seeds.json"
    if not manifest.exists():
        tmp = Path(tempfile.mkdtemp(prefix="building-", dir=_mkdir(base)))
        seeds = _build_seed_models(tmp)
        (tmp / "seeds.json").write_text(json.dumps(seeds, indent=1))
        try:
            os.replace(tmp, folder)
        except OSError:                       # built meanwhile by another process
            shutil.rmtree(tmp, ignore_errors=True)
    seeds = json.loads(manifest.read_text())
    for info in seeds.values():
        info["path"] = str(folder / info["file"])
    if bundled:
        from fasttag import store as loading
        for lang, family in (("en", "pos"), ("zh", "seg")):
            try:
                path = loading.default_model_path(lang)
            except Exception:
                continue
            seeds[f"bundled_{lang}"] = {"path": str(path), "family": family, "loader": "fasttag.loads",
                                        "weight": 0.35, "bundled": True}
    return seeds


def warm_file(seeds, folder):
    """A JSON file of the small unmutated seed cases, for a worker to run
    once before it forks (see :func:`_warm_up`)."""
    cases = [{"index": -1, "seed": name, "path": info["path"], "loader": info["loader"], "family": info["family"]}
             for name, info in sorted(seeds.items()) if not info.get("bundled")]
    path = Path(folder) / "warm.json"
    path.write_text(json.dumps(cases))
    return path


def _mkdir(p):
    p.mkdir(parents=True, exist_ok=True)
    return p


_DECODED = {}
_DECODED_LOCK = threading.Lock()


def _seed_bytes(info):
    with _DECODED_LOCK:
        data = _DECODED.get(info["path"])
        if data is None:
            data = _DECODED[info["path"]] = Path(info["path"]).read_bytes()
        return data


def case_random(key):
    """The random generator of the case named ``key`` (any string; the long
    mode names case i of seed S "S:i")."""
    return random.Random(f"fasttag-fuzz:{key}")


def make_case(seeds, key, index=0, folder=None, bundled=True):
    """The fuzz case named ``key``: a dict with the mutated ``data``, the
    ``seed`` model's name, ``family``, ``loader``, timeout ``scale``,
    ``description`` (one line per mutation) and ``repro`` (a command that
    regenerates and runs it); written to ``folder`` (as ``path``) when
    given.  The same key and seed models give the same case."""
    rnd = case_random(key)
    names = sorted(n for n in seeds if bundled or not seeds[n].get("bundled"))
    name = rnd.choices(names, weights=[seeds[n]["weight"] for n in names])[0]
    info = seeds[name]
    data, description = mutate(_seed_bytes(info), rnd)
    case = {"index": index, "key": key, "seed": name, "family": info["family"], "loader": info["loader"],
            "scale": BUNDLED_SCALE if info.get("bundled") else 1.0, "description": description, "data": data,
            "repro": f"python tests/fuzz_models.py --replay {key}{'' if bundled else ' --no-bundled'}"}
    if folder is not None:
        path = Path(folder) / f"case-{index:06d}.ftm"
        path.write_bytes(data)
        case["path"] = str(path)
    return case


# =====================================================================
# the worker: load and use one case at a time
# =====================================================================

class RoundTripMismatch(AssertionError):
    """to_bytes() then loading gave a model with different outputs."""


POS_SENTS = [["The", "cat", "sat", "on", "the", "mat", "."],
             ["Alice", "visited", "Zyxwvut", "in", "1996", "!"],
             ["unseenword123", "ÄÖÜ", "😀", "a" * 300, "-", "#", "İ"],
             ["x"], []]
SEG_TEXTS = ["迈向充满希望的新世纪", "我们今天去北京参观博物馆。", "１９９８年１月１日，新年到来了。",
             "iPhone12和URL http://x.cn 以及 a@b.com 3.14%", "", "   ", "😀𠀀\udc80a\u3000b", "北京大学区块链人工智能"]
SEG_GOLD = ["我们 今天 去 北京 参观 博物馆 。", "中国 经济 保持 了 稳定 增长 。", "", "新 世纪"]
SPAN_SENTS = [["EU", "rejects", "German", "call", "to", "boycott", "British", "lamb", "."],
              ["Peter", "Blackburn"], ["BRUSSELS", "1996-08-22"], ["Acme", "Travel", "in", "Paris", "😀", "İ"],
              []]
SPAN_POS = ["NNP", "VBZ", "JJ", "NN", "TO", "VB", "IN", "CD", "."]
FEATURE_X = [["w=the", "w=cat", "len=3"], ["w=dog", "w=ran", "w=unseen_zz"], [], ["w=the", "w=the"],
             ["w=mat", "len=4"], ["w=red", "w=big", "w=a"]]


def _strip_timing(result):
    if isinstance(result, dict):
        return {k: _strip_timing(v) for k, v in result.items()
                if k not in ("seconds", "tokens_per_second", "chars_per_second")}
    return result


def _same(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return repr(a.tolist()) == repr(b.tolist())
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return a == b


class Phases:
    """Runs the use steps, remembering which one is running."""

    def __init__(self):
        self.name = "load"

    def __call__(self, name, fn, *args, **kw):
        self.name = name
        return fn(*args, **kw)


def _roundtrip(ph, model, loader, outputs_fn):
    data = ph("to_bytes", model.to_bytes)
    again = ph("load(to_bytes())", _load, data, loader)
    first = outputs_fn(model)
    second = ph("outputs after the round trip", outputs_fn, again)
    if not _same(first, second):
        ph.name = "round trip"
        raise RoundTripMismatch(f"outputs differ after to_bytes/load: {_short(first, 200)} != "
                                f"{_short(second, 200)}")
    return again


class UseCheckFailed(AssertionError):
    """A use step returned something wrong (marginals that are not
    probabilities, output lines a tag name broke)."""


def _check_marginals(probs, lengths, n_tags):
    """Per sentence an n x T array of finite probabilities, each row
    summing to 1."""
    if len(probs) != len(lengths):
        raise UseCheckFailed(f"{len(probs)} marginal arrays for {len(lengths)} sentences")
    for p, n in zip(probs, lengths):
        p = np.asarray(p)
        if p.shape != (n, n_tags) or not np.all(np.isfinite(p)) or np.any(p < -1e-9) or np.any(p > 1 + 1e-6) \
                or (n and not np.allclose(p.sum(axis=1), 1.0, atol=1e-6)):
            raise UseCheckFailed(f"marginals are not probabilities: shape {p.shape}, row sums "
                                 f"{_short(p.sum(axis=1).tolist() if p.ndim == 2 else None, 80)}")


def _nbest(fn, model):
    """``fn()`` (an n-best call); a greedy model refuses n-best lists with
    the documented InputError."""
    from fasttag import InputError
    try:
        return fn()
    except InputError as exc:
        if model.model.decoder == "greedy" and "Viterbi" in str(exc):
            return None
        raise


def _tag_file(model, tmp, name, text, **kw):
    """``model.tag_file`` of ``text`` written to a file, as the console
    script writes it (UTF-8, lone surrogates of the input passed through):
    the output text."""
    import io
    src = Path(tmp) / name
    src.write_bytes(text.encode("utf-8", "surrogateescape"))
    buf = io.BytesIO()
    out = io.TextIOWrapper(buf, encoding="utf-8", errors="surrogateescape", newline="\n")
    model.tag_file(str(src), out, **kw)
    out.flush()
    return buf.getvalue().decode("utf-8", "surrogateescape")


def _check_lines(out, sentences, what):
    """Text output: one line per sentence, one ``word/TAG`` item per word,
    no control characters: a tag name cannot add a line or a field."""
    lines = out.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) != len(sentences) or any(len(line.split(" ")) != len(s) for line, s in zip(lines, sentences)
                                           if s):
        raise UseCheckFailed(f"{what}: {len(lines)} output lines for {len(sentences)} sentences: {_short(out, 120)}")
    bad = [ch for ch in out if ch not in "\n" and (ord(ch) < 32 or 0x7f <= ord(ch) < 0xa0 or
                                                  0xd800 <= ord(ch) < 0xe000)]
    if bad:
        raise UseCheckFailed(f"{what}: the output holds {ascii(bad[0])}")


def _check_conllu(out, n_lines, what):
    """CoNLL-U output: as many lines as the input, 10 fields each."""
    lines = out.rstrip("\n").split("\n")
    if len(lines) != n_lines or any(len(line.split("\t")) != 10 for line in lines if line and line[0] != "#"):
        raise UseCheckFailed(f"{what}: the tags broke the CoNLL-U lines: {_short(out, 120)}")


def _inspect(model):
    """What ``fasttag inspect`` computes (its printing is the console
    script's business)."""
    from fasttag.model import inspection
    desc = inspection.describe(model)
    inspection.report(desc)
    json.dumps(desc, ensure_ascii=False, allow_nan=True)
    return desc


def _fine_tune(model, data, **kw):
    """A model fine-tuned from ``model`` for one epoch, then used."""
    tuned = type(model).train(data, init=model, epochs=1, verbose=False, **kw)
    tuned.to_bytes()
    return tuned


def _use_tagger(model, case, ph, tmp):
    out = ph("tag_sents", model.tag_sents, POS_SENTS)
    ph("tag", model.tag, POS_SENTS[1])
    ph("tags", lambda: model.tags)
    tags = model.tags
    gold = [(s, [tags[i % len(tags)] if tags else "X" for i in range(len(s))]) for s in POS_SENTS if s]
    ph("evaluate(pairs)", model.evaluate, gold)
    from fasttag import InputError

    def explicit():
        try:
            model.evaluate(DATA / "sample.conllu", format="conllu", column="upos", word_column=0)
        except InputError as exc:      # a PTB-tag model on UPOS gold: refused, never scored 0
            if "not in the model's tag set" not in str(exc):
                raise
    ph("evaluate(file, explicit format)", explicit)
    try:
        # the stored reading options (word column 22, say) may not fit this
        # file: a one-line InputError naming file and line is the right answer
        model.evaluate(DATA / ("sample.conllu" if model.meta.get("format") == "conllu" else "sample.conll"))
    except InputError:
        pass
    except Exception:
        ph.name = "evaluate(file, model's own format options)"
        raise
    _roundtrip(ph, model, case["loader"],
               lambda m: (m.tags, m.tag_sents(POS_SENTS), _strip_timing(m.evaluate(gold))))
    ph("tag_sents(n_best=3)", _nbest, lambda: model.tag_sents(POS_SENTS, n_best=3), model)
    probs = ph("marginals", model.marginals, POS_SENTS)
    ph("marginals are probabilities", _check_marginals, probs, [len(s) for s in POS_SENTS], len(tags))
    ph("explain", model.explain, POS_SENTS[1])
    text = "\n".join(" ".join(s) for s in POS_SENTS) + "\n"
    tagged = ph("tag_file(text)", _tag_file, model, tmp, "in.txt", text, format="text")
    ph("tag_file(text) lines", _check_lines, tagged, POS_SENTS, "tag_file(text)")
    conllu = "".join(f"# sent_id = {k}\n" + "".join(f"{i + 1}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\n"
                                                       for i, w in enumerate(s)) + "\n"
                     for k, s in enumerate(POS_SENTS[:3]))
    tagged = ph("tag_file(conllu)", _tag_file, model, tmp, "in.conllu", conllu, format="conllu")
    ph("tag_file(conllu) lines", _check_conllu, tagged, conllu.rstrip("\n").count("\n") + 1, "tag_file(conllu)")
    ph("tag_file(json, nbest)", _nbest, lambda: _tag_file(model, tmp, "in2.txt", text, format="text", json=True,
                                                         nbest=2), model)
    ph("inspect", _inspect, model)
    tuned = ph("fine-tune", _fine_tune, model, gold)
    ph("tag after fine-tuning", tuned.tag_sents, POS_SENTS)
    ph("update", model.update, gold)
    ph("tag after update", model.tag_sents, POS_SENTS)
    return out


def _use_segmenter(model, case, ph, tmp):
    ph("segment", lambda: [model.segment(t) for t in SEG_TEXTS])
    ph("segment_lines", lambda: list(model.segment_lines(SEG_TEXTS)))
    ph("evaluate", model.evaluate, SEG_GOLD)
    ph("vocabulary", model.vocabulary)
    _roundtrip(ph, model, case["loader"],
               lambda m: ([m.segment(t) for t in SEG_TEXTS], _strip_timing(m.evaluate(SEG_GOLD))))
    ph("add_words(force)", model.add_words, {"北京大学": 3.0, "区块链": 1.0, "新世纪": 2.0}, mode="force")
    ph("segment with force words", lambda: [model.segment(t) for t in SEG_TEXTS])
    ph("add_words(feature)", model.add_words, ["人工智能", "博物馆"], mode="feature")
    ph("segment with feature words", lambda: [model.segment(t) for t in SEG_TEXTS])
    ph("clear_words", model.clear_words)
    ph("segment after clear_words", lambda: [model.segment(t) for t in SEG_TEXTS])
    lines = [t for t in SEG_TEXTS if not re.search("[\ud800-\udfff]", t)]     # files are UTF-8
    text = "\n".join(lines) + "\n"
    out = ph("tag_file", _tag_file, model, tmp, "in.txt", text)
    if out.count("\n") != len(lines):
        ph.name = "tag_file lines"
        raise UseCheckFailed(f"tag_file: {out.count(chr(10))} lines for {len(lines)}: {_short(out, 120)}")
    ph("tag_file(json)", _tag_file, model, tmp, "in.txt", text, json=True)
    ph("inspect", _inspect, model)
    gold = [g.split() for g in SEG_GOLD if g.split()]
    tuned = ph("fine-tune", _fine_tune, model, gold)
    ph("segment after fine-tuning", lambda: [tuned.segment(t) for t in SEG_TEXTS])
    ph("update", model.update, gold)
    ph("segment after update", lambda: [model.segment(t) for t in SEG_TEXTS])


def _small_int(v, lo=-64, hi=64):
    return v if isinstance(v, int) and not isinstance(v, bool) and lo <= v < hi else None


def _span_eval_file(model, tmp, case):
    """A column file laid out as the model says its input is (word, tag and
    feature columns), with the sample's words and gold tags; None when the
    model's column settings do not describe a file one could write."""
    meta = model.meta
    feats = meta.get("feature_columns", [])
    wc, tc = _small_int(meta.get("word_column", 0)), _small_int(meta.get("tag_column", -1))
    if wc is None or tc is None or not isinstance(feats, list) or any(_small_int(f) is None for f in feats):
        return None
    n = max([1 + c if c >= 0 else -c for c in [wc, tc] + feats] + [2])
    if len({c % n for c in [wc, tc]} | {f % n for f in feats}) != 2 + len(feats):
        return None                             # columns that overlap
    sample = DATA / ("sample_ner.conll" if case["family"] == "ner" else "sample_chunk.conll")
    lines = []
    for line in sample.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if not parts:
            lines.append("")
            continue
        if parts[0] == "-DOCSTART-":
            lines.append(" ".join(["-DOCSTART-"] + ["-X-"] * (n - 2) + ["O"]))
            continue
        row = ["_"] * n
        row[wc % n] = parts[0]
        row[tc % n] = parts[-1]
        for j, f in enumerate(feats):
            row[f % n] = parts[1 + j % max(1, len(parts) - 2)] if len(parts) > 2 else "NN"
        lines.append(" ".join(row))
    path = Path(tmp) / "eval.conll"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _use_spans(model, case, ph, tmp):
    n_in = len(model.feature_columns)
    columns = [[tuple(SPAN_POS[(i + j) % len(SPAN_POS)] for j in range(n_in)) for i in range(len(s))]
               for s in SPAN_SENTS]
    out = ph("tag_sents", model.tag_sents, SPAN_SENTS, columns=columns)
    ph("tag_sents(documents)", model.tag_sents, SPAN_SENTS, columns=columns, documents=[0, 0, 1, 1, 1])
    ph("spans", model.spans, SPAN_SENTS[0], columns=columns[0])
    ph("types", lambda: model.types)
    path = ph("writing the evaluation file", _span_eval_file, model, tmp, case)
    if path is not None:
        ph("evaluate(file laid out as the model says)", model.evaluate, path)
    _roundtrip(ph, model, case["loader"], lambda m: m.tag_sents(SPAN_SENTS, columns=columns))
    ph("tag_sents(n_best=3)", _nbest, lambda: model.tag_sents(SPAN_SENTS, columns=columns, n_best=3), model)
    probs = ph("marginals", model.marginals, SPAN_SENTS, columns=columns)
    ph("marginals are probabilities", _check_marginals, probs, [len(s) for s in SPAN_SENTS], len(model.model.tags))
    found = ph("spans(with_confidence)", model.spans, SPAN_SENTS[0], columns=columns[0], with_confidence=True)
    if not all(0.0 <= sp[-1] <= 1.0 for sp in found):
        ph.name = "span probabilities"
        raise UseCheckFailed(f"span probabilities outside [0, 1]: {_short(found, 120)}")
    ph("explain", model.explain, SPAN_SENTS[0], columns=columns[0])
    if n_in == 0:
        sents = [s for s in SPAN_SENTS if s]
        text = "\n".join(" ".join(s) for s in sents) + "\n"
        tagged = ph("tag_file(text)", _tag_file, model, tmp, "in.txt", text, format="text")
        ph("tag_file(text) lines", _check_lines, tagged, sents, "tag_file(text)")
        ph("tag_file(json, nbest)", _nbest, lambda: _tag_file(model, tmp, "in.txt", text, format="text",
                                                             json=True, nbest=2), model)
    elif path is not None:
        ph("tag_file(conll)", _tag_file, model, tmp, "in.conll", path.read_text(encoding="utf-8"), format="conll")
    ph("inspect", _inspect, model)
    from fasttag import InputError
    data = path if path is not None else ([(s, ["O"] * len(s)) for s in SPAN_SENTS if s] if n_in == 0 else None)
    if data is not None:
        # the file is read with the model's own settings (scheme, columns):
        # where they do not fit it, a one-line InputError is the right answer
        ph.name = "fine-tune"
        try:
            tuned = _fine_tune(model, data, allow_new_tags=True)
        except InputError:
            tuned = None
        if tuned is not None:
            ph("tag after fine-tuning", tuned.tag_sents, SPAN_SENTS, columns=columns)
        ph.name = "update"
        try:
            model.update(data, allow_new_tags=True)
        except InputError:
            pass
        ph("tag after update", model.tag_sents, SPAN_SENTS, columns=columns)
    return out


def _linear_inputs(est):
    if hasattr(est, "feature_keys_"):
        return FEATURE_X, FEATURE_X
    n = getattr(est, "n_features_in_", 3)
    n = int(n) if isinstance(n, (int, float, np.integer, np.floating)) and math.isfinite(n) \
        and 0 <= n <= 10 ** 6 else 3
    X = np.random.default_rng(0).normal(size=(6, n))
    try:
        import scipy.sparse as sp
        return X, sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0))
    except ImportError:
        return X, X


def _use_linear(est, case, ph, tmp):
    X, Xs = _linear_inputs(est)
    classifier = hasattr(est, "classes_")
    if classifier:
        classes = np.asarray(est.classes_)
        y = classes[np.arange(len(X)) % len(classes)] if classes.ndim == 1 and len(classes) else None
    else:
        y = np.linspace(-1.0, 2.0, len(X))

    def outputs(m):
        res = [m.predict(X), m.predict(Xs)]
        if hasattr(m, "decision_function"):
            res.append(m.decision_function(X))
        if hasattr(m, "predict_proba"):
            res.append(m.predict_proba(X))
        return res
    ph("predict", est.predict, X)
    ph("predict(sparse)", est.predict, Xs)
    if hasattr(est, "decision_function"):
        ph("decision_function", est.decision_function, X)
    if ph("hasattr(predict_proba)", hasattr, est, "predict_proba"):
        ph("predict_proba", est.predict_proba, X)
        ph("predict_log_proba", est.predict_log_proba, X)
    if hasattr(est, "decision_function_raw"):
        ph("decision_function_raw", est.decision_function_raw, X)
    if hasattr(est, "coefs_"):                     # an MLP: a matrix per layer
        ph("coefs_", lambda: est.coefs_)
    else:
        ph("coef_", lambda: est.coef_)
    if y is not None:
        ph("score", est.score, X, y)
    _roundtrip(ph, est, case["loader"], outputs)
    if hasattr(est, "partial_fit") and y is not None:
        try:
            est.partial_fit(X, y)
        except ValueError as exc:
            if "step counter" not in str(exc):       # the one documented limit
                ph.name = "partial_fit"
                raise
            return
        ph("partial_fit(sparse)", est.partial_fit, Xs, y)
        ph("predict after partial_fit", est.predict, X)
        # extreme stored weights (3e38) or steps (eta0 1e30) may take the weights
        # past what a model file holds in training: that is arithmetic, not memory
        # safety, and to_bytes then refuses the diverged model with a clear
        # ValueError on purpose (any other error fails the case)
        try:
            est.to_bytes()
        except ValueError as exc:
            if "training diverged" in str(exc):
                return
            ph.name = "to_bytes after partial_fit"
            raise
        _roundtrip(ph, est, case["loader"], lambda m: [m.predict(X)])


# ---------------------------------------------------------------- what CoNLL-U's models write

#: Characters no output line holds: controls, line breaks but "\n", lone surrogates (tabs: CoNLL-U's own).
_UNWRITABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_CONLLU_ID = re.compile(r"([1-9][0-9]*)(?:-([1-9][0-9]*))?")


def _check_utf8(out, what):
    """Output that has no strict UTF-8 (a lone surrogate) is a failure."""
    try:
        out.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise UseCheckFailed(f"{what}: the output is not UTF-8 ({ascii(out[exc.start:exc.start + 3])})") from None


def _check_strings(values, what, spaces=True):
    """Strings a model returned: non-empty, one field each (no tab, line
    break, control character or lone surrogate; no space where ``spaces``
    is false)."""
    for v in values:
        if not isinstance(v, str) or not v or "\t" in v or _UNWRITABLE.search(v) or (not spaces and " " in v):
            raise UseCheckFailed(f"{what}: {ascii(v)[:60]} is not one field")


def _check_valid_conllu(out, what):
    """Valid CoNLL-U: UTF-8, "\n" line ends only, comment lines and word
    lines of 10 non-empty fields (spaces only in FORM, LEMMA and MISC),
    word IDs counting from 1 in each sentence, ranges over the next words."""
    _check_utf8(out, what)
    if out and not out.endswith("\n"):
        raise UseCheckFailed(f"{what}: no final line end")
    expected = 1
    for n, line in enumerate(out[:-1].split("\n") if out else [], start=1):
        if _UNWRITABLE.search(line):
            raise UseCheckFailed(f"{what}: line {n} holds {ascii(_UNWRITABLE.search(line).group())}")
        if not line:
            expected = 1
            continue
        if line.startswith("#"):
            if "\t" in line:
                raise UseCheckFailed(f"{what}: line {n}, a comment, holds a tab")
            continue
        fields = line.split("\t")
        m = _CONLLU_ID.fullmatch(fields[0])
        if len(fields) != 10 or not all(fields) or m is None or int(m.group(1)) != expected \
                or any(" " in f for i, f in enumerate(fields) if i not in (1, 2, 9)):
            raise UseCheckFailed(f"{what}: line {n} is not a CoNLL-U word line: {ascii(line)[:120]}")
        if m.group(2) is None:
            expected += 1
        elif int(m.group(2)) <= expected:
            raise UseCheckFailed(f"{what}: line {n}: the range {fields[0]} is not of two or more words")


def _check_json_lines(out, what):
    _check_utf8(out, what)
    for n, line in enumerate(out.splitlines(), start=1):
        try:
            json.loads(line)
        except ValueError as exc:
            raise UseCheckFailed(f"{what}: line {n} is not JSON ({exc})") from None


def _check_text_lines(out, what):
    _check_utf8(out, what)
    found = _UNWRITABLE.search(out.replace("\n", ""))
    if found:
        raise UseCheckFailed(f"{what}: the output holds {ascii(found.group())}")


def _ud_file(tmp, trees=False):
    """The hand-made treebank in ``tmp``; with ``trees``, its HEAD and DEPREL filled."""
    path = Path(tmp) / ("ud_trees.conllu" if trees else "ud.conllu")
    if not path.exists():
        path.write_text(UD_TREES_CONLLU if trees else UD_CONLLU, encoding="utf-8")
    return path


def _fine_tune_or_refused(ph, model, data, **kw):
    """:func:`_fine_tune`; a one-line InputError (the model's settings do
    not fit the data) is an answer too.  None then."""
    from fasttag import InputError
    ph.name = "fine-tune"
    try:
        return _fine_tune(model, data, **kw)
    except InputError as exc:
        if "\n" in str(exc):
            raise
        return None


def _spacy_nlp():
    """A blank spaCy pipeline made before the worker forks, or None without spaCy."""
    if "nlp" not in _SPACY:
        try:
            import spacy
            import fasttag.spacy        # noqa: F401 -- its factories
            _SPACY["nlp"] = spacy.blank("xx")
        except ImportError:
            _SPACY["nlp"] = None
    return _SPACY["nlp"]


_SPACY = {}


def _check_spacy_trees(docs):
    """A parsed doc: each sentence one tree (one root, its own head, labelled
    ROOT), heads inside their sentence, labels that are fields."""
    for doc in docs:
        for sent in doc.sents:
            roots = [t for t in sent if t.head.i == t.i]
            if len(roots) != 1 or roots[0].dep_ != "ROOT" or any(not sent.start <= t.head.i < sent.end
                                                                 for t in sent):
                raise UseCheckFailed(f"spaCy parse: {[(t.text, t.head.i, t.dep_) for t in sent]!r:.200}")
        _check_strings([t.dep_ for t in doc], "spaCy deps", spaces=False)
        list(doc.noun_chunks)


def _use_spacy(model, ph, tmp, component):
    """The model as spaCy's tokenizer or UD component, where spaCy is installed."""
    nlp = _spacy_nlp()
    if nlp is None:
        return
    path = Path(tmp) / "spacy-model.ftm"
    path.write_bytes(model.to_bytes())
    texts = [t for t in RAW_TEXTS if t]
    if component == "tokenizer" or getattr(model, "tokenizer", None) is not None:
        from fasttag.spacy import FasttagTokenizer
        tokenizer = ph("spaCy tokenizer", FasttagTokenizer, nlp.vocab, str(path))
        docs = ph("spaCy tokenizer(text)", lambda: [tokenizer(t) for t in texts])
    else:
        docs = [nlp.make_doc(t) for t in texts]
    if component == "ud":
        from fasttag.spacy import FasttagPipeline      # what nlp.add_pipe("fasttag_ud") makes
        pipe = ph("spaCy fasttag_ud", FasttagPipeline, nlp.vocab, "fasttag_ud", str(path), 1000)
        docs = ph("spaCy fasttag_ud(doc)", lambda: [pipe(doc) for doc in docs])
        ph("spaCy lemmas", _check_strings, [t.lemma_ for d in docs for t in d if t.lemma_], "spaCy lemmas")
        if "head" in model.columns:
            ph("spaCy parse", _check_spacy_trees, docs)


def _use_tokenizer(model, case, ph, tmp):
    out = ph("tokenize", lambda: [model.tokenize(t) for t in RAW_TEXTS])
    ph("tokens are fields", _check_strings, [w for doc in out for s in doc for w in s], "tokenize")
    ph("tokenize(offsets)", lambda: [model.tokenize(t, offsets=True) for t in RAW_TEXTS])
    ph("sentence_tokens", lambda: [model.sentence_tokens(t) for t in RAW_TEXTS])
    ph("tokenize_lines", lambda: list(model.tokenize_lines(RAW_TEXTS)))
    for i, t in enumerate(RAW_TEXTS):
        ph("to_conllu", _check_valid_conllu, ph("to_conllu", model.to_conllu, t), f"to_conllu(RAW_TEXTS[{i}])")
    ud = _ud_file(tmp)
    ph("evaluate", model.evaluate, ud)
    text = RAW_FILE
    ph("tag_file lines", _check_text_lines, ph("tag_file", _tag_file, model, tmp, "in.txt", text), "tag_file")
    ph("tag_file(json) lines", _check_json_lines, ph("tag_file(json)", _tag_file, model, tmp, "in.txt", text,
                                                      json=True), "tag_file(json)")
    _roundtrip(ph, model, case["loader"], lambda m: [m.tokenize(t) for t in RAW_TEXTS])
    ph("inspect", _inspect, model)
    _use_spacy(model, ph, tmp, "tokenizer")
    tuned = _fine_tune_or_refused(ph, model, ud)
    if tuned is not None:
        ph("tokenize after fine-tuning", lambda: [tuned.tokenize(t) for t in RAW_TEXTS])
    return out


def _upos_sentences():
    """(words, UPOS) of the hand-made treebank and of odd words."""
    words = [s + ["Zyxwvut", "😀", "İ", "ÉTIONS", "a" * 300] for s in (["Il", "va", "de", "le", "marché"],
                                                                       ["Nous", "étions", "là", "?"])]
    return words, [["PRON", "VERB", "ADP", "DET", "NOUN", "X", "SYM", "PROPN", "AUX", "X"],
                   ["PRON", "AUX", "ADV", "PUNCT", "NOUN", "NOUN", "NOUN", "VERB", "UNKNOWN"]]


def _use_word_column(model, case, ph, tmp, predict, column):
    """A lemmatizer's or morphologizer's uses: ``predict`` (its method's
    name) of words and UPOS, CoNLL-U files filled, evaluation, fine-tuning."""
    words, upos = _upos_sentences()
    fn = getattr(model, predict + "_sents")
    out = ph(predict, fn, words, upos)
    ph(f"{predict} values are fields", _check_strings, [v for s in out for v in s], predict,
       spaces=column == "lemma")
    ph(f"{predict}(no UPOS)", fn, words)
    ph(f"{predict}(one sentence)", getattr(model, predict), words[0], upos[0])
    ud = _ud_file(tmp)
    ph("evaluate", model.evaluate, ud)
    conllu = ud.read_text(encoding="utf-8")
    filled = ph("tag_file(conllu)", _tag_file, model, tmp, "in.conllu", conllu)
    ph("tag_file(conllu) is CoNLL-U", _check_valid_conllu, filled, "tag_file(conllu)")
    ph("tag_file(json) lines", _check_json_lines, ph("tag_file(json)", _tag_file, model, tmp, "in.conllu", conllu,
                                                      json=True), "tag_file(json)")
    _roundtrip(ph, model, case["loader"], lambda m: getattr(m, predict + "_sents")(words, upos))
    ph("inspect", _inspect, model)
    tuned = _fine_tune_or_refused(ph, model, ud, **({"allow_new_tags": True} if column == "feats" else {}))
    if tuned is not None:
        ph(f"{predict} after fine-tuning", getattr(tuned, predict + "_sents"), words, upos)
    return out


def _use_lemmatizer(model, case, ph, tmp):
    return _use_word_column(model, case, ph, tmp, "lemmatize", "lemma")


def _use_morphologizer(model, case, ph, tmp):
    return _use_word_column(model, case, ph, tmp, "analyze", "feats")


def _check_parses(out, sentences, labels):
    """A parser's (heads, deprels) of ``sentences``: per sentence a tree
    (heads 1-based, 0 the root) and labels among the model's, undecorated,
    that CoNLL-U can hold; where the model has the label "root", the root's
    label and no other word's."""
    from fasttag.text import trees
    heads, deprels = out
    if len(heads) != len(sentences) or len(deprels) != len(sentences):
        raise UseCheckFailed(f"parse: {len(heads)} trees for {len(sentences)} sentences")
    plain = {trees.plain_label(x) for x in labels}
    for s, hs, ls in zip(sentences, heads, deprels):
        if len(hs) != len(s) or len(ls) != len(s):
            raise UseCheckFailed(f"parse: {len(hs)} heads, {len(ls)} labels for {len(s)} words")
        if s:
            try:
                trees.check_tree(hs)
            except ValueError as exc:
                raise UseCheckFailed(f"parse: no tree: {exc}") from None
        if any(x not in plain or trees.LIFT in x for x in ls):
            raise UseCheckFailed(f"parse: labels {_short(ls, 80)} not among the model's {_short(labels, 80)}")
        if "root" in labels and any((h == 0) != (x == "root") for h, x in zip(hs, ls)):
            raise UseCheckFailed(f"parse: the root label elsewhere than on the root: {_short(list(zip(hs, ls)), 80)}")
        _check_strings(ls, "parse labels", spaces=False)


def _use_parser(model, case, ph, tmp):
    """A dependency parser's uses: parses of words with every column, some
    or none, each checked to be a tree; the round trip; fine-tuning
    (refused)."""
    words, upos = _upos_sentences()
    words, upos = words + [["x"], [], ["a"] * 300], upos + [["X"], [], ["NOUN"] * 300]
    columns = {"upos": upos, "xpos": upos, "feats": [["_" if i % 2 else "Number=Sing" for i in range(len(s))]
                                                     for s in words],
               "lemma": [[w.lower() for w in s] for s in words]}
    out = ph("parse", model.parse, words, {"upos": upos})
    ph("parse gives trees", _check_parses, out, words, model.labels)
    ph("parse(no columns) gives trees", _check_parses, ph("parse(no columns)", model.parse, words), words,
       model.labels)
    ph("parse(every column) gives trees", _check_parses, ph("parse(every column)", model.parse, words, columns),
       words, model.labels)
    ph("parse(no sentences)", model.parse, [])
    ph("summary", model.summary)
    _roundtrip(ph, model, case["loader"], lambda m: m.parse(words, columns))
    tuned = _fine_tune_or_refused(ph, model, _ud_file(tmp, trees=True))
    if tuned is not None:
        ph("parse after fine-tuning", tuned.parse, words)
    return out


def _use_pipeline(model, case, ph, tmp):
    has_tok = model.tokenizer is not None
    if has_tok:
        for i, t in enumerate(RAW_TEXTS):
            ph("to_conllu is CoNLL-U", _check_valid_conllu, ph("to_conllu", model.to_conllu, t),
               f"to_conllu(RAW_TEXTS[{i}])")
        docs = ph("annotate", lambda: [model(t) for t in RAW_TEXTS])
        ph("annotated lemmas", _check_strings, [w.lemma for d in docs for s in d.sentences for w in s.words
                                                if w.lemma is not None], "annotate")
    words, _ = _upos_sentences()
    out = ph("tag_words", model.tag_words, words)
    for column, values in out.items():
        ph("tag_words values", _check_strings, [v for s in values for v in s], f"tag_words {column}",
           spaces=column == "lemma")
    if "head" in out:
        ph("tag_words trees", _check_tree_columns, out, words, model)
    ud = _ud_file(tmp, trees=True)
    ph("evaluate(gold tokens)", model.evaluate, ud, gold_tokens=True)
    text, conllu = RAW_FILE, ud.read_text(encoding="utf-8")
    checks = {"conllu": _check_valid_conllu, "json": _check_json_lines, "tagged": _check_text_lines}
    runs = [("in.conllu", conllu, "conllu", to) for to in ("conllu", "json")]
    runs += [("in.txt", text, "text", to) for to in ("conllu", "json", "tagged")]
    if has_tok:
        ph("evaluate(raw text)", model.evaluate, ud)
        runs += [("in.txt", text, "raw", to) for to in ("conllu", "json", "tagged")]
    for name, data, fmt, to in runs:
        what = f"tag_file(format={fmt}, to={to})"
        ph(what + " output", checks[to], ph(what, _tag_file, model, tmp, name, data, format=fmt, to=to), what)
    _roundtrip(ph, model, case["loader"], lambda m: m.tag_words(words))
    _use_spacy(model, ph, tmp, "ud")
    # without trees, so that a parser is kept as it was and the other parts fine-tuned
    tuned = _fine_tune_or_refused(ph, model, _ud_file(tmp), allow_new_tags=True)
    if tuned is not None:
        ph("tag_words after fine-tuning", tuned.tag_words, words)
    return out


def _check_tree_columns(columns, sentences, pipeline):
    """A pipeline's HEAD and DEPREL columns: what :func:`_check_parses`
    asks of its parser's parses."""
    from fasttag.tasks.dep import DependencyParser
    parser = next(m for m in pipeline.parts.values() if isinstance(m, DependencyParser))
    try:
        heads = [[int(h) for h in hs] for hs in columns["head"]]
    except ValueError:
        raise UseCheckFailed(f"tag_words: HEAD {_short(columns['head'], 60)} is not numbers") from None
    _check_parses((heads, columns["deprel"]), sentences, parser.labels)


def _use_features(model, case, ph, tmp):
    sents = [f for f, _ in FEATURE_PAIRS] + [[{"w": "unseen", "x": "y"}], []]
    out = ph("tag_sents", model.tag_sents, sents)
    ph("tags are fields", _check_strings, [t for s in out for t in s], "tag_sents", spaces=False)
    ph("tag_sents(n_best=2)", _nbest, lambda: model.tag_sents(sents, n_best=2), model)
    probs = ph("marginals", model.marginals, sents)
    ph("marginals are probabilities", _check_marginals, probs, [len(s) for s in sents], len(model.model.tags))
    tags = model.tags
    gold = [(f, [tags[i % len(tags)] for i in range(len(f))]) for f, _ in FEATURE_PAIRS]
    ph("evaluate", model.evaluate, gold)
    _roundtrip(ph, model, case["loader"], lambda m: m.tag_sents(sents))
    ph("inspect", _inspect, model)
    tuned = _fine_tune_or_refused(ph, model, gold)
    if tuned is not None:
        ph("tag after fine-tuning", tuned.tag_sents, sents)
    return out


def _use_generic(model, case, ph, tmp):
    """A model of a kind this fuzzer has no inputs for: the round trip only."""
    _roundtrip(ph, model, case["loader"], lambda m: m.to_bytes())


def _uses():
    from fasttag.linear._base import LinearModel
    from fasttag import Segmenter
    from fasttag import SpanTagger
    from fasttag import Tagger
    from fasttag import Tokenizer
    from fasttag.tasks.featuredicts import FeatureTagger
    from fasttag.tasks.lemma import Lemmatizer
    from fasttag.tasks.morph import Morphologizer
    from fasttag.pipeline import Pipeline
    from fasttag.tasks.dep import DependencyParser
    return [(Tagger, _use_tagger), (Segmenter, _use_segmenter), (SpanTagger, _use_spans),
            (LinearModel, _use_linear), (Tokenizer, _use_tokenizer), (Lemmatizer, _use_lemmatizer),
            (Morphologizer, _use_morphologizer), (Pipeline, _use_pipeline), (FeatureTagger, _use_features),
            (DependencyParser, _use_parser)]


def _load(data, loader):
    if loader == "fasttag.loads":
        import fasttag
        return fasttag.loads(data)
    if loader.startswith("linear."):
        from fasttag import linear
        return getattr(linear, loader[len("linear."):]).from_bytes(data)
    # test-only hooks: they check that the harness sees what a bad case does
    if loader == "test:abort":
        os.abort()
    if loader == "test:segfault":
        import ctypes
        ctypes.string_at(0)
    if loader == "test:exit":
        os._exit(3)
    if loader == "test:sleep":
        time.sleep(3600)
    if loader == "test:spin":
        while True:
            pass
    if loader == "test:raise":
        raise KeyError("a test load error")
    raise ValueError(f"unknown loader {loader!r}")


def _where(tb):
    """The innermost frame of the traceback inside fasttag (else the
    innermost of all), as ``fasttag/x.py:123 in func``."""
    frames = traceback.extract_tb(tb)
    pick = None
    for f in frames:
        if "fasttag" in Path(f.filename).parts and "tests" not in Path(f.filename).parts:
            pick = f
    if pick is None and frames:
        pick = frames[-1]
    if pick is None:
        return ""
    return f"{_rel(pick.filename)}:{pick.lineno} in {pick.name}"


def _rel(filename):
    parts = Path(filename).parts
    if "fasttag" in parts:
        i = len(parts) - 1 - parts[::-1].index("fasttag")
        return "/".join(parts[i:])
    return Path(filename).name


def _message(exc):
    msg = str(exc).replace("\n", " ")
    return msg if len(msg) <= 300 else msg[:300] + "..."


def run_one(case, tmp):
    """Load and use one case in this process: a result dict with
    ``status``, and for failures ``type``, ``message``, ``phase``, ``where``."""
    from fasttag.errors import ModelFormatError
    data = Path(case["path"]).read_bytes() if "path" in case else case["data"]
    ph = Phases()
    try:
        model = _load(data, case["loader"])
    except ModelFormatError as exc:
        return {"status": "rejected", "message": _message(exc)}
    except BaseException as exc:      # noqa: BLE001 -- everything else is the finding
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"status": "load-error", "type": type(exc).__name__, "message": _message(exc), "phase": "load",
                "where": _where(exc.__traceback__)}
    try:
        use = next((fn for cls, fn in _uses() if isinstance(model, cls)), _use_generic)
        use(model, case, ph, tmp)
    except BaseException as exc:      # noqa: BLE001
        if isinstance(exc, KeyboardInterrupt):
            raise
        return {"status": "use-error", "type": type(exc).__name__, "message": _message(exc), "phase": ph.name,
                "where": _where(exc.__traceback__), "model": type(model).__name__}
    return {"status": "ok", "model": type(model).__name__}


def _limit_memory(mb):
    try:
        import resource
        limit = mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass


def worker_main(mem_mb, fork=True, timeout=None, warm=None):
    """Read case lines (JSON) on stdin; for each write ``BEGIN <index>``
    then a result line (JSON) on the original stdout.  Everything the
    library prints goes to stderr, where a marker line starts every case
    (the parent reads a crashed case's traceback from there).

    With ``fork`` (where the system has it) every case runs in a child
    forked from this process once fasttag is imported: a case that
    corrupts memory cannot take a later case down with it, a crash is
    the crash of exactly that case (this process reports it and goes on),
    and a case over ``timeout`` seconds is killed here (a hang).  Without
    it the cases run here, one after another, and a crash ends this
    process (the parent restarts it)."""
    import faulthandler
    import warnings
    faulthandler.enable(all_threads=True)
    if hasattr(signal, "SIGUSR1"):
        faulthandler.register(signal.SIGUSR1, all_threads=True)
    warnings.simplefilter("ignore")
    np.seterr(all="ignore")
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    if mem_mb and "asan" not in os.environ.get("LD_PRELOAD", ""):    # ASan maps terabytes of shadow
        _limit_memory(mem_mb)
    import fasttag                      # noqa: F401 -- imports before READY, not in a case's time
    import fasttag.linear               # noqa: F401
    _uses()
    _spacy_nlp()                        # imported once, before the cases fork
    try:
        import scipy.sparse             # noqa: F401
    except ImportError:
        pass
    fork = fork and hasattr(os, "fork")
    tmp = tempfile.mkdtemp(prefix="fasttag-fuzz-worker-")
    _warm_up(warm, tmp)
    if fork:
        import gc
        gc.collect()
        gc.freeze()                     # the children's collections skip what is here
    out.write("READY\n")
    try:
        for line in sys.stdin:
            if not line.strip():
                continue
            case = json.loads(line)
            sys.stderr.write(f"\n=== case {case['index']}\n")
            sys.stderr.flush()
            out.write(f"BEGIN {case['index']}\n")
            if not fork:
                result = run_one(case, tmp)
                result["index"] = case["index"]
                out.write(json.dumps(result, ensure_ascii=True) + "\n")
                continue
            limit = (timeout or DEFAULT_TIMEOUT) * case.get("scale", 1.0)
            result = _run_forked(case, tmp, out, limit)
            if result is not None:
                result["index"] = case["index"]
                out.write(json.dumps(result, ensure_ascii=True) + "\n")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _warm_up(warm, tmp):
    """Build once, before forking, what fasttag builds lazily on first use
    (the segmenter's character tables, caches filled by a first use), so
    that no forked case pays for it: ``warm`` is a JSON file listing
    unmutated seed cases to run here first."""
    try:
        from fasttag.features.chars import bmp_tables
        bmp_tables()
    except Exception:                   # noqa: BLE001 -- a case will show it
        pass
    if warm:
        for case in json.loads(Path(warm).read_text()):
            run_one(case, tmp)


#: A forked case is a hang when it has computed for its time limit (CPU
#: seconds, where /proc tells them), or waited for WALL_FACTOR times that:
#: a busy machine slows a case down but does not make it a hang.
WALL_FACTOR = 10


def _cpu_seconds(pid):
    """User + system CPU seconds of a process, or None where /proc does not say."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def _over_time(pid, limit, wall):
    cpu = _cpu_seconds(pid)
    return cpu is None or cpu > limit or wall > limit * WALL_FACTOR


def _run_forked(case, tmp, out, limit):
    """Run a case in a forked child.  The child writes its own result;
    returns None then, else the crash or hang result."""
    import gc
    pid = os.fork()
    if pid == 0:                                   # the child
        code = 0
        try:
            result = run_one(case, tmp)
            gc.collect()                           # frees inside the case: heap damage shows here
            result["index"] = case["index"]
            out.write(json.dumps(result, ensure_ascii=True) + "\n")
            out.flush()
        except BaseException:                      # noqa: BLE001
            traceback.print_exc()
            code = 70
        finally:
            sys.stderr.flush()
            os._exit(code)
    start = time.monotonic()
    deadline = start + limit
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        now = time.monotonic()
        if now > deadline and _over_time(pid, limit, now - start):
            try:
                os.kill(pid, signal.SIGUSR1)       # faulthandler: where is it stuck?
                time.sleep(1.0)
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
            os.waitpid(pid, 0)
            return {"status": "hang", "type": f"over {limit:g} s", "phase": "", "message": "", "where": "",
                    "stderr_from_worker": True}
        time.sleep(0.002 if now - start < 0.5 else 0.02)
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
        return None
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            what = signal.Signals(sig).name
        except ValueError:
            what = f"signal {sig}"
    else:
        what = f"exit status {os.WEXITSTATUS(status)}"
    return {"status": "crash", "type": what, "phase": "", "message": "", "where": "", "stderr_from_worker": True}


# =====================================================================
# the parent: workers in subprocesses, timeouts, crashes
# =====================================================================

def asan_runtime():
    """The AddressSanitizer runtime (a soname) that the compiled fasttag
    under test needs, or None.  A build made with ``-fsanitize=address``
    turns the silent out-of-bounds reads and writes of the compiled code
    into crashes with a report; the workers then preload the runtime."""
    import re
    import fasttag
    for so in sorted(Path(fasttag.__file__).resolve().parent.rglob("*.so")):
        m = re.search(rb"libasan\.so(\.\d+)*", so.read_bytes())
        if m:
            return m.group(0).decode()
    return None


def _worker_env():
    import fasttag
    root = str(Path(fasttag.__file__).resolve().parents[1])       # the fasttag under test
    env = dict(os.environ)
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    env["PYTHONFAULTHANDLER"] = "1"
    asan = asan_runtime()
    if asan:
        env["LD_PRELOAD"] = asan + (" " + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
        # a report aborts the process (a crash here); huge allocations fail
        # as MemoryError instead of ending the run
        env["ASAN_OPTIONS"] = ("detect_leaks=0:abort_on_error=1:allocator_may_return_null=1:"
                               "max_allocation_size_mb=4096:" + env.get("ASAN_OPTIONS", ""))
    return env


class Worker:
    """One worker subprocess; :meth:`run` sends it a case and waits for the
    result, recording a crash when it dies and a hang when it is late (and
    restarting it for the next case)."""

    def __init__(self, timeout=DEFAULT_TIMEOUT, mem_mb=4096, log_dir=None, fork=True, warm=None):
        self.timeout = timeout
        self.mem_mb = mem_mb
        self.fork = fork
        self.warm = warm                # a JSON file of cases the worker runs before forking
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix="fasttag-fuzz-log-"))
        self.proc = None
        self.buf = b""
        self.starts = 0

    def _start(self):
        self.starts += 1
        self.log_path = self.log_dir / f"worker-{os.getpid()}-{id(self)}-{self.starts}.log"
        self.log = open(self.log_path, "wb")
        cmd = [sys.executable, str(HERE), "--worker", "--mem-mb", str(self.mem_mb), "--timeout", str(self.timeout)]
        if not self.fork:
            cmd.append("--no-fork")
        if self.warm:
            cmd += ["--warm", str(self.warm)]
        self.proc = subprocess.Popen(cmd,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                     env=_worker_env(), start_new_session=True)
        self.buf = b""
        line = self._readline(120.0)
        if line != "READY":
            tail = self._log_tail(0)
            self.close()
            raise RuntimeError(f"the fuzz worker did not start: {line!r}\n{tail}")

    def _readline(self, timeout):
        import selectors
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self.buf:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None                    # timed out
                if not sel.select(left):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    return ""                      # end of file: the worker died
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode("utf-8", "replace")

    def _log_tail(self, index):
        try:
            text = self.log_path.read_bytes().decode("utf-8", "replace")
        except OSError:
            return ""
        marker = f"=== case {index}\n"
        if marker in text:
            text = text[text.rindex(marker) + len(marker):]
        if len(text) > 40000:           # keep the start (a sanitizer's report) and the end
            text = text[:30000] + "\n[...]\n" + text[-10000:]
        return text

    def run(self, case):
        if self.proc is None or self.proc.poll() is not None:
            self._start()
        job = {k: case[k] for k in ("index", "loader", "family", "seed") if k in case}
        job["path"] = case["path"]
        timeout = self.timeout * case.get("scale", 1.0)
        if self.fork:
            timeout = timeout * WALL_FACTOR + 15.0   # the worker kills a late case itself: this is for a stuck worker
        t0 = time.monotonic()
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            pass                                    # seen below as a death
        result = None
        while True:
            line = self._readline(max(0.0, t0 + timeout - time.monotonic()))
            if line is None:
                result = self._hang(case, timeout)
                break
            if line == "":
                result = self._crash(case)
                break
            if line.startswith("{"):
                result = json.loads(line)
                if result.get("index") != case["index"]:
                    # a late line of an earlier case (a child that finished while the worker
                    # was killing it as a hang): that case has its result already
                    continue
                if result.pop("stderr_from_worker", False):        # a forked case crashed or hung
                    _fault_fill(result, self._log_tail(case["index"]))
                break
        result["seconds"] = round(time.monotonic() - t0, 3)
        return result

    def _crash(self, case):
        code = self.proc.wait()
        self.log.close()
        if code < 0:
            try:
                what = signal.Signals(-code).name
            except ValueError:
                what = f"signal {-code}"
        else:
            what = f"exit status {code}"
        tail = self._log_tail(case["index"])
        self.proc = None
        return _fault_fill({"status": "crash", "type": what, "phase": ""}, tail)

    def _hang(self, case, timeout):
        tail = ""
        if hasattr(signal, "SIGUSR1"):
            try:
                self.proc.send_signal(signal.SIGUSR1)      # faulthandler: where is it stuck?
                time.sleep(1.0)
                tail = self._log_tail(case["index"])
            except OSError:
                pass
        self.close()
        return _fault_fill({"status": "hang", "type": f"over {timeout:g} s", "phase": ""}, tail)

    def close(self):
        if self.proc is not None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass
            self.proc.wait()
            self.proc = None
        if getattr(self, "log", None):
            self.log.close()


def _c_to_pyx(path, line):
    """The .pyx line a line of Cython's generated C comes from (the last
    ``/* "fasttag/x.pyx":N`` marker above it)."""
    import re
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()[:line]
    except OSError:
        return None
    for text in reversed(lines):
        m = re.search(r'/\* "([^"]+\.pyx)":(\d+)', text)
        if m:
            return f"{m.group(1)}:{m.group(2)}"
    return None


def _fault_where(text):
    """Where a crash happened: the innermost fasttag frame of an
    AddressSanitizer report (mapped back to the .pyx line), else of the
    faulthandler traceback."""
    import re
    for m in re.finditer(r"#\d+ 0x[0-9a-f]+ in (\S+) (\S+\.c):(\d+)", text):
        if "fasttag" in Path(m.group(2)).parts:
            pyx = _c_to_pyx(m.group(2), int(m.group(3)))
            return f"{pyx or _rel(m.group(2)) + ':' + m.group(3)} in {m.group(1)}"
    for m in re.finditer(r'File "([^"]+)", line (\d+) in (\S+)', text):
        if "fasttag" in Path(m.group(1)).parts and "tests" not in Path(m.group(1)).parts:
            return f"{_rel(m.group(1))}:{m.group(2)} in {m.group(3)}"
    m = re.search(r'File "([^"]+)", line (\d+) in (\S+)', text)
    return f"{_rel(m.group(1))}:{m.group(2)} in {m.group(3)}" if m else ""


def _fault_summary(text):
    lines = text.splitlines()
    for line in lines:                  # the sanitizer's and the debug build's reports say what
        if "ERROR: AddressSanitizer" in line or line.startswith("fasttag debug build:"):
            return line.strip()[:300]
    for line in lines:
        if line.startswith("Fatal Python error") or "Error" in line[:40]:
            return line.strip()[:300]
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def _fault_fill(result, tail):
    """Fill a crash or hang result from the worker's stderr."""
    import re
    stderr = tail if len(tail) <= 8000 else tail[:6000] + "\n[...]\n" + tail[-2000:]
    result.update(message=_fault_summary(tail), where=_fault_where(tail), stderr=stderr)
    m = re.search(r"ERROR: AddressSanitizer: ([\w-]+)", tail)
    if m and result["status"] == "crash":
        result["type"] = f"{result['type']} (ASan {m.group(1)})"
    return result


def run_cases(cases, jobs=1, timeout=DEFAULT_TIMEOUT, mem_mb=4096, on_result=None, fork=True, warm=None,
              workers=None):
    """Run ready cases (dicts with ``path``) in ``jobs`` worker subprocesses
    (or in the given ``workers``, one job each, left running for the next
    call); returns the results in the order of the cases."""
    results = [None] * len(cases)
    it = iter(range(len(cases)))
    lock = threading.Lock()
    free = list(workers or ())

    def next_index():
        with lock:
            return next(it, None)

    def job():
        with lock:
            w = free.pop() if free else None
        own = w is None
        if own:
            w = Worker(timeout=timeout, mem_mb=mem_mb, fork=fork, warm=warm)
        try:
            while True:
                i = next_index()
                if i is None:
                    return
                results[i] = w.run(cases[i])
                if on_result:
                    with lock:
                        on_result(cases[i], results[i])
        finally:
            if own:
                w.close()
    _run_threads(job, len(workers) if workers else jobs)
    return results


def _run_threads(fn, jobs):
    errors = []

    def wrapped():
        try:
            fn()
        except BaseException as exc:   # noqa: BLE001
            errors.append(exc)
    threads = [threading.Thread(target=wrapped, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def is_failure(result):
    return result["status"] in FAILURES


def failure_class(result):
    """What groups failures: status, exception type (or signal), the use
    step, and where in fasttag it was raised."""
    return (result["status"], result.get("type", ""), result.get("phase", ""), result.get("where", ""))


def describe(case, result):
    """A few lines on one failing case."""
    lines = [f"case {case['index']} (seed model {case['seed']}): {result['status']} {result.get('type', '')}"
             f"{' in ' + result['phase'] if result.get('phase') else ''}"
             f"{' at ' + result['where'] if result.get('where') else ''}",
             f"  message: {result.get('message', '')}"]
    lines += [f"  mutation: {m}" for m in case["description"]]
    if case.get("repro"):
        lines.append(f"  reproduce: {case['repro']}")
    return "\n".join(lines)


# =====================================================================
# the long mode
# =====================================================================

def long_run(args):
    if args.seed is None:           # a fresh seed each run, printed so that a failure can be replayed
        args.seed = str(random.SystemRandom().randrange(10 ** 9))
    print(f"[fuzz] seed {args.seed}: cases {args.start}..{args.start + args.cases - 1}, {args.jobs} jobs "
          f"(rerun this run with --seed {args.seed}; one case i with --replay {args.seed}:i)", flush=True)
    seeds = build_seeds(args.seed_cache, bundled=not args.no_bundled)
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
        failures_log = open(out / "failures.jsonl", "a", encoding="utf-8")
    work = Path(tempfile.mkdtemp(prefix="fasttag-fuzz-cases-"))
    warm = warm_file(seeds, work)
    t0 = time.monotonic()
    counts = Counter()
    by_seed = {}
    classes = {}
    n = args.cases
    next_i = iter(range(args.start, args.start + n))
    lock = threading.Lock()
    last_report = [time.monotonic()]

    def record(case, result):
        counts[result["status"]] += 1
        by_seed.setdefault(case["seed"], Counter())[result["status"]] += 1
        if is_failure(result):
            key = failure_class(result)
            entry = classes.setdefault(key, {"count": 0, "examples": []})
            entry["count"] += 1
            if out:
                name = f"case-{case['index']:06d}-{result['status']}.ftm"
                shutil.copyfile(case["path"], out / name)
                case["repro"] = (f"python tests/fuzz_models.py --run {out / name} --loader {case['loader']} "
                                 f"--family {case['family']}  (or: {case['repro']})")
                failures_log.write(json.dumps({"index": case["index"], "seed_model": case["seed"],
                                               "file": name, "loader": case["loader"], "family": case["family"],
                                               "mutations": case["description"],
                                               "result": result, "repro": case["repro"]},
                                              ensure_ascii=True) + "\n")
                failures_log.flush()
            if len(entry["examples"]) < 3:
                entry["examples"].append(describe(case, result))
        done = sum(counts.values())
        if not args.quiet and (time.monotonic() - last_report[0] > 15 or done == n):
            last_report[0] = time.monotonic()
            fails = sum(counts[s] for s in FAILURES)
            print(f"[fuzz] {done}/{n} cases, {fails} failures, {time.monotonic() - t0:.0f} s",
                  file=sys.stderr, flush=True)

    def job():
        w = Worker(timeout=args.timeout, mem_mb=args.mem_mb, log_dir=work, fork=not args.no_fork,
                   warm=warm)
        try:
            while True:
                with lock:
                    i = next(next_i, None)
                if i is None:
                    return
                case = make_case(seeds, f"{args.seed}:{i}", index=i, folder=work, bundled=not args.no_bundled)
                result = w.run(case)
                with lock:
                    record(case, result)
                os.unlink(case["path"])
        finally:
            w.close()
    try:
        _run_threads(job, args.jobs)
    finally:
        if out:
            failures_log.close()
        shutil.rmtree(work, ignore_errors=True)
    seconds = time.monotonic() - t0
    summary = {"cases": n, "seed": args.seed, "jobs": args.jobs, "seconds": round(seconds, 1),
               "counts": dict(counts),
               "classes": [{"status": k[0], "type": k[1], "phase": k[2], "where": k[3], "count": v["count"],
                            "examples": v["examples"]}
                           for k, v in sorted(classes.items(), key=lambda kv: -kv[1]["count"])],
               "by_seed": {k: dict(v) for k, v in sorted(by_seed.items())}}
    if out:
        (out / "summary.json").write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    print_summary(summary, examples=args.examples)
    fails = sum(counts[s] for s in FAILURES)
    print(f"\n[fuzz] seed {args.seed}: {n} cases, {fails} failures"
          f"{f' (replay one with --replay {args.seed}:INDEX)' if fails else ''}", flush=True)
    return 1 if fails or sum(counts.values()) != n else 0


def print_summary(s, examples=3):
    c = s["counts"]
    fails = {st: c.get(st, 0) for st in FAILURES}
    rows = [("seed", s["seed"]), ("cases", s["cases"]), ("rejected (ModelFormatError)", c.get("rejected", 0)),
            ("loaded and used ok", c.get("ok", 0)), ("crashes", fails["crash"]), ("hangs", fails["hang"]),
            ("load errors (not ModelFormatError)", fails["load-error"]), ("use errors", fails["use-error"]),
            ("seconds", s["seconds"]), ("cases per second", round(s["cases"] / max(s["seconds"], 1e-9), 1))]
    print()
    for k, v in rows:
        print(f"  {k:<38} {v:>8}")
    for status in FAILURES:
        by_type = Counter()
        for cl in s["classes"]:
            if cl["status"] == status:
                by_type[cl["type"]] += cl["count"]
        for t, k in by_type.most_common():
            print(f"    {status:<10} {t:<34} {k:>6}")
    print("\n  per seed model: ok / rejected / failures")
    for name, cnt in s["by_seed"].items():
        print(f"    {name:<32} {cnt.get('ok', 0):>5} {cnt.get('rejected', 0):>6} "
              f"{sum(cnt.get(st, 0) for st in FAILURES):>6}")
    if s["classes"]:
        print(f"\n  failure classes ({len(s['classes'])}), most frequent first:")
        for cl in s["classes"]:
            print(f"\n  [{cl['count']}x] {cl['status']} {cl['type']}"
                  f"{' in ' + cl['phase'] if cl['phase'] else ''}{' at ' + cl['where'] if cl['where'] else ''}")
            for ex in cl["examples"][:examples]:
                print("    " + ex.replace("\n", "\n    "))


def replay(args):
    """Regenerate one case and run it here.  The case file goes to
    ``--write``, else into ``--out``, else into a new temporary folder
    (never the current folder), and stays there for ``--run``."""
    seeds = build_seeds(args.seed_cache, bundled=not args.no_bundled)
    case = make_case(seeds, args.replay, bundled=not args.no_bundled)
    name = "case-" + "".join(c if c.isalnum() or c in "-_." else "-" for c in args.replay)[:100] + ".ftm"
    if args.write:
        path = Path(args.write)
    elif args.out:
        path = _mkdir(Path(args.out)) / name
    else:
        path = Path(tempfile.mkdtemp(prefix="fasttag-fuzz-replay-")) / name
    path.write_bytes(case["data"])
    print(f"seed model {case['seed']}, loader {case['loader']}, family {case['family']}; written to {path}")
    for m in case["description"]:
        print(f"  mutation: {m}")
    return _run_here(path, case["loader"], case["family"])


def _run_here(path, loader, family):
    """Load and use a case in this process (a crash kills it; a traceback is
    printed in full)."""
    import faulthandler
    faulthandler.enable()
    from fasttag.errors import ModelFormatError
    case = {"path": str(path), "loader": loader, "family": family, "index": 0, "seed": "?"}
    tmp = tempfile.mkdtemp(prefix="fasttag-fuzz-run-")
    ph = Phases()
    try:
        model = _load(Path(path).read_bytes(), loader)
        print(f"loaded: {type(model).__name__}")
        use = next((fn for cls, fn in _uses() if isinstance(model, cls)), _use_generic)
        use(model, case, ph, tmp)
        print("ok: loaded and used")
        return 0
    except ModelFormatError as exc:
        print(f"rejected: {exc}")
        return 0
    except Exception:
        print(f"FAILED in {ph.name}:")
        traceback.print_exc()
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main(argv=None):
    p = argparse.ArgumentParser(
        description="Fuzz fasttag model files (see the module documentation).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="The long run (a fresh random seed each time, printed first and last; exit status 1 when\n"
               "any case fails, its file and reproduction kept in DIR):\n"
               "    python tests/fuzz_models.py --cases 6000 --jobs 2 --out DIR\n"
               "The test suite's bounded run (tests/test_model_fuzz.py) always draws the same cases.")
    p.add_argument("--cases", type=int, default=1000, help="number of cases (default 1000)")
    p.add_argument("--seed", help="the run's seed: case i is the same for the same seed (default: a fresh "
                   "random one, printed)")
    p.add_argument("--start", type=int, default=0, help="index of the first case")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--out", help="folder for the failing cases, failures.jsonl and summary.json (with "
                   "--replay: for the case file)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case (bundled models: x4)")
    p.add_argument("--mem-mb", type=int, default=4096, help="address-space limit of a worker, MiB (0: none)")
    p.add_argument("--no-bundled", action="store_true", help="mutate the small seed models only")
    p.add_argument("--seed-cache", help="folder to cache the seed models in")
    p.add_argument("--examples", type=int, default=2, help="examples printed per failure class")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--replay", metavar="KEY", help="regenerate one case (case i of seed S: S:i) and run it "
                   "in this process")
    p.add_argument("--write", help="with --replay: where to write the case file (default: a new temporary "
                   "folder)")
    p.add_argument("--run", metavar="FILE", help="load and use one model file in this process")
    p.add_argument("--loader", default="fasttag.loads", help="with --run: fasttag.loads or linear.CLASS")
    p.add_argument("--family", default="pos", help="with --run: pos, seg, ner, chunk, linear, tok, lemma, morph, "
                   "ud, dep or features")
    p.add_argument("--no-fork", action="store_true",
                   help="run the cases in the worker itself, not each in a forked child")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--warm", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    asan = asan_runtime()
    if asan and asan not in os.environ.get("LD_PRELOAD", ""):
        # an AddressSanitizer build of fasttag: it loads only with the
        # runtime preloaded (the seed models are trained in this process)
        env = _worker_env()
        os.execve(sys.executable, [sys.executable, str(HERE)] + list(argv if argv is not None else sys.argv[1:]),
                  env)
    if args.worker:
        worker_main(args.mem_mb, fork=not args.no_fork, timeout=args.timeout, warm=args.warm)
        return 0
    if args.run:
        return _run_here(args.run, args.loader, args.family)
    if args.replay:
        return replay(args)
    return long_run(args)


if __name__ == "__main__":
    sys.exit(main())
