"""The anchor side of fasttag's benchmarks: competing systems, run the way
their users run them, measured uniformly.

Each public function here is module-level (so ``harness.run_isolated`` can
run it in a fresh process), takes already-loaded plain Python data, trains,
then tags the test input end to end from tokens (feature extraction
included), and returns a dict built by ``harness.make_result``:

    system, train_cpu_s, train_wall_s, [load_cpu_s, load_wall_s,]
    tag_cpu_s, tag_wall_s, n_<unit>, tag_<unit>_per_s, tag_<unit>_per_cpu_s,
    model_bytes, <task metrics>, plus the settings used.

Task metrics:

* POS (``nltk_pos``, ``crfsuite_pos``): ``accuracy``, ``known_accuracy``,
  ``unknown_accuracy``, ``unknown_rate`` (known = word form seen in training).
* Spans (``crfsuite_spans``, ``nltk_spans``): ``precision``, ``recall``,
  ``f1`` (conlleval semantics, IOB2), ``accuracy`` (token), ``per_type`` F1.
* Segmentation (``pkuseg_cws``, ``crfsuite_cws``, ``jieba_cws``): ``pred``
  (segmented lines), and if ``gold`` is given ``precision``, ``recall``,
  ``f1``, ``oov_rate``, ``oov_recall``, ``iv_recall``. The tag unit is
  characters (``tag_chars_per_s``).
* Linear (``sklearn_linear``, ``sklearn_hashed_tokens``): ``accuracy``
  (classifiers) or ``r2``/``rmse`` (regressors); the unit is rows.

fasttag's own functions should follow the same shape (reuse
``harness.make_result`` and the scorers) so that rows line up in one table.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import random
import tempfile
import unicodedata
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

try:  # imported as benchmarks.anchors
    from . import harness as H
except ImportError:  # run from the benchmarks/ folder
    import harness as H


class _ByteCounter:
    """A write-only file object that only counts bytes (sizes of pickled or
    JSON models without building them in memory, which would inflate the
    measured peak RSS)."""

    def __init__(self):
        self.n = 0

    def write(self, data):
        if isinstance(data, str):
            n = len(data.encode("utf-8"))
        else:  # bytes, or a pickle.PickleBuffer (protocol 5, in band)
            with memoryview(data) as m:
                n = m.nbytes
        self.n += n
        return n


def _pickled_size(obj) -> int:
    out = _ByteCounter()
    pickle.dump(obj, out, protocol=5)
    return out.n


def _dir_size(path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


# ==========================================================================
# POS tagging
# ==========================================================================

def nltk_pos(train, test, epochs: int = 5, seed: int = 0, tag_repeat: int = 1) -> dict:
    """NLTK's averaged perceptron tagger (greedy, left to right).

    ``train``/``test``: ``[(words, tags)]``. ``PerceptronTagger(load=False)``
    then ``.train([[(word, tag), ...], ...], nr_iter=epochs)`` (which
    shuffles with the ``random`` module: seeded with ``seed``); tagging with
    ``.tag(words)``. ``model_bytes`` is the size of the JSON that
    ``save_to_json`` writes (NLTK >= 3.9 saves JSON, not pickle): weights,
    tag dictionary and classes, serialised the same way, counted without
    writing the file.
    """
    from nltk.tag.perceptron import PerceptronTagger

    random.seed(seed)
    train_sents = [list(zip(words, tags)) for words, tags in train]
    with H.timer() as t_train:
        tagger = PerceptronTagger(load=False)
        tagger.train(train_sents, nr_iter=epochs)
    del train_sents
    with H.timer() as t_tag:
        for _ in range(tag_repeat):   # repeated passes: a steadier rate
            pred = [[t for _, t in tagger.tag(words)] for words, _ in test]
    out = _ByteCounter()
    for param in tagger.encode_json_obj():
        json.dump(param, out)
    n = sum(len(w) for w, _ in test) * tag_repeat
    return H.make_result(
        "nltk PerceptronTagger", train=t_train, tag=t_tag, n_items=n,
        model_bytes=out.n, epochs=epochs,
        **H.tagging_metrics(test, pred, H.vocabulary(train)),
    )


def pos_features(words: Sequence[str]) -> list[dict]:
    """The usual python-crfsuite tutorial feature set for POS (22 features
    per token, dict form as in the sklearn-crfsuite tutorial; booleans are
    features with weight 0/1, strings become ``name:value`` features)."""
    n = len(words)
    feats = []
    for i, w in enumerate(words):
        f = {
            "bias": 1.0,
            "word.lower()": w.lower(),
            "word[-3:]": w[-3:],
            "word[-2:]": w[-2:],
            "word[-1:]": w[-1:],
            "word[:2]": w[:2],
            "word[:3]": w[:3],
            "word.isupper()": w.isupper(),
            "word.istitle()": w.istitle(),
            "word.isdigit()": w.isdigit(),
            "word.hasdigit": any(c.isdigit() for c in w),
            "word.hashyphen": "-" in w,
        }
        if i > 0:
            p = words[i - 1]
            f["-1:word.lower()"] = p.lower()
            f["-1:word.istitle()"] = p.istitle()
            f["-1:word.isupper()"] = p.isupper()
            f["-1:word[-3:]"] = p[-3:]
            if i > 1:
                f["-2:word.lower()"] = words[i - 2].lower()
        else:
            f["BOS"] = True
        if i < n - 1:
            q = words[i + 1]
            f["+1:word.lower()"] = q.lower()
            f["+1:word.istitle()"] = q.istitle()
            f["+1:word.isupper()"] = q.isupper()
            f["+1:word[-3:]"] = q[-3:]
            if i < n - 2:
                f["+2:word.lower()"] = words[i + 2].lower()
        else:
            f["EOS"] = True
        feats.append(f)
    return feats


# CRFsuite defaults differ by algorithm; these are the ones we use.
CRFSUITE_DEFAULT_EPOCHS = {"ap": 10, "pa": 10, "arow": 10, "lbfgs": 100, "l2sgd": 100}


def _crfsuite_params(algorithm: str, epochs: int | None, params: dict | None) -> dict:
    """``max_iterations`` = epochs (CRFsuite's own defaults: ap 100, lbfgs
    unbounded until convergence). Everything else stays at CRFsuite's
    defaults (ap: epsilon 0, i.e. no early stop; lbfgs: c1=0, c2=1.0,
    epsilon 1e-5) unless overridden by ``params``."""
    if epochs is None:
        epochs = CRFSUITE_DEFAULT_EPOCHS.get(algorithm, 100)
    out = {"max_iterations": int(epochs)}
    out.update(params or {})
    return out


def _crfsuite_fit_tag(train_xy, test_x, featurize: Callable, algorithm: str,
                      epochs: int | None, params: dict | None, tag_repeat: int = 1):
    """Train python-crfsuite on ``(x, labels)`` pairs and tag ``test_x``,
    both through ``featurize``; the model goes through a temp file as users
    do (Trainer.train(path), Tagger.open(path))."""
    import pycrfsuite

    params = _crfsuite_params(algorithm, epochs, params)
    with tempfile.TemporaryDirectory(prefix="bench_crfsuite_") as tmp:
        path = os.path.join(tmp, "model.crfsuite")
        with H.timer() as t_train:
            trainer = pycrfsuite.Trainer(algorithm=algorithm, params=params, verbose=False)
            for x, y in train_xy:
                trainer.append(featurize(x), y)
            trainer.train(path)
        del trainer
        size = os.path.getsize(path)
        with H.timer() as t_load:
            tagger = pycrfsuite.Tagger()
            tagger.open(path)
        with H.timer() as t_tag:
            for _ in range(tag_repeat):   # repeated passes: a steadier rate
                pred = [tagger.tag(featurize(x)) for x in test_x]
        tagger.close()
    return pred, t_train, t_load, t_tag, size, params


def crfsuite_pos(train, test, algorithm: str = "ap", epochs: int | None = None,
                 params: dict | None = None, tag_repeat: int = 1) -> dict:
    """python-crfsuite linear-chain CRF with ``pos_features``.

    ``algorithm='ap'`` (averaged perceptron, default 10 epochs) or 'lbfgs'
    (default 100 iterations, CRFsuite defaults c1=0, c2=1) etc.; ``epochs``
    sets ``max_iterations``. Feature extraction is inside both the train and
    the tag timings.
    """
    pred, t_train, t_load, t_tag, size, used = _crfsuite_fit_tag(
        [(w, t) for w, t in train], [w for w, _ in test], pos_features,
        algorithm, epochs, params, tag_repeat,
    )
    n = sum(len(w) for w, _ in test) * tag_repeat
    return H.make_result(
        f"python-crfsuite ({algorithm})", train=t_train, load=t_load, tag=t_tag,
        n_items=n, model_bytes=size, epochs=used["max_iterations"], crfsuite_params=used,
        **H.tagging_metrics(test, pred, H.vocabulary(train)),
    )


# ==========================================================================
# Chunking / NER
# ==========================================================================

def word_shape(w: str) -> str:
    """'McDonald2' -> 'XxXxxxxxd'."""
    out = []
    for c in w:
        if c.isupper():
            out.append("X")
        elif c.islower():
            out.append("x")
        elif c.isdigit():
            out.append("d")
        else:
            out.append(c)
    return "".join(out)


def short_shape(w: str) -> str:
    """'McDonald2' -> 'XxXxd' (runs collapsed)."""
    s = word_shape(w)
    return "".join(c for i, c in enumerate(s) if i == 0 or c != s[i - 1])


_EXTRA_NAMES = ("pos", "chunk", "col3", "col4", "col5")


def span_features(rows: Sequence[Sequence[str]]) -> list[dict]:
    """A standard CRF feature set for chunking/NER over token rows
    ``[word, extra1, extra2, ...]`` (the label column already removed;
    extras are POS and, for CoNLL-2003, the chunk tag).

    Per token: bias, lowercased word, prefixes 2/3, suffixes 2/3, shape and
    short shape, isupper/istitle/isdigit, each extra column (and POS[:2]);
    for the window -2..+2: lowercased word, istitle, isupper, each extra
    column (and POS[:2]); POS bigrams (-1,0) and (0,+1); BOS/EOS.
    Mid-sentence: 35 features per token with (word, POS) rows (CoNLL-2000),
    40 with (word, POS, chunk) rows (CoNLL-2003); fewer at the edges.
    """
    n = len(rows)
    words = [r[0] for r in rows]
    feats = []
    for i, row in enumerate(rows):
        w = row[0]
        f: dict[str, Any] = {
            "bias": 1.0,
            "word.lower()": w.lower(),
            "word[:2]": w[:2],
            "word[:3]": w[:3],
            "word[-2:]": w[-2:],
            "word[-3:]": w[-3:],
            "word.shape": word_shape(w),
            "word.shortshape": short_shape(w),
            "word.isupper()": w.isupper(),
            "word.istitle()": w.istitle(),
            "word.isdigit()": w.isdigit(),
        }
        for k, val in enumerate(row[1:]):
            name = _EXTRA_NAMES[k]
            f[name] = val
            if k == 0:
                f["pos[:2]"] = val[:2]
        for off in (-2, -1, 1, 2):
            j = i + off
            if j < 0 or j >= n:
                continue
            o = f"{off:+d}:"
            v = words[j]
            f[o + "word.lower()"] = v.lower()
            f[o + "word.istitle()"] = v.istitle()
            f[o + "word.isupper()"] = v.isupper()
            for k, val in enumerate(rows[j][1:]):
                f[o + _EXTRA_NAMES[k]] = val
                if k == 0:
                    f[o + "pos[:2]"] = val[:2]
        if len(row) > 1:
            if i > 0:
                f["-1:pos|pos"] = rows[i - 1][1] + "|" + row[1]
            if i < n - 1:
                f["pos|+1:pos"] = row[1] + "|" + rows[i + 1][1]
        if i == 0:
            f["BOS"] = True
        if i == n - 1:
            f["EOS"] = True
        feats.append(f)
    return feats


def _split_rows(sents, to_iob2: bool):
    if to_iob2:
        sents = H.rows_iob1_to_iob2(sents)
    xs = [[list(r[:-1]) for r in s] for s in sents]
    ys = [[r[-1] for r in s] for s in sents]
    return xs, ys


def crfsuite_spans(train_rows, test_rows, algorithm: str = "ap", epochs: int | None = None,
                   params: dict | None = None, to_iob2: bool = True) -> dict:
    """python-crfsuite for chunking/NER with ``span_features``.

    ``train_rows``/``test_rows``: sentences of token rows, all columns
    (word, POS, [chunk], label=last), as ``harness.load_columns_all`` gives.
    With ``to_iob2`` the label column is converted IOB1 -> IOB2 first (needed
    for CoNLL-2003; a no-op on CoNLL-2000's IOB2), so training and scoring
    are in IOB2.
    """
    train_x, train_y = _split_rows(train_rows, to_iob2)
    test_x, test_y = _split_rows(test_rows, to_iob2)
    pred, t_train, t_load, t_tag, size, used = _crfsuite_fit_tag(
        list(zip(train_x, train_y)), test_x, span_features, algorithm, epochs, params,
    )
    n = sum(len(s) for s in test_x)
    return H.make_result(
        f"python-crfsuite ({algorithm})", train=t_train, load=t_load, tag=t_tag,
        n_items=n, model_bytes=size, epochs=used["max_iterations"], crfsuite_params=used,
        **H.conll_f1(test_y, pred),
    )


def nltk_spans(train_rows, test_rows, epochs: int = 5, seed: int = 0, to_iob2: bool = True) -> dict:
    """NLTK's PerceptronTagger used as a greedy chunk/NER tagger, trained on
    ``(word, label)`` pairs as its users do (it has no way to take the POS
    column). Labels IOB1 -> IOB2 first with ``to_iob2``."""
    from nltk.tag.perceptron import PerceptronTagger

    train_x, train_y = _split_rows(train_rows, to_iob2)
    test_x, test_y = _split_rows(test_rows, to_iob2)
    random.seed(seed)
    train_sents = [list(zip([r[0] for r in x], y)) for x, y in zip(train_x, train_y)]
    test_words = [[r[0] for r in x] for x in test_x]
    with H.timer() as t_train:
        tagger = PerceptronTagger(load=False)
        tagger.train(train_sents, nr_iter=epochs)
    del train_sents
    with H.timer() as t_tag:
        pred = [[t for _, t in tagger.tag(words)] for words in test_words]
    out = _ByteCounter()
    for param in tagger.encode_json_obj():
        json.dump(param, out)
    n = sum(len(s) for s in test_words)
    return H.make_result(
        "nltk PerceptronTagger", train=t_train, tag=t_tag, n_items=n,
        model_bytes=out.n, epochs=epochs, **H.conll_f1(test_y, pred),
    )


# ==========================================================================
# Chinese word segmentation
# ==========================================================================

# ASCII 0x21-0x7E -> full width U+FF01-U+FF5E (People's Daily 1998 training
# text uses full-width digits/letters/punctuation, SIGHAN's PKU test text
# half-width ones).
_FULLWIDTH = {c: c + 0xFEE0 for c in range(0x21, 0x7F)}


def to_fullwidth(text: str) -> str:
    return text.translate(_FULLWIDTH)


def _restore(original: str, words: Sequence[str]) -> list[str]:
    """Map segmenter output back onto the original characters (the input
    was transformed character by character; whitespace is not part of any
    word)."""
    chars = [c for c in original if not c.isspace()]
    out, k = [], 0
    for w in words:
        m = len("".join(w.split()))
        if m == 0:
            continue
        out.append("".join(chars[k:k + m]))
        k += m
    if k != len(chars):
        raise ValueError(f"segmenter output covers {k} of {len(chars)} characters: {original[:40]!r}")
    return out


def _as_words(line) -> list[str]:
    return line.split() if isinstance(line, str) else [w for w in line if w and not w.isspace()]


def _seg_result(system, pred, test_lines, t_train, t_load, t_tag, size, gold,
                training_words, return_pred, **extra) -> dict:
    n_chars = sum(sum(not c.isspace() for c in line) for line in test_lines)
    metrics = {}
    if gold is not None:
        metrics = H.score_seg(gold, pred, training_words)
    res = H.make_result(system, train=t_train, load=t_load, tag=t_tag, n_items=n_chars,
                        unit="chars", model_bytes=size, **extra, **metrics)
    if return_pred:
        res["pred"] = pred
    return res


def pkuseg_cws(train_path, test_lines: Sequence[str], epochs: int = 2, *,
               fullwidth_input: bool = True, user_dict: Any = "default",
               dev_path=None, savedir=None, gold=None, training_words=None,
               return_pred: bool = True, verbose: bool = False, seed: int | None = 0) -> dict:
    """spacy-pkuseg trained from scratch, then used as its README shows.

    Training: ``spacy_pkuseg.train(trainFile, testFile, savedir,
    train_iter=epochs)`` (signature ``train(trainFile, testFile, savedir,
    train_iter=20, init_model=None)``). It is a CRF with 5 labels
    (B, B_single, I_first, I, I_end) trained by ADF in one process
    (``train`` forces nThread=1). ``testFile`` is mandatory and is decoded
    and scored after every iteration: we pass ``dev_path`` if given, else a
    one-line file (the first training line) so that this evaluation does
    not inflate the training time. ``train_path`` is a segmented file (words
    separated by spaces) or a list of segmented lines (strings or word
    lists), then written to a temp file (not timed).

    Tagging: ``spacy_pkuseg.pkuseg(model_name=savedir, user_dict=user_dict)``
    and ``.cut(line)`` per line. ``user_dict="default"`` is the library's
    default: its post-processor then merges adjacent output words found in
    the bundled dictionary ``dicts/default.pkl``; ``user_dict=None`` runs the
    trained model alone. With ``fullwidth_input`` the input is mapped
    ASCII -> full width first and the output mapped back.

    ``model_bytes``: the files in savedir (features.msgpack + weights.npz).
    Its ADF trainer shuffles with the ``random`` module, unseeded: we seed
    it with ``seed`` (None leaves it unseeded) so runs are reproducible.
    """
    import spacy_pkuseg

    if seed is not None:
        random.seed(seed)

    with tempfile.TemporaryDirectory(prefix="bench_pkuseg_") as tmp:
        if isinstance(train_path, (str, os.PathLike)):
            train_file = str(train_path)
        else:
            train_file = os.path.join(tmp, "train.txt")
            with open(train_file, "w", encoding="utf-8") as f:
                for line in train_path:
                    f.write(" ".join(_as_words(line)) + "\n")
        if dev_path is None:
            dev_file = os.path.join(tmp, "dev.txt")
            with open(train_file, encoding="utf-8") as f:
                first = next((ln for ln in f if ln.strip()), "")
            with open(dev_file, "w", encoding="utf-8") as f:
                f.write(first)
        else:
            dev_file = str(dev_path)
        model_dir = str(savedir) if savedir is not None else os.path.join(tmp, "model")

        with H.quiet(stdout=not verbose):
            with H.timer() as t_train:
                spacy_pkuseg.train(train_file, dev_file, model_dir, train_iter=epochs)
        size = _dir_size(model_dir)
        with H.timer() as t_load:
            seg = spacy_pkuseg.pkuseg(model_name=model_dir, user_dict=user_dict)
        with H.timer() as t_tag:
            pred = []
            for line in test_lines:
                if fullwidth_input:
                    pred.append(_restore(line, seg.cut(to_fullwidth(line))))
                else:
                    pred.append(seg.cut(line))
    return _seg_result(
        "spacy-pkuseg", pred, test_lines, t_train, t_load, t_tag, size, gold,
        training_words, return_pred, epochs=epochs, fullwidth_input=fullwidth_input,
        user_dict=user_dict if user_dict is None or isinstance(user_dict, str) else "custom",
    )


_ZH_NUMERALS = set("〇○零一二三四五六七八九十百千万亿两")


def char_type(c: str) -> str:
    """D digit (any width), N Chinese numeral, L Latin letter (any width),
    P punctuation/symbol, C other CJK/letters, O other."""
    if c.isdigit():
        return "D"
    if c in _ZH_NUMERALS:
        return "N"
    cat = unicodedata.category(c)
    if cat[0] == "L":
        o = ord(c)
        if o < 0x250 or 0xFF21 <= o <= 0xFF5A:
            return "L"
        return "C"
    if cat[0] in "PS":
        return "P"
    return "O"


def cws_features(chars: Sequence[str]) -> list[list[str]]:
    """Standard character features for BMES segmentation: unigrams at
    -2..+2, bigrams starting at -2..+1 (c-2c-1, c-1c0, c0c1, c1c2), the
    character type of -1, 0, +1 and their type trigram (14 per char)."""
    n = len(chars)
    c = ["<S2>", "<S1>"] + list(chars) + ["</S1>", "</S2>"]
    ty = ["B", "B"] + [char_type(x) for x in chars] + ["E", "E"]
    feats = []
    for i in range(n):
        j = i + 2
        feats.append([
            "bias",
            "U-2=" + c[j - 2], "U-1=" + c[j - 1], "U0=" + c[j], "U+1=" + c[j + 1], "U+2=" + c[j + 2],
            "B-2=" + c[j - 2] + c[j - 1], "B-1=" + c[j - 1] + c[j],
            "B0=" + c[j] + c[j + 1], "B+1=" + c[j + 1] + c[j + 2],
            "T-1=" + ty[j - 1], "T0=" + ty[j], "T+1=" + ty[j + 1],
            "T3=" + ty[j - 1] + ty[j] + ty[j + 1],
        ])
    return feats


def bmes(words: Sequence[str]) -> list[str]:
    tags = []
    for w in words:
        if len(w) == 1:
            tags.append("S")
        else:
            tags.extend(["B"] + ["M"] * (len(w) - 2) + ["E"])
    return tags


def from_bmes(chars: Sequence[str], tags: Sequence[str]) -> list[str]:
    """Words from BMES tags; a word starts at B/S or after E/S, so invalid
    sequences still give a full segmentation."""
    words: list[str] = []
    prev = "S"
    for ch, t in zip(chars, tags):
        if not words or t in ("B", "S") or prev in ("E", "S"):
            words.append(ch)
        else:
            words[-1] += ch
        prev = t
    return words


def crfsuite_cws(train_lines, test_lines: Sequence[str], epochs: int | None = None, *,
                 algorithm: str = "ap", params: dict | None = None,
                 fullwidth_input: bool = True, gold=None, training_words=None,
                 return_pred: bool = True) -> dict:
    """Character BMES tagger on python-crfsuite with ``cws_features``
    (default 'ap', 10 epochs). ``train_lines``: segmented lines (strings or
    word lists). Each whitespace-separated fragment of a test line is
    tagged as one sequence; with ``fullwidth_input`` the test input is
    mapped ASCII -> full width first (the training text is used as is)."""
    # Work outside _crfsuite_fit_tag (BMES labels from the training words;
    # mapping and splitting the test input, decoding the tags, mapping back)
    # is timed separately and added to the train and tag timers.
    with H.timer() as t_prep_train:
        train_xy = []
        for line in train_lines:
            words = _as_words(line)
            if words:
                train_xy.append(("".join(words), bmes(words)))
    with H.timer() as t_pre:
        fragments, owner = [], []
        for k, line in enumerate(test_lines):
            src = to_fullwidth(line) if fullwidth_input else line
            for frag in src.split():
                fragments.append(frag)
                owner.append(k)

    def featurize(text):
        return cws_features(list(text))

    pred_tags, t_train, t_load, t_tag, size, used = _crfsuite_fit_tag(
        train_xy, fragments, featurize, algorithm, epochs, params,
    )
    t_train.wall += t_prep_train.wall
    t_train.cpu += t_prep_train.cpu
    t_tag.wall += t_pre.wall
    t_tag.cpu += t_pre.cpu
    with H.timer() as t_post:
        pred: list[list[str]] = [[] for _ in test_lines]
        for frag, tags, k in zip(fragments, pred_tags, owner):
            pred[k].extend(from_bmes(frag, tags))
        if fullwidth_input:
            pred = [_restore(line, words) for line, words in zip(test_lines, pred)]
    t_tag.wall += t_post.wall
    t_tag.cpu += t_post.cpu
    return _seg_result(
        f"python-crfsuite ({algorithm})", pred, test_lines, t_train, t_load, t_tag, size,
        gold, training_words, return_pred, epochs=used["max_iterations"],
        crfsuite_params=used, fullwidth_input=fullwidth_input,
    )


def jieba_cws(test_lines: Sequence[str], *, hmm: bool = True, fullwidth_input: bool = False,
              gold=None, training_words=None, return_pred: bool = True) -> dict:
    """jieba with its default dictionary, ``jieba.lcut(line, HMM=True)``
    (no training: ``train_*`` is absent, ``load_*`` is ``jieba.initialize()``,
    which reads the cached prefix dictionary, or builds the cache on first
    use). Whitespace tokens in the output are dropped."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    with H.timer() as t_load:
        jieba.initialize()
    with H.timer() as t_tag:
        pred = []
        for line in test_lines:
            if fullwidth_input:
                pred.append(_restore(line, jieba.lcut(to_fullwidth(line), HMM=hmm)))
            else:
                pred.append([w for w in jieba.lcut(line, HMM=hmm) if w.strip()])
    return _seg_result(
        "jieba (default dict" + (", HMM)" if hmm else ")"), pred, test_lines, None, t_load,
        t_tag, None, gold, training_words, return_pred, fullwidth_input=fullwidth_input,
    )


# ==========================================================================
# Linear models (scikit-learn)
# ==========================================================================

_SKLEARN_NAMES = ("Perceptron", "SGDClassifier", "PassiveAggressiveClassifier", "SGDRegressor")


def make_sklearn_estimator(name: str, **params):
    """A scikit-learn linear estimator by class name. Returns
    ``(estimator, note)``. ``PassiveAggressiveClassifier`` is deprecated
    since scikit-learn 1.8 (removed in 1.10): the class is used while it
    exists (its FutureWarning silenced), else the documented replacement
    ``SGDClassifier(loss='hinge', penalty=None, learning_rate='pa1',
    eta0=C)``."""
    import sklearn.linear_model as lm

    note = ""
    if name == "PassiveAggressiveClassifier":
        if hasattr(lm, name):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)
                est = lm.PassiveAggressiveClassifier(**{"random_state": 0, **params})
            return est, "deprecated in sklearn 1.8"
        p = dict(params)
        c = p.pop("C", 1.0)
        p.setdefault("loss", "hinge")
        p.setdefault("penalty", None)
        p.setdefault("learning_rate", "pa1")
        p.setdefault("eta0", c)
        p.setdefault("random_state", 0)
        return lm.SGDClassifier(**p), "SGDClassifier(learning_rate='pa1') replacement"
    if not hasattr(lm, name):
        raise ValueError(f"unknown scikit-learn linear model {name!r}")
    est = getattr(lm, name)(**params)
    if "random_state" in est.get_params() and "random_state" not in params:
        # SGD-type models shuffle every epoch; unseeded runs differ by a
        # point or more on small data. Seed unless the caller chose.
        est.set_params(random_state=0)
    return est, note


def _describe(name: str, params: dict) -> str:
    inner = ", ".join(f"{k}={v!r}" for k, v in params.items())
    return f"sklearn {name}({inner})"


def _fit_predict_sklearn(est, fit_X, X_train, y_train, X_test, name, params, note, n_test,
                         y_test):
    """Shared by sklearn_linear / sklearn_hashed_tokens: ``fit_X(X)`` turns
    the input into a matrix (identity or hashing) and is timed with fit and
    with predict."""
    import numpy as np

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        with H.timer() as t_train:
            est.fit(fit_X(X_train), y_train)
        with H.timer() as t_tag:
            pred = est.predict(fit_X(X_test))
    from sklearn.base import is_regressor

    is_reg = is_regressor(est)
    y = np.asarray(y_test)
    if is_reg:
        err = np.asarray(pred, dtype=float) - y.astype(float)
        ss_res = float(np.sum(err ** 2))
        ss_tot = float(np.sum((y - y.mean()) ** 2))
        metrics = {"r2": 1 - ss_res / ss_tot if ss_tot else None,
                   "rmse": float(np.sqrt(ss_res / len(y)))}
    else:
        metrics = {"accuracy": float(np.mean(np.asarray(pred) == y))}
    n_iter = getattr(est, "n_iter_", None)
    if n_iter is not None and not isinstance(n_iter, (int, float)):
        n_iter = int(np.max(n_iter))
    return H.make_result(
        _describe(name, params), train=t_train, tag=t_tag, n_items=n_test, unit="rows",
        model_bytes=_pickled_size(est), n_iter=n_iter, note=note, **metrics,
    )


def sklearn_linear(name: str, X_train, y_train, X_test, y_test, **params) -> dict:
    """``name`` in Perceptron, SGDClassifier, PassiveAggressiveClassifier,
    SGDRegressor (any ``sklearn.linear_model`` class works); ``params`` go
    to the constructor (e.g. ``loss='log_loss'``, ``average=True``,
    ``max_iter=5, tol=None`` for a fixed number of epochs; scikit-learn's
    defaults are max_iter=1000, tol=1e-3; ``random_state`` defaults to 0
    here for reproducibility). ``X_*`` dense or scipy sparse.
    ``model_bytes``: size of the pickled fitted estimator (protocol 5)."""
    est, note = make_sklearn_estimator(name, **params)
    return _fit_predict_sklearn(est, lambda X: X, X_train, y_train, X_test, name, params,
                                note, X_test.shape[0], y_test)


def sklearn_hashed_tokens(train_feats, train_y, test_feats, test_y, estimator,
                          n_features: int = 2 ** 20) -> dict:
    """Token classification from feature strings, the scikit-learn way:
    ``FeatureHasher(n_features=2**20, input_type="string")`` (default
    alternate_sign) then a linear estimator. ``train_feats``/``test_feats``:
    one list of feature strings per row (e.g. ``harness``-independent
    ``token_feature_strings``). ``estimator``: a class name, ``(name,
    params)``, or an unfitted estimator instance. Hashing is inside both the
    fit and the predict timings."""
    from sklearn.feature_extraction import FeatureHasher

    if isinstance(estimator, str):
        name, params = estimator, {}
        est, note = make_sklearn_estimator(name)
    elif isinstance(estimator, tuple):
        name, params = estimator
        est, note = make_sklearn_estimator(name, **params)
    else:
        est, note = estimator, ""
        name = type(est).__name__
        params = {k: v for k, v in est.get_params().items()
                  if k in ("loss", "average", "alpha", "max_iter", "tol")}
    hasher = FeatureHasher(n_features=n_features, input_type="string")
    res = _fit_predict_sklearn(est, hasher.transform, train_feats, train_y, test_feats,
                               name, params, note, len(test_feats), test_y)
    res["system"] += " + FeatureHasher(2**%d)" % (n_features.bit_length() - 1)
    return res


def token_feature_strings(words: Sequence[str]) -> list[list[str]]:
    """Simple per-token feature strings (word, affixes, shape, neighbours)
    for the hashed token-classification benchmark."""
    n = len(words)
    out = []
    for i, w in enumerate(words):
        lw = w.lower()
        out.append([
            "b", "w=" + lw, "p3=" + lw[:3], "s3=" + lw[-3:], "s2=" + lw[-2:],
            "sh=" + short_shape(w),
            "w-1=" + (words[i - 1].lower() if i > 0 else "<s>"),
            "w+1=" + (words[i + 1].lower() if i < n - 1 else "</s>"),
            "w-2=" + (words[i - 2].lower() if i > 1 else "<s>"),
            "w+2=" + (words[i + 2].lower() if i < n - 2 else "</s>"),
        ])
    return out
