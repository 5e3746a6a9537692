"""UD treebanks from raw text, side by side: fasttag, UDPipe 1, spaCy's rules.

    python benchmarks/bench_ud.py [--treebanks pt,fi,tr,ja,en] [--cache DIR]
                                  [--no-train-udpipe] [--reuse-udpipe] [--skip-tagging]
                                  [--skip-parser-alone]

For each treebank (../shared/data: EWT and the four in ud/, trained on the
file the data README names, scored on the test file):

* from raw text (the test file's text as fasttag's CoNLL-U reader rebuilds
  it from the tokens, which is its ``# text`` lines; ``# newpar`` as a blank
  line between paragraphs): UDPipe 1 (tokenizer + tagger, lemmas and
  features, then its parser; its CoNLL-U output), fasttag's UD pipeline
  (``fasttag train ud``'s components, the parser included), fasttag's
  ``Tokenizer`` trained on the training file with its defaults, and
  spaCy's rule tokenizer for the language (``spacy.blank(lang)`` +
  ``sentencizer``, each paragraph a doc).  Tokens, Sentences and Words F1
  are the CoNLL 2018 shared-task scores as
  ``fasttag.text.metrics.score_tokenization`` computes them, the tag
  columns (UPOS, XPOS, UFeats, AllTags, Lemmas) and the dependency scores
  (UAS, LAS, MLAS, BLEX) ``fasttag.evaluate_conllu`` on the system's
  CoNLL-U (UDPipe 1's output and fasttag's pipeline's alike; the
  Tokenizer + Tagger row: its words with UPOS);
* the parsers alone, on the gold tokens with their gold UPOS, XPOS, FEATS
  and lemmas (the test file's words, HEAD and DEPREL left to the parser):
  the fasttag pipeline's parser component
  (``fasttag.load(path).components["dep"].model.parse``) and UDPipe 1's
  parser model (``Model.parse`` on each gold sentence); UAS, LAS, MLAS and
  BLEX by ``fasttag.evaluate_conllu``, words per CPU second of the parse
  alone;
* UPOS from the gold tokens: fasttag's ``Tagger`` (defaults), CRFsuite
  L-BFGS with the anchor features (``anchors.crfsuite_pos``) and UDPipe 1's
  tagger (with its XPOS, UFeats, AllTags and Lemmas, scored by
  ``fasttag.evaluate_conllu``: on the gold words F1 is accuracy).

Speed is words per CPU second on the same test text (the gold word count,
so every system divides by the same number), peak memory the isolated
process's (``harness.run_isolated``).  UDPipe 1 models and their scores are
cached in ``--cache`` (``udpipe_cache.py``): per treebank a tokenizer +
tagger model and a parser model (default parser options), UDPipe 1's model
size being the two together.  Training one takes minutes (EWT: most of an
hour), so ``--no-train-udpipe`` leaves out treebanks whose tokenizer +
tagger model is not cached yet and runs UDPipe 1 without its parser where
the parser model is not, and ``--reuse-udpipe`` takes UDPipe 1's raw-text
row from the scores and speed recorded by an earlier run.
"""
from __future__ import annotations

import argparse
import io
import re
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import anchors  # noqa: E402
import harness as H  # noqa: E402
import udpipe_cache as U  # noqa: E402

#: The CoNLL 2018 metrics in table order: (result key, the score's name,
#: which is also the column header).
METRICS = (("token_f1", "Tokens"), ("sentence_f1", "Sentences"), ("word_f1", "Words"),
           ("upos_f1", "UPOS"), ("xpos_f1", "XPOS"), ("ufeats_f1", "UFeats"),
           ("alltags_f1", "AllTags"), ("lemmas_f1", "Lemmas"))
#: The CoNLL 2018 dependency metrics, scored where the system gives heads.
DEP_METRICS = (("uas_f1", "UAS"), ("las_f1", "LAS"), ("mlas_f1", "MLAS"), ("blex_f1", "BLEX"))


# --------------------------------------------------------------------------
# The raw text and its gold tokens
# --------------------------------------------------------------------------

def raw_text(path):
    """``(text, gold sentences)`` of a CoNLL-U file: the text fasttag's
    reader rebuilds (``# text`` of each sentence), paragraphs separated by a
    blank line (the paragraph break UDPipe 1's tokenizer knows), and the
    gold sentences as lists of ``SurfaceToken`` with offsets into that text."""
    from fasttag.text.goldtext import SurfaceToken, read_conllu_text

    gold = read_conllu_text(path)
    if gold.mismatches:
        print(f"  note: {len(gold.mismatches)} '# text' lines of {path} disagree with their tokens",
              file=sys.stderr)
    par_of_sent = []
    starts = list(gold.paragraph_starts) + [gold.n_sentences]
    for p in range(len(starts) - 1):
        par_of_sent.extend([p] * (starts[p + 1] - starts[p]))
    # the reader separates paragraphs by one "\n": a second one shifts what follows by one
    pieces, at = [], 0
    for p in range(1, len(starts) - 1):
        first = gold.sentences[starts[p]][0].start
        pieces.append(gold.text[at:first])
        pieces.append("\n")
        at = first
    pieces.append(gold.text[at:])
    text = "".join(pieces)
    sents = [[SurfaceToken(t.start + p, t.end + p, t.form, t.words) for t in s]
             for s, p in zip(gold.sentences, par_of_sent)]
    assert all(text[t.start:t.end] == t.form for s in sents for t in s)
    return text, sents


def paragraphs(text):
    """``(offset, paragraph)`` of the blank-line separated paragraphs."""
    out, at = [], 0
    for m in re.finditer(r"\n\s*\n", text):
        out.append((at, text[at:m.start()]))
        at = m.end()
    out.append((at, text[at:]))
    return [(a, p) for a, p in out if p.strip()]


def n_words(sents):
    return sum(len(t.words) for s in sents for t in s)


# --------------------------------------------------------------------------
# Scores
# --------------------------------------------------------------------------

def full_scores(gold_path, system_conllu):
    """UPOS, XPOS, UFeats, AllTags and Lemmas F1 of a system's CoNLL-U output
    from raw text against the gold file, and UAS, LAS, MLAS and BLEX F1
    where the system gives heads: fasttag's CoNLL 2018 evaluation
    (``fasttag.evaluate_conllu``, words aligned as the shared-task script
    aligns them).  Tokens, Sentences and Words come from
    ``tokenization_scores`` (the same definitions)."""
    import fasttag
    scores = fasttag.evaluate_conllu(str(gold_path), io.StringIO(system_conllu))
    return {key: scores[name]["f1"] for key, name in METRICS[3:] + DEP_METRICS if name in scores}


def dependency_scores(gold_path, system_conllu):
    """UAS, LAS, MLAS and BLEX F1 of a system's CoNLL-U (fasttag's CoNLL 2018
    evaluation); an error if it gives none (a system without heads, or an
    evaluation that does not score them)."""
    import fasttag
    scores = fasttag.evaluate_conllu(str(gold_path), io.StringIO(system_conllu))
    missing = [name for _, name in DEP_METRICS if name not in scores]
    if missing:
        raise RuntimeError(f"fasttag.evaluate_conllu gave no {', '.join(missing)}")
    return {key: scores[name]["f1"] for key, name in DEP_METRICS}


def tokenization_scores(gold_sents, sys_sents):
    """Tokens, Sentences and Words F1 (fasttag's CoNLL 2018 implementation)."""
    from fasttag.text.metrics import score_tokenization
    return score_tokenization(gold_sents, sys_sents)


# --------------------------------------------------------------------------
# Systems from raw text (each run isolated: module-level, returns a dict)
# --------------------------------------------------------------------------

def _conllu_tokens(conllu, text):
    """Sentences of ``SurfaceToken`` from UDPipe 1's CoNLL-U with ``TokenRange``."""
    from fasttag.text.goldtext import SurfaceToken

    sents, cur, mwt = [], [], None
    for line in conllu.splitlines() + [""]:
        if not line:
            if cur:
                sents.append(cur)
            cur, mwt = [], None
            continue
        if line.startswith("#"):
            continue
        f = line.split("\t")
        if "." in f[0]:
            continue
        if "-" in f[0]:
            a, b = (int(x) for x in f[0].split("-"))
            mwt = [b, f, []]
            continue
        if mwt is not None:
            mwt[2].append(f[1])
            if int(f[0]) == mwt[0]:
                cur.append(_token(SurfaceToken, mwt[1], tuple(mwt[2]), text))
                mwt = None
            continue
        cur.append(_token(SurfaceToken, f, (f[1],), text))
    return sents


def _token(SurfaceToken, fields, words, text):
    m = re.search(r"(?:^|\|)TokenRange=(\d+):(\d+)", fields[9])
    if m is None:
        raise ValueError(f"UDPipe 1 output without TokenRange: {fields}")
    a, b = int(m.group(1)), int(m.group(2))
    return SurfaceToken(a, b, text[a:b], words)


def _udpipe_output(tb, cache, parser):
    """Where UDPipe 1's CoNLL-U of the test text is kept: beside the parser
    model when it ran with one, else beside the tokenizer + tagger model."""
    return Path(cache) / f"{U.parser_stem(tb) if parser else U.cache_stem(tb)}.test.conllu"


def udpipe_raw(tb_key, cache, text, gold_sents, parser=True):
    """UDPipe 1 (cached models of the treebank): raw text -> CoNLL-U with
    tokens, UPOS, XPOS, features and lemmas by the tokenizer + tagger model,
    then (``parser``) HEAD and DEPREL by the parser model, sentence by
    sentence as UDPipe's ``Pipeline`` runs one model's tokenizer, tagger
    and parser."""
    from ufal.udpipe import Model, OutputFormat, ProcessingError, Sentence

    tb = U.treebanks()[tb_key]
    path = U.model_path(tb, cache)
    ppath = U.parser_model_path(tb, cache) if parser else None
    with H.timer() as t_load:
        model = Model.load(str(path))
        pmodel = Model.load(str(ppath)) if parser else None
    if model is None or (parser and pmodel is None):
        raise RuntimeError(f"UDPipe 1 cannot load {path if model is None else ppath}")
    # ranges: each token's TokenRange in MISC, to score it on the same text
    tokenizer = model.newTokenizer(Model.TOKENIZER_RANGES)
    writer = OutputFormat.newConlluOutputFormat()
    err = ProcessingError()
    pieces = []
    with H.timer() as t_tag:
        tokenizer.setText(text)
        sent = Sentence()
        while tokenizer.nextSentence(sent, err):
            if not model.tag(sent, Model.DEFAULT, err):
                break
            if parser and not pmodel.parse(sent, Model.DEFAULT, err):
                break
            pieces.append(writer.writeSentence(sent))
        pieces.append(writer.finishDocument())
    if err.occurred():
        raise RuntimeError(f"UDPipe 1 failed on the test text: {err.message}")
    out = "".join(pieces)
    sys_sents = _conllu_tokens(out, text)
    _udpipe_output(tb, cache, parser).write_text(out, encoding="utf-8")
    rec = U.read_record(tb, cache)
    size, train_cpu = path.stat().st_size, rec.get("train_cpu_s")
    more = {}
    if parser:
        prec = U.read_record(tb, cache, parser=True)
        more = {"parser_model_bytes": ppath.stat().st_size, "parser_train_cpu_s": prec.get("train_cpu_s"),
                "tagger_model": U.cache_stem(tb)}
        size += more["parser_model_bytes"]
        if train_cpu is not None and more["parser_train_cpu_s"] is not None:
            train_cpu += more["parser_train_cpu_s"]
    return H.make_result("UDPipe 1", load=t_load, tag=t_tag, n_items=n_words(gold_sents), unit="words",
                         model_bytes=size, train_cpu_s=train_cpu, **more,
                         **tokenization_scores(gold_sents, sys_sents), **full_scores(tb.test, out))


def fasttag_raw(train_path, text, gold_sents, test_path=None, tag=False):
    """fasttag's Tokenizer trained on the training file with its defaults;
    with ``tag``, its Tagger too (defaults), tagging the tokenizer's words
    with UPOS (tokens + UPOS from raw text)."""
    from fasttag import Tagger, Tokenizer

    with H.timer() as t_train:
        tok = Tokenizer.train(str(train_path))
        tagger = Tagger.train(str(train_path)) if tag else None
    with H.timer() as t_tag:
        sys_sents = tok.sentence_tokens(text)
        if tag:
            upos = tagger.tag_sents([[w for t in s for w in t.words] for s in sys_sents])
    size = len(tok.to_bytes()) + (len(tagger.to_bytes()) if tag else 0)
    # UPOS only: the other columns are "_", which scores as if predicted
    more = {"upos_f1": full_scores(test_path, to_conllu(sys_sents, upos))["upos_f1"]} if tag else {}
    return H.make_result("fasttag Tokenizer + Tagger" if tag else "fasttag Tokenizer", train=t_train,
                         tag=t_tag, n_items=n_words(gold_sents), unit="words", model_bytes=size,
                         **tokenization_scores(gold_sents, sys_sents), **more)


def fasttag_pipeline(train_path, text, gold_sents, test_path, save_to=None):
    """fasttag's UD pipeline (``fasttag train ud``: tokenizer, UPOS, XPOS
    where the treebank has it, FEATS, lemmas, the dependency parser)
    trained on the training file with its defaults, raw text to CoNLL-U;
    saved to ``save_to`` where given (for ``fasttag_parser_alone``)."""
    import fasttag
    from fasttag import Pipeline

    with H.timer() as t_train:
        pipe = Pipeline.train(str(train_path))
    with H.timer() as t_tag:
        out = pipe.to_conllu(text)
    if save_to is not None:
        pipe.save(str(save_to))
    scores = fasttag.evaluate_conllu(str(test_path), io.StringIO(out))
    dep = pipe.components.get("dep")
    more = {} if dep is None else {"parser_model_bytes": len(dep.model.to_bytes())}
    return H.make_result("fasttag pipeline", train=t_train, tag=t_tag, n_items=n_words(gold_sents), unit="words",
                         model_bytes=len(pipe.to_bytes()), components=", ".join(pipe.components), **more,
                         **{key: scores[name]["f1"] for key, name in METRICS + DEP_METRICS if name in scores})


def to_conllu(sents, upos):
    """CoNLL-U of sentences of ``SurfaceToken`` with the UPOS of their words (the
    other columns ``_``), for ``full_scores``."""
    lines = []
    for s, tags in zip(sents, upos):
        tags = iter(tags)
        wid = 1
        for t in s:
            if len(t.words) > 1:
                lines.append(f"{wid}-{wid + len(t.words) - 1}\t{t.form}" + "\t_" * 8)
            for w in t.words:
                lines.append(f"{wid}\t{w}\t_\t{next(tags)}" + "\t_" * 6)
                wid += 1
        lines.append("")
    return "\n".join(lines) + "\n"


def spacy_raw(lang, text, gold_sents):
    """spaCy's rule tokenizer for ``lang`` with its sentencizer (no model
    download); each paragraph one doc (``nlp.pipe``)."""
    import spacy
    from fasttag.text.goldtext import SurfaceToken

    nlp = spacy.blank(lang)
    nlp.add_pipe("sentencizer")
    pars = paragraphs(text)
    with H.timer() as t_tag:
        docs = list(nlp.pipe(p for _, p in pars))
    sys_sents = []
    for (at, _), doc in zip(pars, docs):
        for sent in doc.sents:
            toks = [SurfaceToken(at + t.idx, at + t.idx + len(t.text), t.text, (t.text,))
                    for t in sent if not t.is_space]
            if toks:
                sys_sents.append(toks)
    return H.make_result(f"spaCy {spacy.__version__} rules", tag=t_tag, n_items=n_words(gold_sents),
                         unit="words", **tokenization_scores(gold_sents, sys_sents))


# --------------------------------------------------------------------------
# The parsers alone: gold tokens, gold tags
# --------------------------------------------------------------------------

def gold_words(path):
    """The word lines of a CoNLL-U file's sentences, each a list of its ten
    fields (multiword ranges and empty nodes left out)."""
    sents, cur = [], []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if cur:
                    sents.append(cur)
                cur = []
            elif not line.startswith("#"):
                fields = line.split("\t")
                if fields[0].isdigit():
                    cur.append(fields)
    if cur:
        sents.append(cur)
    return sents


def with_trees(path, heads, deprels):
    """The CoNLL-U file ``path`` with the HEAD and DEPREL of its words
    replaced by ``heads`` and ``deprels`` (per sentence, per word; DEPS
    ``_``): the gold tokens and tags with a parser's trees."""
    out, k, j = [], 0, 0
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if j:
                    if j != len(heads[k]):
                        raise ValueError(f"sentence {k + 1}: {j} words but {len(heads[k])} heads")
                    k, j = k + 1, 0
            elif not line.startswith("#"):
                fields = line.split("\t")
                if fields[0].isdigit():
                    fields[6], fields[7], fields[8] = str(heads[k][j]), deprels[k][j], "_"
                    line = "\t".join(fields)
                    j += 1
            out.append(line)
    if j:
        k += 1
    if k != len(heads):
        raise ValueError(f"{k} sentences but {len(heads)} parsed")
    return "\n".join(out) + "\n"


def fasttag_parser_alone(model_path, test_path):
    """The fasttag pipeline's parser component (``fasttag.load(path)
    .components["dep"].model``) parsing the gold words of the test file
    with their gold UPOS, XPOS, FEATS and lemmas."""
    import fasttag

    with H.timer() as t_load:
        parser = fasttag.load(str(model_path)).components["dep"].model
    sents = gold_words(test_path)
    words = [[w[1] for w in s] for s in sents]
    columns = {name: [[w[i] for w in s] for s in sents] for name, i in
               (("upos", 3), ("xpos", 4), ("feats", 5), ("lemma", 2))}
    with H.timer() as t_parse:
        heads, deprels = parser.parse(words, columns)
    out = with_trees(test_path, heads, deprels)
    return H.make_result("fasttag parser", load=t_load, tag=t_parse, n_items=sum(map(len, words)),
                         unit="words", model_bytes=len(parser.to_bytes()),
                         **dependency_scores(test_path, out))


def udpipe_parser_alone(tb_key, cache):
    """UDPipe 1's parser model (``Model.parse``) on the gold sentences of the
    test file (their words, UPOS, XPOS, FEATS and lemmas; HEAD and DEPREL
    cleared first)."""
    from ufal.udpipe import Model, OutputFormat, ProcessingError

    tb = U.treebanks()[tb_key]
    path = U.parser_model_path(tb, cache)
    with H.timer() as t_load:
        model = Model.load(str(path))
    if model is None:
        raise RuntimeError(f"UDPipe 1 cannot load {path}")
    sents = U.read_conllu_sentences(tb.test.read_text(encoding="utf-8"))
    for i in range(len(sents)):  # the gold trees go: nothing of them reaches the parser
        sents[i].unlinkAllNodes()
    err = ProcessingError()
    with H.timer() as t_parse:
        for i in range(len(sents)):
            if not model.parse(sents[i], Model.DEFAULT, err):
                raise RuntimeError(f"UDPipe 1 parsing failed: {err.message}")
    writer = OutputFormat.newConlluOutputFormat()
    out = "".join(writer.writeSentence(sents[i]) for i in range(len(sents)))
    n = sum(len(sents[i].words) - 1 for i in range(len(sents)))  # words[0] is the root
    rec = U.read_record(tb, cache, parser=True)
    return H.make_result("UDPipe 1 parser", load=t_load, tag=t_parse, n_items=n, unit="words",
                         model_bytes=path.stat().st_size, train_cpu_s=rec.get("train_cpu_s"),
                         **dependency_scores(tb.test, out))


# --------------------------------------------------------------------------
# UPOS from the gold tokens
# --------------------------------------------------------------------------

def fasttag_gold_tokens(train_path, test):
    """fasttag's Tagger trained on the training file (defaults), tagging
    the gold words."""
    from fasttag import Tagger

    with H.timer() as t_train:
        tagger = Tagger.train(str(train_path))
    with H.timer() as t_tag:
        pred = tagger.tag_sents([w for w, _ in test])
    acc = H.tagging_metrics(test, pred)["accuracy"]
    return H.make_result("fasttag Tagger", train=t_train, tag=t_tag, n_items=sum(len(w) for w, _ in test),
                         unit="words", model_bytes=len(tagger.to_bytes()), upos_f1=acc)


def crfsuite_gold_tokens(train, test):
    """CRFsuite L-BFGS with the anchor features (``anchors.crfsuite_pos``)."""
    res = anchors.crfsuite_pos(train, test, algorithm="lbfgs")
    res["upos_f1"] = res["accuracy"]
    res["n_words"] = res.pop("n_tokens")
    res["tag_words_per_cpu_s"] = res.pop("tag_tokens_per_cpu_s")
    return res


def udpipe_gold_tokens(tb_key, cache):
    """UDPipe 1's tagger (cached model) on the gold words of the test file."""
    from ufal.udpipe import Model, OutputFormat, ProcessingError

    tb = U.treebanks()[tb_key]
    model = Model.load(str(U.model_path(tb, cache)))
    sents = U.read_conllu_sentences(tb.test.read_text(encoding="utf-8"))
    for i in range(len(sents)):  # nothing of the gold annotation but the words
        words = sents[i].words
        for j in range(1, len(words)):
            w = words[j]
            w.lemma = w.upostag = w.xpostag = w.feats = ""
    err = ProcessingError()
    with H.timer() as t_tag:
        for i in range(len(sents)):
            if not model.tag(sents[i], Model.DEFAULT, err):
                raise RuntimeError(f"UDPipe 1 tagging failed: {err.message}")
    writer = OutputFormat.newConlluOutputFormat()
    out = "".join(writer.writeSentence(sents[i]) for i in range(len(sents)))
    n = sum(len(sents[i].words) - 1 for i in range(len(sents)))  # words[0] is the root
    return H.make_result("UDPipe 1", tag=t_tag, n_items=n, unit="words",
                         **full_scores(tb.test, out))


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------

#: What the cache records of UDPipe 1's run from raw text (with its parser:
#: in the parser model's record).
RECORDED = (*[m for m, _ in METRICS + DEP_METRICS], "tag_words_per_cpu_s", "peak_rss_mb", "n_words",
            "tag_cpu_s", "train_cpu_s", "model_bytes", "parser_model_bytes", "parser_train_cpu_s",
            "tagger_model")


def udpipe_cached_row(tb, cache, parser=True):
    """UDPipe 1's raw-text row as the cache recorded it (None if it has
    none; with ``parser`` the run with its parser, recorded with the parser
    model and of the current tokenizer + tagger model), its scores
    recomputed from the cached output, so that they appear once
    ``full_scores`` can give them without rerunning UDPipe."""
    rec = U.read_record(tb, cache, parser=parser)
    out = _udpipe_output(tb, cache, parser)
    if "raw_text" not in rec or not out.exists():
        return None
    if parser and rec["raw_text"].get("tagger_model") != U.cache_stem(tb):
        return None
    label = "UDPipe 1 (cached)" if parser else "UDPipe 1, no parser (cached)"
    row = {"label": label, "system": "UDPipe 1", **rec["raw_text"]}
    row.update(full_scores(tb.test, out.read_text(encoding="utf-8")))
    return row


def run_treebank(tb, cache, train_udpipe, skip_tagging, reuse_udpipe=False, skip_parser_alone=False):
    """Raw-text rows, parser-alone rows and gold-token rows of one treebank."""
    text, gold_sents = raw_text(tb.test)
    print(f"{tb.name}: {n_words(gold_sents):,} test words, {len(gold_sents):,} sentences", flush=True)
    have_udpipe = U.model_path(tb, cache).exists()
    if not have_udpipe and train_udpipe:
        U.train(tb, cache)
        have_udpipe = True
    have_parser = U.parser_model_path(tb, cache).exists()
    if have_udpipe and not have_parser and train_udpipe:
        U.train_parser(tb, cache)
        have_parser = True
    if have_udpipe and not have_parser:
        print(f"  UDPipe 1 without its parser: no cached parser model of {tb.key} "
              f"(run udpipe_cache.py --parser)", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench_ud_"))
    saved = work / f"{tb.key}.ftm"
    jobs = [H.Job("fasttag", fasttag_raw, (tb.train, text, gold_sents)),
            H.Job("fasttag + Tagger", fasttag_raw, (tb.train, text, gold_sents, tb.test, True)),
            H.Job("fasttag pipeline", fasttag_pipeline, (tb.train, text, gold_sents, tb.test, saved))]
    try:
        import spacy
        spacy.blank(tb.lang)
        jobs.append(H.Job("spaCy", spacy_raw, (tb.lang, text, gold_sents)))
    except ImportError as exc:  # e.g. Japanese needs SudachiPy, a dictionary tokenizer
        print(f"  spaCy left out for {tb.lang}: {str(exc).splitlines()[0]}", flush=True)
    cached_row = udpipe_cached_row(tb, cache, have_parser) if reuse_udpipe else None
    udpipe_label = "UDPipe 1" if have_parser else "UDPipe 1, no parser"
    if cached_row is not None:
        print("  UDPipe 1: the scores and speed recorded in the cache (not rerun)", flush=True)
    elif have_udpipe:
        jobs.append(H.Job(udpipe_label, udpipe_raw, (tb.key, cache, text, gold_sents, have_parser)))
    else:
        print(f"  UDPipe 1 left out: no cached model of {tb.key} (run udpipe_cache.py)", flush=True)
    try:
        raw_rows, failures = H.run_jobs(jobs)
        for r in raw_rows:
            if r["label"] == udpipe_label:
                U.update_record(tb, cache, parser=have_parser, raw_text={k: r.get(k) for k in RECORDED})
        if cached_row is not None:
            raw_rows.append(cached_row)
        parser_rows = []
        if not skip_parser_alone:
            jobs = []
            if saved.exists():
                jobs.append(H.Job("fasttag parser", fasttag_parser_alone, (saved, tb.test)))
            if have_parser:
                jobs.append(H.Job("UDPipe 1 parser", udpipe_parser_alone, (tb.key, cache)))
            parser_rows, more = H.run_jobs(jobs)
            failures += more
            for r in parser_rows:
                if r["label"] == "UDPipe 1 parser":
                    U.update_record(tb, cache, parser=True, gold_tags={k: r.get(k) for k in (
                        *[m for m, _ in DEP_METRICS], "tag_words_per_cpu_s", "n_words")})
    finally:
        shutil.rmtree(work, ignore_errors=True)
    gold_rows = []
    if not skip_tagging:
        train, test = H.load_conllu(tb.train), H.load_conllu(tb.test)
        jobs = [H.Job("fasttag", fasttag_gold_tokens, (tb.train, test)),
                H.Job("CRFsuite L-BFGS", crfsuite_gold_tokens, (train, test))]
        if have_udpipe:
            jobs.append(H.Job("UDPipe 1", udpipe_gold_tokens, (tb.key, cache)))
        gold_rows, more = H.run_jobs(jobs)
        failures += more
        for r in gold_rows:
            if r["label"] == "UDPipe 1":
                U.update_record(tb, cache, gold_tokens={k: r.get(k) for k in (
                    *[m for m, _ in METRICS[3:]], "tag_words_per_cpu_s")})
    for r in raw_rows + parser_rows + gold_rows:
        r["treebank"] = tb.key
    return raw_rows, parser_rows, gold_rows, failures


def _pipeline_ratios(raw_rows, parser_rows=()):
    """Per treebank with both rows: the fasttag pipeline's speed and model
    size over UDPipe 1's, and its parser's speed alone over UDPipe 1's."""
    by = {(r.get("treebank"), r.get("system")): r for r in raw_rows}
    alone = {(r.get("treebank"), r.get("system")): r for r in parser_rows}
    out = []
    for (tb, system), ours in by.items():
        theirs = by.get((tb, "UDPipe 1"))
        if system != "fasttag pipeline" or theirs is None:
            continue
        row = {"treebank": tb, "udpipe": theirs.get("label")}
        if ours.get("tag_words_per_cpu_s") and theirs.get("tag_words_per_cpu_s"):
            row["speed"] = ours["tag_words_per_cpu_s"] / theirs["tag_words_per_cpu_s"]
        if ours.get("model_bytes") and theirs.get("model_bytes"):
            row["size"] = ours["model_bytes"] / theirs["model_bytes"]
        a, b = alone.get((tb, "fasttag parser")), alone.get((tb, "UDPipe 1 parser"))
        if a and b and a.get("tag_words_per_cpu_s") and b.get("tag_words_per_cpu_s"):
            row["parser_speed"] = a["tag_words_per_cpu_s"] / b["tag_words_per_cpu_s"]
        out.append(row)
    return out


def _mb(b):
    return "-" if b is None else f"{b / 1e6:.1f}"


def _parser_rows(raw_rows, parser_rows):
    """Per treebank and system: the full pipeline's speed and sizes beside
    its parser's speed and scores alone (gold tokens and tags)."""
    alone = {(r.get("treebank"), r.get("system")): r for r in parser_rows}
    out = []
    for r in raw_rows:
        name = {"fasttag pipeline": "fasttag parser", "UDPipe 1": "UDPipe 1 parser"}.get(r.get("system"))
        if name is None:
            continue
        a = alone.get((r.get("treebank"), name), {})
        row = {"treebank": r.get("treebank"), "label": r.get("label"),
               "full_speed": r.get("tag_words_per_cpu_s"), "parser_speed": a.get("tag_words_per_cpu_s"),
               "model_bytes": r.get("model_bytes"), "parser_model_bytes": r.get("parser_model_bytes"),
               "las_raw": r.get("las_f1")}
        row.update({f"gold_{k}": a.get(k) for k, _ in DEP_METRICS})
        out.append(row)
    return out


def print_tables(raw_rows, gold_rows, parser_rows=()):
    print("\n### From raw text (CoNLL 2018 F1; speed on the same test text)\n")
    cols = [("treebank", "treebank"), ("label", "system")]
    cols += [(k, h, H.pct) for k, h in METRICS + DEP_METRICS]
    cols += [("tag_words_per_cpu_s", "words/CPU s", H.whole), ("peak_rss_mb", "peak MB", "{:.0f}"),
             ("model_bytes", "model MB", _mb), ("train_cpu_s", "train CPU s", H.seconds)]
    print(H.format_table(raw_rows, cols))
    rows = _parser_rows(raw_rows, parser_rows)
    if rows:
        print("\n### The parsers: the full pipeline from raw text, the parser alone on gold tokens and tags\n")
        cols = [("treebank", "treebank"), ("label", "system"),
                ("full_speed", "full pipeline words/CPU s", H.whole),
                ("parser_speed", "parser alone words/CPU s", H.whole),
                ("model_bytes", "model MB (all)", _mb), ("parser_model_bytes", "parser MB", _mb),
                ("las_raw", "LAS raw text", H.pct)]
        cols += [(f"gold_{k}", f"{h} gold tok+tags", H.pct) for k, h in DEP_METRICS]
        print(H.format_table(rows, cols))
    ratios = _pipeline_ratios(raw_rows, parser_rows)
    if ratios:
        print("\n### The fasttag pipeline against UDPipe 1 (same text, same training file)\n")
        print(H.format_table(ratios, [("treebank", "treebank"), ("udpipe", "UDPipe 1 row"),
                                      ("speed", "words/CPU s, fasttag / UDPipe 1", "{:.1f}x"),
                                      ("parser_speed", "parser alone words/CPU s, fasttag / UDPipe 1", "{:.1f}x"),
                                      ("size", "model size, fasttag / UDPipe 1", "{:.1f}x")]))
    if gold_rows:
        print("\n### From the gold tokens (accuracy)\n")
        cols = [("treebank", "treebank"), ("label", "system")]
        cols += [(k, h, H.pct) for k, h in METRICS[3:]]
        cols += [("tag_words_per_cpu_s", "words/CPU s", H.whole), ("peak_rss_mb", "peak MB", "{:.0f}"),
                 ("train_cpu_s", "train CPU s", H.seconds)]
        print(H.format_table(gold_rows, cols))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--treebanks", default="pt,fi,tr,ja,en", help="comma-separated keys")
    ap.add_argument("--cache", type=Path, default=U.default_cache(),
                    help="folder of the trained UDPipe 1 models and their scores")
    ap.add_argument("--no-train-udpipe", action="store_true",
                    help="no UDPipe 1 training: leave UDPipe 1 out where its tokenizer + tagger model is not "
                         "cached, run it without its parser where its parser model is not")
    ap.add_argument("--skip-tagging", action="store_true", help="no gold-token UPOS rows")
    ap.add_argument("--skip-parser-alone", action="store_true",
                    help="no rows of the parsers alone on the gold tokens and tags")
    ap.add_argument("--reuse-udpipe", action="store_true",
                    help="UDPipe 1's raw-text row from the scores and speed the cache recorded (not rerun)")
    args = ap.parse_args(argv)
    known = U.treebanks()
    keys = [k for k in args.treebanks.split(",") if k]
    bad = [k for k in keys if k not in known]
    if bad:
        ap.error(f"--treebanks: unknown {', '.join(bad)} (known: {', '.join(known)})")
    missing = [str(known[k].test) for k in keys if not (known[k].train.exists() and known[k].test.exists())]
    if missing:
        print(f"skipped: corpora not found ({', '.join(missing)}); see ../shared/data/README.md")
        return 0
    raw_rows, parser_rows, gold_rows, failures = [], [], [], []
    for k in keys:
        r, p, g, f = run_treebank(known[k], args.cache, not args.no_train_udpipe, args.skip_tagging,
                                  args.reuse_udpipe, args.skip_parser_alone)
        raw_rows += r
        parser_rows += p
        gold_rows += g
        failures += f
    print_tables(raw_rows, gold_rows, parser_rows)
    if failures:
        print(f"\n{len(failures)} system(s) failed: {', '.join(l for l, _ in failures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
