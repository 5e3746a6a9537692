"""Two checkouts side by side: same training, same data, same seed.

    PYTHONPATH=CHECKOUT python benchmarks/side_by_side.py accuracy [ewt c2kpos c2k ner pku]
    PYTHONPATH=CHECKOUT python benchmarks/side_by_side.py speed

Run it once per checkout (the PYTHONPATH says which fasttag is imported;
build it in place first) and compare the lines.  ``accuracy`` trains each
task as the benchmarks do and prints its test score in memory and after a
save and load, with a digest of the saved weights and tables: equal
digests mean equal models.  ``speed`` prints CPU-time throughput of the
bundled models (POS and NER on EWT test, the segmenter on PD 1998 dev lines,
the tokenizer and raw-text tagging on EWT test text, the tokenizer's
``tokenize_lines`` on the web text of ``unlabeled_en``) and the CPU time of 3
EWT training epochs; alternate the checkouts a few times and compare medians.
"""
import hashlib
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import harness as H  # noqa: E402

import fasttag  # noqa: E402


def digest(model):
    from fasttag.model import modelfile         # imported here: speed runs on any checkout
    _, arrays = modelfile.loads(model.to_bytes())
    h = hashlib.sha256()
    for name in sorted(arrays):
        h.update(name.encode())
        h.update(arrays[name].tobytes())
    return h.hexdigest()[:16]


def fraction(value):
    return value / 100 if value > 1 else value      # span F1 was a percentage before the task model


def accuracy(which):
    def p(*parts):
        return str(H.data_path(*parts))
    jobs = {
        "ewt": ("ewt_pos", lambda: fasttag.Tagger.train(p("en_ewt", "en_ewt-ud-train.conllu"), epochs=10, verbose=False),
                lambda m: m.evaluate(p("en_ewt", "en_ewt-ud-test.conllu"))["accuracy"]),
        "c2kpos": ("conll2000_pos", lambda: fasttag.Tagger.train(p("conll2000", "train.txt"), format="conll", column=1,
                                                                   epochs=10, verbose=False),
                   lambda m: m.evaluate(p("conll2000", "test.txt"))["accuracy"]),
        "c2k": ("conll2000_chunk", lambda: fasttag.SpanTagger.train(p("conll2000", "train.txt"), task="chunk", epochs=8,
                                                                      verbose=False),
                lambda m: fraction(m.evaluate(p("conll2000", "test.txt"))["f1"])),
        "ner": ("conll2003_ner", lambda: fasttag.SpanTagger.train(p("conll2003", "eng.train"), dev=p("conll2003", "eng.testa"),
                                                                    task="ner", epochs=15, verbose=False,
                                                                    **H.NER_COLUMN_OPTIONS),
                lambda m: fraction(m.evaluate(p("conll2003", "eng.testb"))["f1"])),
        "pku": ("pku_seg", lambda: fasttag.Segmenter.train(p("zh_pd1998", "train.txt"), p("zh_pd1998", "dev.txt"),
                                                             epochs=12, prune=2.0, algorithm="perceptron",
                                                             verbose=False),
                lambda m: m.evaluate(p("sighan2005", "pku_test_gold.utf8"),
                                     words=p("sighan2005", "pku_training_words.utf8"))["f1"]),
    }
    for key in which or list(jobs):
        name, make, score = jobs[key]
        t0 = time.time()
        model = make()
        seconds = time.time() - t0
        back = fasttag.loads(model.to_bytes())
        print(name, json.dumps({"in_memory": score(model), "reloaded": score(back), "digest": digest(model),
                                "train_s": round(seconds, 1),
                                "best_epoch": model.model.training_info.get("best_epoch")}), flush=True)


def speed():
    """CPU-time throughput through the public API only, so that any two
    checkouts run the same code here."""
    test = [words for words, _ in H.load_conllu(H.data_path("en_ewt", "en_ewt-ud-test.conllu"))] * 4
    text = "\n".join(" ".join(words) for words in test[: len(test) // 4])
    lines = ["".join(line.split()) for line in open(H.data_path("zh_pd1998", "dev.txt"), encoding="utf-8")]
    tagger, seg, ner, tok = fasttag.load(), fasttag.load("zh"), fasttag.load("en-ner"), fasttag.load("en-tok")
    tagger.tag_sents(test[:2000])                    # warm-up: word-type cache, code paths
    list(seg.segment_lines(lines[:500]))
    result = {}

    def timed(name, units, fn):
        t = time.process_time()
        fn()
        result[name] = round(units / (time.process_time() - t))

    timed("pos_tokens_per_cpu_s", sum(map(len, test)), lambda: tagger.tag_sents(test))
    timed("seg_chars_per_cpu_s", sum(map(len, lines)), lambda: list(seg.segment_lines(lines)))
    timed("ner_tokens_per_cpu_s", sum(map(len, test[:4000])), lambda: ner.tag_sents(test[:4000]))
    timed("tok_chars_per_cpu_s", len(text), lambda: tok.tokenize(text))
    web = H.DATA_ROOT / "unlabeled_en" / "webtext.txt"
    if web.exists():         # the measure: tokenize_lines on web text, in words per CPU second
        web_lines = web.read_text(encoding="utf-8").splitlines()
        words = sum(len(s) for out in tok.tokenize_lines(web_lines) for s in out)
        timed("tok_lines_words_per_cpu_s", words, lambda: list(tok.tokenize_lines(web_lines)))
    timed("raw_text_pos_chars_per_cpu_s", len(text), lambda: tagger.tag_text(text))
    t = time.process_time()
    fasttag.Tagger.train(str(H.data_path("en_ewt", "en_ewt-ud-train.conllu")), epochs=3, verbose=False)
    result["ewt_3_epochs_cpu_s"] = round(time.process_time() - t, 2)
    print(json.dumps(result))


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("accuracy", "speed"):
        raise SystemExit(__doc__)
    accuracy(sys.argv[2:]) if sys.argv[1] == "accuracy" else speed()
