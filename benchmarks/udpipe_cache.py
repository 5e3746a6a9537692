"""UDPipe 1 models for the UD benchmarks, trained once and cached.

Training UDPipe 1 takes minutes per small treebank and most of an hour on
EWT, so a trained model is kept in a cache folder (``--cache``; by default
under the user's cache directory, never in the repository) together with a
JSON record of how it was trained (options, training CPU seconds) and of the
scores it got; later benchmark runs reuse both.  The cache key covers the
UDPipe version, the training options and the training file's content, so a
changed file or option trains a new model rather than reusing a stale one.

    nice -n 15 python benchmarks/udpipe_cache.py --cache DIR [--treebanks pt,fi,tr,ja,en] [--parser]

trains the missing models one at a time (the benchmark itself trains any
that are still missing when it needs them).

Two models per treebank: the tokenizer + tagger model (``model_path``:
tokenizer, tagger and lemmatizer, no parser) and, with ``--parser``, a
parser model (``parser_model_path``: tokenizer and tagger ``none``, the
parser with UDPipe 1's default options), each with its own cache key and
record.  UDPipe 1's full pipeline with a parser is the first model's
tokenizer and tagger, then the parser model on their output.  The parser
model learns from the training file's gold tags (UDPipe trains its parser
on gold tags when the same model has no tagger).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

try:  # imported as benchmarks.udpipe_cache
    from . import harness as H
except ImportError:  # run from the benchmarks/ folder
    import harness as H

#: UDPipe 1's default training options, but 10 tokenizer epochs (its default
#: is 100; the issues measured UDPipe 1 this way) and no parser.
TOKENIZER_OPTIONS = "epochs=10"
TAGGER_OPTIONS = ""
PARSER_OPTIONS = "none"
METHOD = "morphodita_parsito"

#: The parser model's tokenizer, tagger and parser options: no tokenizer,
#: no tagger, the parser with UDPipe 1's defaults (an empty option string).
PARSER_MODEL_OPTIONS = ("none", "none", "")


@dataclass(frozen=True)
class Treebank:
    """One UD treebank of the benchmark: ``key`` (a short name), ``lang``
    (the language code spaCy knows), the training and test files."""

    key: str
    name: str
    lang: str
    train: Path
    test: Path


def treebanks() -> dict[str, Treebank]:
    """The benchmark's treebanks, trained on the file the data README names
    (dev where a treebank has no train file here)."""
    ud = H.DATA_ROOT / "ud"
    ewt = H.DATA_ROOT / "en_ewt"
    return {t.key: t for t in (
        Treebank("pt", "UD_Portuguese-Bosque", "pt",
                 ud / "UD_Portuguese-Bosque" / "pt_bosque-ud-dev.conllu",
                 ud / "UD_Portuguese-Bosque" / "pt_bosque-ud-test.conllu"),
        Treebank("fi", "UD_Finnish-TDT", "fi",
                 ud / "UD_Finnish-TDT" / "fi_tdt-ud-dev.conllu",
                 ud / "UD_Finnish-TDT" / "fi_tdt-ud-test.conllu"),
        Treebank("tr", "UD_Turkish-IMST", "tr",
                 ud / "UD_Turkish-IMST" / "tr_imst-ud-train.conllu",
                 ud / "UD_Turkish-IMST" / "tr_imst-ud-test.conllu"),
        Treebank("ja", "UD_Japanese-GSD", "ja",
                 ud / "UD_Japanese-GSD" / "ja_gsd-ud-dev.conllu",
                 ud / "UD_Japanese-GSD" / "ja_gsd-ud-test.conllu"),
        Treebank("en", "UD_English-EWT", "en",
                 ewt / "en_ewt-ud-train.conllu",
                 ewt / "en_ewt-ud-test.conllu"),
    )}


def default_cache() -> Path:
    """The user's cache directory (XDG), never the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "fasttag-benchmarks" / "udpipe"


def udpipe_version() -> str:
    from ufal.udpipe import Version
    v = Version.current()
    return f"{v.major}.{v.minor}.{v.patch}"


def cache_stem(tb: Treebank) -> str:
    """``<key>-<digest>``: the digest covers everything that shapes the model."""
    h = hashlib.sha256()
    for part in (udpipe_version(), METHOD, TOKENIZER_OPTIONS, TAGGER_OPTIONS, PARSER_OPTIONS):
        h.update(part.encode() + b"\0")
    h.update(tb.train.read_bytes())
    return f"{tb.key}-{h.hexdigest()[:16]}"


def parser_stem(tb: Treebank) -> str:
    """``<key>-parser-<digest>``: the parser model's key (UDPipe version,
    method, its options, the training file's content)."""
    h = hashlib.sha256()
    for part in (udpipe_version(), METHOD, *PARSER_MODEL_OPTIONS):
        h.update(part.encode() + b"\0")
    h.update(tb.train.read_bytes())
    return f"{tb.key}-parser-{h.hexdigest()[:16]}"


def _stem(tb: Treebank, parser: bool) -> str:
    return parser_stem(tb) if parser else cache_stem(tb)


def model_path(tb: Treebank, cache: Path, parser: bool = False) -> Path:
    """The tokenizer + tagger model (with ``parser``: the parser model)."""
    return Path(cache) / f"{_stem(tb, parser)}.udpipe"


def parser_model_path(tb: Treebank, cache: Path) -> Path:
    return model_path(tb, cache, parser=True)


def record_path(tb: Treebank, cache: Path, parser: bool = False) -> Path:
    return Path(cache) / f"{_stem(tb, parser)}.json"


def read_record(tb: Treebank, cache: Path, parser: bool = False) -> dict:
    p = record_path(tb, cache, parser)
    return json.loads(p.read_text()) if p.exists() else {}


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def update_record(tb: Treebank, cache: Path, parser: bool = False, **fields) -> dict:
    """Merge ``fields`` into the treebank's JSON record (with ``parser``:
    its parser model's), written atomically."""
    rec = read_record(tb, cache, parser)
    rec.update(fields)
    _write_atomic(record_path(tb, cache, parser), json.dumps(rec, indent=1, sort_keys=True).encode())
    return rec


def read_conllu_sentences(text: str):
    """UDPipe ``Sentences`` of a CoNLL-U text (its own reader)."""
    from ufal.udpipe import InputFormat, ProcessingError, Sentence, Sentences
    reader = InputFormat.newConlluInputFormat()
    reader.setText(text)
    err = ProcessingError()
    out, s = Sentences(), Sentence()
    while reader.nextSentence(s, err):
        out.push_back(s)
        s = Sentence()
    if err.occurred():
        raise ValueError(f"UDPipe cannot read the CoNLL-U text: {err.message}")
    return out


def train(tb: Treebank, cache: Path, verbose: bool = True) -> Path:
    """The cached UDPipe 1 model of ``tb``, trained now if missing (training
    CPU seconds go into the record)."""
    from ufal.udpipe import ProcessingError, Sentences, Trainer
    path = model_path(tb, cache)
    if path.exists():
        return path
    Path(cache).mkdir(parents=True, exist_ok=True)
    if verbose:
        print(f"training UDPipe 1 on {tb.train.name} -> {path}", flush=True)
    sents = read_conllu_sentences(tb.train.read_text(encoding="utf-8"))
    err = ProcessingError()
    t0, w0 = time.process_time(), time.perf_counter()
    model = Trainer.train(METHOD, sents, Sentences(), TOKENIZER_OPTIONS, TAGGER_OPTIONS,
                          PARSER_OPTIONS, err)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    if err.occurred() or not model:
        raise RuntimeError(f"UDPipe 1 training on {tb.train} failed: {err.message}")
    _write_atomic(path, bytes(model))
    update_record(tb, cache, treebank=tb.name, train_file=tb.train.name,
                  udpipe_version=udpipe_version(), method=METHOD,
                  tokenizer_options=TOKENIZER_OPTIONS, tagger_options=TAGGER_OPTIONS,
                  parser_options=PARSER_OPTIONS, train_cpu_s=cpu, train_wall_s=wall,
                  model_bytes=path.stat().st_size)
    if verbose:
        print(f"trained {tb.key}: {cpu:.0f} CPU s, {wall:.0f} s", flush=True)
    return path


def train_parser(tb: Treebank, cache: Path, verbose: bool = True) -> Path:
    """The cached UDPipe 1 parser model of ``tb`` (no tokenizer, no tagger;
    the parser with its default options), trained now if missing (training
    CPU seconds and the model's size go into its record)."""
    from ufal.udpipe import ProcessingError, Sentences, Trainer
    path = parser_model_path(tb, cache)
    if path.exists():
        return path
    Path(cache).mkdir(parents=True, exist_ok=True)
    if verbose:
        print(f"training UDPipe 1's parser on {tb.train.name} -> {path}", flush=True)
    sents = read_conllu_sentences(tb.train.read_text(encoding="utf-8"))
    err = ProcessingError()
    t0, w0 = time.process_time(), time.perf_counter()
    model = Trainer.train(METHOD, sents, Sentences(), *PARSER_MODEL_OPTIONS, err)
    cpu, wall = time.process_time() - t0, time.perf_counter() - w0
    if err.occurred() or not model:
        raise RuntimeError(f"UDPipe 1 parser training on {tb.train} failed: {err.message}")
    _write_atomic(path, bytes(model))
    tok, tagger, parser = PARSER_MODEL_OPTIONS
    update_record(tb, cache, parser=True, treebank=tb.name, train_file=tb.train.name,
                  udpipe_version=udpipe_version(), method=METHOD, tokenizer_options=tok,
                  tagger_options=tagger, parser_options=parser, train_cpu_s=cpu, train_wall_s=wall,
                  model_bytes=path.stat().st_size)
    if verbose:
        print(f"trained {tb.key}'s parser: {cpu:.0f} CPU s, {wall:.0f} s", flush=True)
    return path


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=default_cache(), help="folder of trained models")
    ap.add_argument("--treebanks", default="pt,fi,tr,ja,en",
                    help="comma-separated keys, trained in this order")
    ap.add_argument("--parser", action="store_true",
                    help="also each treebank's parser model (after its tokenizer + tagger model)")
    ap.add_argument("--parser-only", action="store_true",
                    help="only the parser models (not the tokenizer + tagger models)")
    args = ap.parse_args(argv)
    known = treebanks()
    keys = [k for k in args.treebanks.split(",") if k]
    bad = [k for k in keys if k not in known]
    if bad:
        ap.error(f"--treebanks: unknown {', '.join(bad)} (known: {', '.join(known)})")
    for k in keys:
        if not known[k].train.exists():
            print(f"skipping {k}: {known[k].train} not found", file=sys.stderr)
            continue
        if not args.parser_only:
            train(known[k], args.cache)
        if args.parser or args.parser_only:
            train_parser(known[k], args.cache)
    return 0


if __name__ == "__main__":
    sys.exit(main())
