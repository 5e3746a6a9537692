"""Lemmas and morphological features with gold UPOS, per treebank.

    python benchmarks/bench_lemma_morph.py [--treebanks en,pt,fi,tr,ja] [--epochs 5]
                                           [--lemma] [--morph abc]

* Lemmas: :class:`fasttag.Lemmatizer` (EWT and Turkish keep their best
  epoch on dev; the others have no dev file here) against the baselines:
  the form, the lowercased form, the most frequent lemma of the form in
  training (else the lowercased form).  Tokens whose gold lemma is ``_``
  are left out.
* Features, without dev data, a fixed number of epochs: (a) the FEATS
  bundle as one tag with the UPOS as input (:class:`fasttag.Morphologizer`),
  (b) a joint UPOS#FEATS tag of :class:`fasttag.Tagger` (no UPOS input; its
  UPOS accuracy is printed too), (c) a morphologizer per feature, their
  answers joined.  UFeats as the CoNLL 2018 script scores it (universal
  features, the whole bundle), the whole bundle, and micro F1 of Feat=Val.

Training files: EWT train; the ``ud/`` treebanks' dev file, Turkish's
train file (``../shared/data/README.md``); scored on test.
"""
import argparse
import collections
import sys
import time
from pathlib import Path

import fasttag
from fasttag.tasks import wordinput
from fasttag.tasks.morph import canonical, universal

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
TREEBANKS = {   # name: (train, dev or None, test)
    "en": ("en_ewt/en_ewt-ud-train.conllu", "en_ewt/en_ewt-ud-dev.conllu", "en_ewt/en_ewt-ud-test.conllu"),
    "pt": ("ud/UD_Portuguese-Bosque/pt_bosque-ud-dev.conllu", None, "ud/UD_Portuguese-Bosque/pt_bosque-ud-test.conllu"),
    "fi": ("ud/UD_Finnish-TDT/fi_tdt-ud-dev.conllu", None, "ud/UD_Finnish-TDT/fi_tdt-ud-test.conllu"),
    "tr": ("ud/UD_Turkish-IMST/tr_imst-ud-train.conllu", "ud/UD_Turkish-IMST/tr_imst-ud-dev.conllu",
           "ud/UD_Turkish-IMST/tr_imst-ud-test.conllu"),
    "ja": ("ud/UD_Japanese-GSD/ja_gsd-ud-dev.conllu", None, "ud/UD_Japanese-GSD/ja_gsd-ud-test.conllu"),
}


def predicted_upos(train, test, epochs):
    """The UPOS of a fasttag tagger trained on ``train`` (no dev), per test sentence."""
    tagger = fasttag.Tagger.train(train, epochs=epochs, verbose=False)
    return tagger.tag_sents([w for w, _, _ in wordinput.read_examples(test, "test", 2, "lemma")])


def lemmas(name, train, dev, test, epochs, upos=None):
    t0 = time.process_time()
    model = fasttag.Lemmatizer.train(train, dev=dev, epochs=epochs, verbose=False)
    seconds = time.process_time() - t0
    acc = model.evaluate(test)["accuracy"]
    if upos is not None:
        gold = wordinput.read_examples(test, "test", 2, "lemma")
        out = model.lemmatize_sents([w for w, _, _ in gold], upos)
        pairs = [(g, p) for (ws, _, gs), ps in zip(gold, out) for w, g, p in zip(ws, gs, ps) if g != "_" or w == "_"]
        print(f"{name} lemmas  fasttag with predicted UPOS {100 * sum(g == p for g, p in pairs) / len(pairs):.2f}")
    lexicon = collections.defaultdict(collections.Counter)
    for words, _, gold in wordinput.read_examples(train, "train", 2, "lemma"):
        for w, lemma in zip(words, gold):
            lexicon[w][lemma] += 1
    n = form = lower = frequent = 0
    for words, _, gold in wordinput.read_examples(test, "test", 2, "lemma"):
        for w, lemma in zip(words, gold):
            if lemma == "_" and w != "_":
                continue
            n += 1
            form += w == lemma
            lower += w.lower() == lemma
            frequent += (lexicon[w].most_common(1)[0][0] if w in lexicon else w.lower()) == lemma
    print(f"{name} lemmas  fasttag {100 * acc:.2f}  form {100 * form / n:.2f}  lowercased {100 * lower / n:.2f}  "
          f"most frequent {100 * frequent / n:.2f}  ({n} tokens, {len(model.model.tags)} scripts, "
          f"{seconds:.0f} CPU s)", flush=True)


def features(name, train, test, epochs, approaches, predicted=None):
    def read(path):
        return [(w, u, [canonical(b) for b in f]) for w, u, f in wordinput.read_examples(path, "x", 5, "feats")]
    tr, te = read(train), read(test)
    if all(b == "_" for _, _, bs in tr for b in bs):
        print(f"{name} feats   the training file has no FEATS", flush=True)
        return
    words, upos = [w for w, _, _ in te], [u for _, u, _ in te]

    def triples(value):
        return [list(zip(w, u, [value(b) for b in bs])) for w, u, bs in tr]

    def score(pred, label, seconds):
        tokens = exact = ufeats = tp = n_gold = n_pred = 0
        for (_, _, gold), p in zip(te, pred):
            for g, q in zip(gold, p):
                tokens += 1
                exact += g == q
                ufeats += universal(g) == universal(q)
                gs, ps = set(g.split("|")) - {"_"}, set(q.split("|")) - {"_"}
                tp, n_gold, n_pred = tp + len(gs & ps), n_gold + len(gs), n_pred + len(ps)
        p, r = tp / max(n_pred, 1), tp / max(n_gold, 1)
        print(f"{name} feats   {label:<22} UFeats {100 * ufeats / tokens:.2f}  bundle {100 * exact / tokens:.2f}  "
              f"Feat=Val F1 {200 * p * r / max(p + r, 1e-9):.2f}  ({seconds:.0f} CPU s)", flush=True)
    if "a" in approaches:
        t0 = time.process_time()
        model = fasttag.Morphologizer.train(triples(lambda b: b), epochs=epochs, verbose=False)
        score(model.analyze_sents(words, upos), f"(a) bundle, {len(model.model.tags)} tags", time.process_time() - t0)
        if predicted is not None:
            score(model.analyze_sents(words, predicted), "(a) predicted UPOS", 0)
    if "b" in approaches:
        t0 = time.process_time()
        model = fasttag.Tagger.train([(w, [x + "#" + y for x, y in zip(u, bs)]) for w, u, bs in tr],
                                     epochs=epochs, verbose=False)
        out = model.tag_sents(words)
        score([[t.split("#", 1)[1] for t in s] for s in out], f"(b) joint, {len(model.tags)} tags",
              time.process_time() - t0)
        pairs = [(g, t.split("#", 1)[0]) for u, s in zip(upos, out) for g, t in zip(u, s)]
        print(f"{name} feats   (b) its UPOS {100 * sum(g == t for g, t in pairs) / len(pairs):.2f}", flush=True)
    if "c" in approaches:
        names = sorted({f.partition("=")[0] for _, _, bs in tr for b in bs if b != "_" for f in b.split("|")})
        t0 = time.process_time()
        found = [[[] for _ in w] for w in words]
        for feature in names:
            def only(b, feature=feature):
                return next((f for f in b.split("|") if f.partition("=")[0] == feature), "_")
            model = fasttag.Morphologizer.train(triples(only), epochs=epochs, verbose=False)
            for sent, out in zip(found, model.analyze_sents(words, upos)):
                for w, f in zip(sent, out):
                    if f != "_":
                        w.append(f)
        score([[canonical("|".join(w)) if w else "_" for w in s] for s in found],
              f"(c) per feature, {len(names)}", time.process_time() - t0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--treebanks", default="en,pt,fi,tr,ja")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--lemma", action="store_true", help="lemmas (the default: lemmas and features)")
    parser.add_argument("--morph", default=None, metavar="abc", help="features, by these approaches")
    parser.add_argument("--predicted", action="store_true",
                        help="also with the UPOS of a fasttag tagger trained on the same file (no dev)")
    args = parser.parse_args()
    if not DATA.is_dir():
        sys.exit(f"needs the shared corpora at {DATA}")
    run_lemmas, run_features = args.lemma or args.morph is None, args.morph is not None or not args.lemma
    for name in args.treebanks.split(","):
        train, dev, test = (None if p is None else DATA / p for p in TREEBANKS[name])
        upos = predicted_upos(train, test, args.epochs) if args.predicted else None
        if upos is not None:
            gold = [u for _, u, _ in wordinput.read_examples(test, "test", 2, "lemma")]
            pairs = [(g, p) for gs, ps in zip(gold, upos) for g, p in zip(gs, ps)]
            print(f"{name} UPOS    tagger {100 * sum(g == p for g, p in pairs) / len(pairs):.2f}", flush=True)
        if run_lemmas:
            lemmas(name, train, dev, test, args.epochs, upos)
        if run_features:
            features(name, train, test, args.epochs, args.morph or "abc", upos)


if __name__ == "__main__":
    main()
