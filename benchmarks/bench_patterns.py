"""Protected patterns (``fasttag/text/patterns.py``): their speed, and how
often UD training data keeps each kind's span as one gold token.

    python benchmarks/bench_patterns.py [--data ../shared/data]

Speed: characters (and whitespace-separated words) per CPU second of
``protected_spans`` over the lines of ``unlabeled_en/webtext.txt``, a call
per line and the text as one string, best of 5 (and the spans found per
kind).  Gold: for
each treebank's training file (the data README names it), each span found
in a sentence's ``# text`` is "whole" when it is exactly one surface token
(a multiword token's range counts as one), "inside" when it lies inside
one longer token (Finnish ``2.0:n``: the span ``2.0``), "split" when it
covers several whole tokens, "crossed" when a token boundary cuts it and
another token.  Keeping a span whole agrees with the data when it is whole
or inside: a tokenizer should protect a kind only where that holds.
"""
import argparse
import time
from collections import Counter
from pathlib import Path

from fasttag.text.patterns import KINDS, OUTCOMES, outcomes, protected_spans

ROOT = Path(__file__).resolve().parents[1]
TREEBANKS = {"en": "en_ewt/en_ewt-ud-train.conllu", "pt": "ud/UD_Portuguese-Bosque/pt_bosque-ud-dev.conllu",
             "fi": "ud/UD_Finnish-TDT/fi_tdt-ud-dev.conllu", "tr": "ud/UD_Turkish-IMST/tr_imst-ud-train.conllu",
             "ja": "ud/UD_Japanese-GSD/ja_gsd-ud-dev.conllu"}


def sentences(path):
    """(text, surface token forms) of each sentence of a CoNLL-U file."""
    text, forms, skip_to = None, [], 0
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if line.startswith("# text = "):
            text = line[9:]
        elif not line:
            if text is not None and forms:
                yield text, forms
            text, forms, skip_to = None, [], 0
        elif not line.startswith("#"):
            cols = line.split("\t")
            if "." in cols[0]:
                continue
            if "-" in cols[0]:
                a, b = cols[0].split("-")
                forms.append(cols[1])
                skip_to = int(b)
            elif int(cols[0]) > skip_to:
                forms.append(cols[1])


def token_offsets(text, forms):
    """(start, end) of each form in ``text``, in order; None where the
    forms do not spell the text."""
    out, at = [], 0
    for f in forms:
        a = text.find(f, at)
        if a < 0 or text[at:a].strip():
            return None
        out.append((a, a + len(f)))
        at = a + len(f)
    return out


def gold(path):
    """Counter of (kind, outcome) and examples of what was not whole."""
    counts, examples = Counter(), {}
    for text, forms in sentences(path):
        offsets = token_offsets(text, forms)
        if offsets is None:
            continue
        starts, ends, _ = protected_spans(text)
        for a, b, k, o in zip(starts.tolist(), ends.tolist(), *outcomes(text, offsets)):
            counts[KINDS[k], OUTCOMES[o]] += 1
            if o:
                examples.setdefault((KINDS[k], OUTCOMES[o]), []).append(
                    " ".join(f for f, (x, y) in zip(forms, offsets) if x < b and y > a))
    return counts, examples


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "data"))
    args = ap.parse_args()
    data = Path(args.data)
    lines = (data / "unlabeled_en" / "webtext.txt").read_text(encoding="utf-8").splitlines()
    chars = sum(map(len, lines))
    cpu = whole = float("inf")               # the best of 5 runs: the machine is shared
    for _ in range(5):
        t = time.process_time()
        results = [protected_spans(line) for line in lines]
        cpu = min(cpu, time.process_time() - t)
        t = time.process_time()
        protected_spans("\n".join(lines))
        whole = min(whole, time.process_time() - t)
    found = Counter(k for _, _, kinds in results for k in kinds.tolist())
    words = sum(len(line.split()) for line in lines)
    print(f"webtext: {chars:,} chars, {words:,} words in {cpu:.2f} CPU s: {chars / cpu:,.0f} chars/s, "
          f"{words / cpu:,.0f} words/s")
    print(f"  the text as one string: {(chars + len(lines)) / whole:,.0f} chars/s, {words / whole:,.0f} words/s")
    print("  found: " + ", ".join(f"{KINDS[k]} {n}" for k, n in sorted(found.items())))
    for lang, rel in TREEBANKS.items():
        if not (data / rel).exists():
            print(f"{lang}: {rel} absent")
            continue
        counts, examples = gold(data / rel)
        print(f"{lang} ({rel}):")
        for kind in KINDS:
            row = {o: counts[kind, o] for o in OUTCOMES}
            if sum(row.values()):
                ex = "; ".join(f"{o}: " + " | ".join(examples[kind, o][:3]) for o in OUTCOMES[1:]
                               if (kind, o) in examples)
                print(f"  {kind:<9} whole {row['whole']:5d}  inside {row['inside']:3d}  split {row['split']:3d}  "
                      f"crossed {row['crossed']:3d}"
                      + (f"   e.g. {ex}" if ex else ""))


if __name__ == "__main__":
    main()
