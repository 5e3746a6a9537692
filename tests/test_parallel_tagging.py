"""Tagging on many threads, and streaming.

Every task's batch method (and ``tag_file`` behind the commands) takes
``n_threads``; the output must be the one-thread output, in input order,
whatever the thread count.  The chunk sizes are shrunk here so that small
inputs make many chunks, and new word types keep arriving while threads
tag (the word-type cache grows under them).  The reference for one
thread is tagging each sentence alone.  The commands are run through the
real console script on inputs large enough for several batches; peak
memory of a command must not grow with its input.
"""
import random
import subprocess
import sys
from pathlib import Path

import pytest

import fasttag
from fasttag import parallel
from fasttag.text import rawtext
from fasttag.model import sequence
from fasttag.tasks import seg, tok
from fasttag.tasks.featuredicts import FeatureTagger

THREADS = (1, 2, 3, 8)

VOCAB = ("the of and to a in is was for that on with by as at from it his an were are which this be "
         "Germany EU Bonn London Peter Smith said told reporters on Monday shares rose fell percent "
         "market company government minister president officials . , ; ( ) 1996 3.5").split()


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of a few hundred tokens, so that a few thousand tokens make
    many chunks."""
    monkeypatch.setattr(sequence, "BATCH_TOKENS", 300)
    monkeypatch.setattr(rawtext, "BATCH_TOKENS", 400)
    monkeypatch.setattr(seg, "BATCH_CHARS", 300)        # a batch is one chunk: at most BATCH_TOKENS
    monkeypatch.setattr(tok, "BATCH_CHARS", 500)


def _sentences(n, seed=0):
    """Sentences of known words and new ones (never seen before, by any
    test: they fill the word-type cache while threads tag)."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        out.append([rng.choice(VOCAB) if rng.random() < 0.8 else f"Zq{seed}x{i}w{rng.randint(0, 99)}"
                    for _ in range(rng.randint(1, 30))])
    return out


def _fresh(name):
    """A new copy of a bundled model: an empty word-type cache."""
    model = fasttag.load(name)
    return type(model).from_bytes(model.to_bytes())


# ---------------------------------------------------------------- the API

def test_ordered_map_keeps_order_and_bounds_look_ahead():
    started = []

    def work(x):
        started.append(x)
        return x * x

    def items():
        for i in range(100):
            # never more than the look-ahead (8 items) beyond what was consumed
            assert i - len(consumed) <= 8
            yield i
    consumed = []
    for y in parallel.ordered_map(work, items(), 4, ahead=8):
        consumed.append(y)
    assert consumed == [i * i for i in range(100)]
    assert sorted(started) == list(range(100))


def test_ordered_map_raises_where_the_failing_item_is():
    def work(x):
        if x == 7:
            raise KeyError(x)
        return x
    got = []
    with pytest.raises(KeyError):
        for y in parallel.ordered_map(work, range(50), 3):
            got.append(y)
    assert got == list(range(7))


@pytest.mark.usefixtures("small_chunks")
def test_tagger_same_tags_on_any_number_of_threads():
    sents = _sentences(600, seed=1)
    reference = fasttag.load("en")
    expected = [reference.tag(s) for s in sents]              # one sentence at a time
    for n in THREADS:
        assert _fresh("en").tag_sents(sents, n_threads=n) == expected, n
    shared = _fresh("en")                                       # one model, runs one after another
    assert [shared.tag_sents(sents, n_threads=n) for n in (8, 8, 3)] == [expected] * 3
    best = reference.tag_sents(sents[:80], n_best=3)
    assert _fresh("en").tag_sents(sents[:80], n_best=3, n_threads=3) == best


@pytest.mark.usefixtures("small_chunks")
def test_span_tagger_same_tags_on_any_number_of_threads():
    sents = _sentences(400, seed=2)
    documents = [i // 7 for i in range(len(sents))]           # document features see several sentences
    reference = fasttag.load("en-ner")
    expected = reference.tag_sents(sents, documents=documents)
    alone = [reference.tag_sents(sents[i:i + 7], documents=[0] * len(sents[i:i + 7]))
             for i in range(0, len(sents), 7)]
    assert expected == [t for part in alone for t in part]
    for n in THREADS:
        assert _fresh("en-ner").tag_sents(sents, documents=documents, n_threads=n) == expected, n
    best = reference.tag_sents(sents[:50], n_best=2)
    assert _fresh("en-ner").tag_sents(sents[:50], n_best=2, n_threads=8) == best


@pytest.mark.usefixtures("small_chunks")
def test_feature_tagger_same_tags_on_any_number_of_threads():
    rng = random.Random(3)
    data = []
    for _ in range(200):
        words = [rng.choice(VOCAB) for _ in range(rng.randint(1, 12))]
        data.append(([{"w": w, "cap": w[:1].isupper()} for w in words],
                     ["CAP" if w[:1].isupper() else "P" if not w.isalnum() else "LOW" for w in words]))
    model = FeatureTagger.train(data, epochs=2, verbose=False)
    sents = [f for f, _ in data]
    expected = [model.tag(s) for s in sents]
    for n in THREADS:
        assert model.tag_sents(sents, n_threads=n) == expected, n
    assert model.tag_sents(sents, n_best=2, n_threads=3) == model.tag_sents(sents, n_best=2)


@pytest.mark.usefixtures("small_chunks")
def test_segmenter_same_words_on_any_number_of_threads():
    rng = random.Random(4)
    chars = "我们今天去北京参观博物馆他在大学学习计算机科学。，中国人民银行２０２４年"
    lines = ["".join(rng.choice(chars) for _ in range(rng.randint(0, 80))) for _ in range(400)]
    lines.append("长" * 25_000)                                    # cut into pieces, batched across threads
    reference = fasttag.load("zh")
    expected = [reference.segment(line) for line in lines]
    for n in THREADS:
        got = _fresh("zh").segment_lines(iter(lines), n_threads=n)
        assert not isinstance(got, list)                          # lazy
        assert list(got) == expected, n


@pytest.mark.usefixtures("small_chunks")
def test_tokenizer_same_sentences_on_any_number_of_threads():
    rng = random.Random(5)
    lines = [" ".join(" ".join(rng.choice(VOCAB) for _ in range(rng.randint(1, 15))) + rng.choice(".?!")
                      for _ in range(rng.randint(0, 4))) for _ in range(300)]
    reference = fasttag.load("en-tok")
    expected = [reference.tokenize(line, offsets=True) for line in lines]
    for n in THREADS:
        assert list(_fresh("en-tok").tokenize_lines(lines, offsets=True, n_threads=n)) == expected, n


@pytest.mark.usefixtures("small_chunks")
def test_evaluate_on_threads_scores_the_same(tmp_path):
    sents = _sentences(300, seed=6)
    gold = tmp_path / "gold.txt"
    tags = fasttag.load("en").tag_sents(sents)
    gold.write_text("\n\n".join("\n".join(f"{w}\t{t}" for w, t in zip(s, ts)) for s, ts in zip(sents, tags))
                    + "\n", encoding="utf-8")
    for n in (1, 3):
        result = _fresh("en").evaluate(gold, n_threads=n, format="conll")
        assert result["accuracy"] == 1.0 and result["tokens"] == sum(map(len, sents)), n


@pytest.mark.parametrize("name, data", [("en-ner", "sample_ner.conll"), ("zh", "sample_zh_train.txt"),
                                        ("en-tok", "sample_tok.conllu")])
@pytest.mark.usefixtures("small_chunks")
def test_every_task_evaluates_the_same_on_threads(name, data):
    path = Path(__file__).resolve().parents[1] / "data" / data
    scores = []
    for n in (1, 3):
        result = _fresh(name).evaluate(path, n_threads=n)
        scores.append({k: v for k, v in result.items() if "second" not in k})
    assert scores[0] == scores[1]


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, None, parallel.MAX_THREADS + 1])
def test_invalid_n_threads_is_refused(bad):
    tagger = fasttag.load("en")
    with pytest.raises(ValueError, match="n_threads"):
        tagger.tag_sents([["a"]], n_threads=bad)
    with pytest.raises(ValueError, match="n_threads"):
        fasttag.load("en-ner").tag_sents([["a"]], n_threads=bad)
    with pytest.raises(ValueError, match="n_threads"):
        fasttag.load("zh").segment_lines(["我们"], n_threads=bad)      # at the call, not when read
    with pytest.raises(ValueError, match="n_threads"):
        fasttag.load("en-tok").tokenize_lines(["Hi."], n_threads=bad)
    with pytest.raises(ValueError, match="n_threads"):
        tagger.evaluate([(["a"], ["DET"])], n_threads=bad)


def test_zero_threads_means_every_core():
    assert parallel.check_threads(0) == parallel.available_cores() >= 1
    assert fasttag.load("en").tag_sents([["I", "saw", "her"]], n_threads=0) == [["PRON", "VERB", "PRON"]]


# ---------------------------------------------------------------- the commands

def _text_lines(n, seed):
    rng = random.Random(seed)
    return [" ".join(rng.choice(VOCAB) for _ in range(rng.randint(3, 25))) for _ in range(n)]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Inputs of several batches (of 50,000 tokens or characters) each."""
    folder = tmp_path_factory.mktemp("inputs")
    text = folder / "text.txt"
    lines = _text_lines(3700, 7)                                           # 52,000 tokens
    lines[10] = ""                                                        # a blank line
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    short = folder / "short.txt"                                           # raw text: 80,000 characters
    short.write_text("\n".join(lines[:1000]) + "\n", encoding="utf-8")
    rng = random.Random(8)
    chars = "我们今天去北京参观博物馆他在大学学习计算机科学。，中国人民银行"
    zh = folder / "zh.txt"
    zh.write_text("\n".join("".join(rng.choice(chars) for _ in range(rng.randint(0, 90)))
                            for _ in range(4000)) + "\n", encoding="utf-8")
    conllu = folder / "in.conllu"
    with open(conllu, "w", encoding="utf-8") as f:
        for i, line in enumerate(lines[:4000]):
            words = line.split()
            if not words:
                continue
            f.write(f"# sent_id = {i}\n")
            f.writelines(f"{j}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_\n" for j, w in enumerate(words, 1))
            f.write("\n")
    return {"text": text, "short": short, "zh": zh, "conllu": conllu}


def _outputs(run_cli, tmp_path, args, threads):
    out = {}
    for n in threads:
        target = tmp_path / f"out{n}"
        proc = run_cli(*args, "-o", target, "--threads", n, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        out[n] = target.read_bytes()
    return out


@pytest.mark.parametrize("command, source, extra, threads", [
    ("tag", "short", [], THREADS),
    ("tag", "text", ["--pretokenized", "--json", "--nbest", "2"], (1, 3)),
    ("tag", "conllu", [], (1, 8)),
    ("ner", "short", [], (1, 8)),
    ("ner", "text", ["--pretokenized", "--json"], (1, 3)),
    ("segment", "zh", [], THREADS),
    ("segment", "zh", ["--json"], (1, 3)),
    ("tokenize", "short", [], THREADS),
])
def test_commands_write_the_same_output_on_any_number_of_threads(run_cli, tmp_path, inputs, command, source,
                                                                  extra, threads):
    out = _outputs(run_cli, tmp_path, [command, inputs[source], *extra], threads)
    first = out[threads[0]]
    assert first.count(b"\n") >= 1000
    for n in threads:
        assert out[n] == first, n


def test_eval_command_scores_the_same_on_threads(run_cli, tmp_path, shared_data):
    import json
    test = shared_data / "en_ewt" / "en_ewt-ud-test.conllu"
    scores = []
    for n in (1, 3):
        proc = run_cli("eval", "en", test, "--json", "--threads", n, cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr.decode()
        result = json.loads(proc.stdout)
        scores.append((result["accuracy"], result["tokens"], result["per_tag"]))
    assert scores[0] == scores[1] and scores[0][1] == 25094


@pytest.mark.parametrize("value", ["-1", "two", "1.5", "", "100000"])
def test_commands_refuse_a_bad_thread_count(run_cli, tmp_path, inputs, value):
    target = tmp_path / "out.txt"
    proc = run_cli("tag", inputs["text"], "-o", target, "--threads", value, cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "--threads" in err and "Traceback" not in err
    assert not target.exists()


def test_bad_line_in_the_middle_names_it_and_leaves_no_output(run_cli, tmp_path):
    lines = _text_lines(6000, 9)
    data = ("\n".join(lines[:4499]) + "\n").encode() + b"bad \xff byte\n" + ("\n".join(lines[4500:])).encode()
    source = tmp_path / "in.txt"
    source.write_bytes(data)
    target = tmp_path / "out.txt"
    proc = run_cli("tag", source, "--pretokenized", "-o", target, "--threads", "3", cwd=tmp_path)
    assert proc.returncode == 2
    err = proc.stderr.decode().strip()
    assert len(err.splitlines()) == 1 and "in.txt:4500:" in err
    assert not target.exists() and list(tmp_path.iterdir()) == [source]


def _peak_rss_kib(command, env, cwd):
    """Peak resident memory of one run of ``command``, measured by a fresh
    parent process (RUSAGE_CHILDREN keeps the largest child it waited for)."""
    probe = ("import resource, subprocess, sys; "
             "subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL); "
             "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    proc = subprocess.run([sys.executable, "-c", probe, *command], capture_output=True, env=env, cwd=cwd,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr.decode()
    return int(proc.stdout)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss in KiB is Linux's")
def test_command_streams_in_memory_independent_of_input_size(cli_command, tmp_path):
    command, env = cli_command
    block = ("\n".join(_text_lines(8000, 11)) + "\n").encode()         # about 110,000 tokens, 0.5 MB
    peaks = {}
    for times in (1, 10):
        source = tmp_path / f"in{times}.txt"
        source.write_bytes(block * times)
        peaks[times] = _peak_rss_kib(command + ["tag", "--pretokenized", str(source), "-o",
                                                str(tmp_path / "out.txt")], env, tmp_path)
    grown_kib = peaks[10] - peaks[1]
    input_kib = 9 * len(block) / 1024
    # read whole, the extra 4.5 MB of input would cost several times its
    # size in Python strings and lists (its bytes and its text alone are
    # twice it); streamed, memory stays where it was, give or take the
    # batches in flight, which depend on how the threads are scheduled
    assert grown_kib < input_kib, (peaks, input_kib)


def test_pretokenized_lines_split_as_the_whitespace_pattern_does():
    """The fast split of short lines agrees with the reference ``\\S+``
    matches, Unicode whitespace included, and long lines still come in
    pieces."""
    import re
    rng = random.Random(12)
    spaces = [" ", "\t", "\u00a0", "\u3000", "\u2028", "\x1c", "\x85", "  ", "\f"]
    lines = ["".join(rng.choice(spaces) if rng.random() < 0.4 else rng.choice("ab\u00e9\u4e2d")
                     for _ in range(rng.randint(0, 60))) for _ in range(3000)]
    lines.append(" x" * 2500)
    expected = []
    for number, line in enumerate(lines, start=1):
        found = [(m.group(), m.span()) for m in re.finditer(r"\S+", line)]
        for i in range(0, len(found), 1000):
            part = found[i:i + 1000]
            expected.append((number, [w for w, _ in part], [o for _, o in part]))
    got = [(s.line, s.words, s.offsets) for s in rawtext.pretokenized_sentences(lines)]
    assert got == expected
