"""Words F1 on text written without spaces (Japanese GSD, Chinese GSDSimp):
the tokenizer alone, the segmenter alone (on the gold sentences' raw
text), and the tokenizer that carries a segmenter.  Each trained on the
treebank's dev file, scored on its test file by the CoNLL 2018
definitions.  Usage: python benchmarks/bench_spaceless.py [ja|zh ...]"""
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))     # this checkout's fasttag

import fasttag  # noqa: E402
from fasttag.text.goldtext import SurfaceToken, read_conllu_text  # noqa: E402
from fasttag.text.metrics import score_tokenization  # noqa: E402

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
FILES = {"ja": DATA / "ud" / "UD_Japanese-GSD" / "ja_gsd-ud-{}.conllu",
         "zh": DATA / "zh_gsdsimp" / "zh_gsdsimp-ud-{}.conllu"}


def segmenter_words(seg, gold):
    """The segmenter's words over each gold sentence's raw text, as tokens
    with offsets (sentences as the gold's)."""
    spans = gold.sentence_spans()
    out = []
    for (a, b), words in zip(spans, seg.segment_lines(gold.text[a:b] for a, b in spans)):
        at, sent, text = a, [], gold.text
        for w in words:
            while text[at].isspace():
                at += 1
            sent.append(SurfaceToken(at, at + len(w), w, (w,)))
            at += len(w)
        out.append(sent)
    return out


def main(langs):
    for lang in langs:
        train, test = (str(FILES[lang]).format(s) for s in ("dev", "test"))
        gold = read_conllu_text(test)
        t0 = time.process_time()
        seg = fasttag.Segmenter.train(train, format="conllu", verbose=False)
        t1 = time.process_time()
        s = score_tokenization(gold.sentences, segmenter_words(seg, gold))
        print(f"{lang} segmenter alone: words F1 {100 * s['word_f1']:.2f} (train {t1 - t0:.0f} CPU s)", flush=True)
        tok = fasttag.Tokenizer.train(train, verbose=False)
        t2 = time.process_time()
        r = tok.evaluate(test)
        carries = getattr(tok, "segmenter", None) is not None
        print(f"{lang} tokenizer{' with segmenter' if carries else ' alone'}: words F1 {100 * r['word_f1']:.2f} "
              f"tokens {100 * r['token_f1']:.2f} sentences {100 * r['sentence_f1']:.2f} "
              f"(train {t2 - t1:.0f} CPU s)", flush=True)
        if carries:
            tok.segmenter = None
            r = tok.evaluate(test)
            print(f"{lang} tokenizer alone: words F1 {100 * r['word_f1']:.2f} tokens {100 * r['token_f1']:.2f} "
                  f"sentences {100 * r['sentence_f1']:.2f}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or ["ja", "zh"])
