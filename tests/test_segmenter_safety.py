"""The segmenter against hostile model files, user mistakes and threads:
every malformed model is a ModelFormatError at load (never a crash or a
failure when used), every wrong argument a one-line error, user words of
any length work, add_words is atomic, and a shared segmenter gives the same
words from several threads as from one."""
import json
import os
import random
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag.model import modelfile
from fasttag.features.segmentation import CANDIDATE_CLASSES
from fasttag import Segmenter

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "sample_zh_train.txt"
TEXTS = ["研究生命起源", "他在大学学习计算机科学。", "我们研究区块链和云计算", "上海浦东开发与法制建设同步"]
# a 300-character word: more than 255, the length that overflowed the hash
LONG = ("研究生命起源" * 50)[:300]


def _env():
    """Run the fasttag under test (installed or in-tree), as test_tagger does."""
    return dict(os.environ, PYTHONPATH=str(Path(fasttag.__file__).resolve().parents[1]))


def _python(code, tmp_path, *args):
    return subprocess.run([sys.executable, "-c", code, *args], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300)


def _fasttag(args, tmp_path, **kw):
    return subprocess.run([sys.executable, "-m", "fasttag", *args], cwd=tmp_path, env=_env(),
                          capture_output=True, text=True, timeout=300, **kw)


@pytest.fixture(scope="module")
def zh():
    try:
        fasttag.default_model_path("zh")
    except fasttag.FasttagError:
        pytest.skip("the bundled Chinese model is not built")
    return fasttag.load("zh")


@pytest.fixture(scope="module")
def small():
    return Segmenter.train(SAMPLE, epochs=2, verbose=False, folds=2)


def _fresh(model):
    return Segmenter.from_bytes(model.to_bytes())


def _outputs(seg):
    return [seg.segment(t) for t in TEXTS + [LONG[:44], "我们" + LONG + "和大家"]]


# ---------------------------------------------------------------- long user words

def test_long_user_word_reproduction_in_subprocess(tmp_path):
    """The issue: a 300-character user word raised OverflowError and left
    the segmenter broken.  Now it is kept whole, and later calls work."""
    code = (
        "import fasttag, json\n"
        "seg = fasttag.load('zh')\n"
        f"long = {LONG!r}\n"
        "n = seg.add_words([long])\n"
        "m = seg.add_words(['究生命起'])\n"
        "print(json.dumps([n, m, seg.segment('我们' + long + '和大家'), seg.segment('研究生命起源')]))\n"
    )
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr
    n, m, words, later = json.loads(proc.stdout)
    assert (n, m) == (1, 1)
    assert LONG in words and "".join(words) == "我们" + LONG + "和大家"
    assert later == ["研", "究生命起", "源"]          # the second add_words took effect


@pytest.mark.parametrize("length", [8, 255, 256, 257, 1000, 5000])
def test_force_words_of_any_length_are_kept_whole(zh, length):
    """Force mode keeps a word whole whatever its length (lengths around 256
    are where the hash's length byte wraps)."""
    seg = _fresh(zh)
    word = ("研究生命起源" * 1000)[:length]
    seg.add_words([word])
    text = "我们" + word + "和大家，" + word
    words = seg.segment(text)
    assert words.count(word) == 2 and "".join(words) == text


def test_long_word_length_folding_makes_no_false_match(zh):
    """300 and 44 agree modulo 256: forcing the 300-character word must not
    force its 44-character prefix."""
    seg = _fresh(zh)
    before = seg.segment(LONG[:44])
    assert len(before) > 1
    seg.add_words([LONG])
    assert seg.segment(LONG[:44]) == before


def test_long_feature_words_are_accepted_and_change_nothing(zh):
    """Feature mode uses 2..7-character words; a longer one is no error."""
    seg = _fresh(zh)
    assert seg.add_words([LONG, "中" * 256], mode="feature") == 2
    assert _outputs(seg) == _outputs(zh)


# ---------------------------------------------------------------- add_words is atomic

def test_add_words_is_atomic_on_bad_input(zh, tmp_path):
    seg = _fresh(zh)
    seg.add_words(["学学习计"])
    before = _outputs(seg)
    # good words first, then a mistake: none of the good words is added
    with pytest.raises(TypeError, match="int"):
        seg.add_words(["究生命起", LONG, 42])
    bad = tmp_path / "user.txt"
    bad.write_text(f"究生命起 3\n{LONG}\n区块链和云 -1\n", encoding="utf-8")
    with pytest.raises(fasttag.InputError, match=r"user\.txt:3: "):
        seg.add_words(bad)
    with pytest.raises(fasttag.InputError):
        seg.add_words({"究生命起": 1.0, "北 京": 1.0})
    assert _outputs(seg) == before
    # and it keeps working: the next good call adds exactly its words
    assert seg.add_words(["究生命起"]) == 1
    assert seg.segment("研究生命起源") == ["研", "究生命起", "源"]
    assert "学学习计" in seg.segment("他在大学学习计算机科学。")


def test_add_words_is_atomic_when_building_fails(zh, monkeypatch):
    """An error while the word sets are built (out of memory) leaves the
    segmenter unchanged: the words are stored only once all is built."""
    import fasttag.tasks.seg as segmenter_module
    seg = _fresh(zh)
    seg.add_words(["学学习计"])
    before = _outputs(seg)

    def failing(*args, **kwargs):
        raise MemoryError("no memory for the word set")

    with monkeypatch.context() as m:
        m.setattr(segmenter_module, "WordSet", failing)
        for mode in ("force", "feature"):
            with pytest.raises(MemoryError):
                seg.add_words(["究生命起"], mode=mode)
        with pytest.raises(MemoryError):
            seg.clear_words()
    assert _outputs(seg) == before
    # the next build must not bring in the words of the failed call
    seg.add_words(["区块链和云"])
    assert seg.segment("研究生命起源") == zh.segment("研究生命起源")
    assert "区块链和云" in seg.segment("我们研究区块链和云计算")
    assert "学学习计" in seg.segment("他在大学学习计算机科学。")
    seg.clear_words()
    assert _outputs(seg) == _outputs(zh)


# ---------------------------------------------------------------- the CLI

def test_cli_bad_dictionary_is_one_line_and_exit_2(tmp_path):
    (tmp_path / "in.txt").write_text("我们研究区块链\n", encoding="utf-8")
    (tmp_path / "bad.txt").write_text(f"区块链 10\n{LONG}\n云计算 5 n\n深度学习 -3\n", encoding="utf-8")
    (tmp_path / "bad_utf8.txt").write_bytes("区块链\n".encode() + b"\xff\xfe\n")
    for args, where in ((["--dict", "bad.txt"], "bad.txt:4: "),
                        (["--dict", "bad_utf8.txt"], "bad_utf8.txt:2: "),
                        (["--dict", "missing"], "missing: ")):
        proc = _fasttag(["segment", *args, "in.txt"], tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("fasttag: error: " + where), proc.stderr
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
        assert proc.stdout == ""


def test_cli_long_dictionary_word_is_kept_whole(tmp_path):
    (tmp_path / "in.txt").write_text(f"我们研究区块链\n他说{LONG}好\n", encoding="utf-8")
    (tmp_path / "user.txt").write_text(f"区块链 10\n{LONG} 2\n", encoding="utf-8")
    proc = _fasttag(["segment", "--dict", "user.txt", "in.txt"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.split("\n")
    assert "区块链" in lines[0].split()
    assert LONG in lines[1].split()


def test_cli_unreadable_files_are_one_line_errors(tmp_path):
    (tmp_path / "in.txt").write_text("我们\n", encoding="utf-8")
    for args in (["segment", "nofile.txt"],
                 ["segment", "in.txt", "-o", "no/such/folder/out.txt"],
                 ["train", "seg", "nofile.txt", "-o", "m.ftm", "--quiet"]):
        proc = _fasttag(args, tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert proc.stderr.startswith("fasttag: error: ") and proc.stderr.count("\n") == 1, proc.stderr


# ---------------------------------------------------------------- hostile model files

def test_bundled_model_with_huge_candidate_classes_is_rejected_in_subprocess(tmp_path):
    """The issue's reproduction: every candidate class replaced by 100,000
    copies of tag 3, re-saved with valid checksums.  It aborted with
    realloc(): invalid next size when used; now loading refuses it."""
    code = (
        "import fasttag\n"
        "from fasttag.model import modelfile\n"
        "header, arrays = modelfile.read(fasttag.default_model_path('zh'))\n"
        "header['tagdict_classes'] = [[3] * 100_000 for _ in header['tagdict_classes']]\n"
        "open('bad.ftm', 'wb').write(modelfile.dumps(header, arrays))\n"
        "try:\n"
        "    seg = fasttag.load('bad.ftm')\n"
        "except fasttag.ModelFormatError as exc:\n"
        "    print('rejected:', exc)\n"
        "else:\n"
        "    print('loaded', seg.segment('我爱 北京天安门，用iPhone12上网'))\n"
    )
    try:
        fasttag.default_model_path("zh")
    except fasttag.FasttagError:
        pytest.skip("the bundled Chinese model is not built")
    proc = _python(code, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.startswith("rejected: ") and "bad.ftm: " in proc.stdout
    assert "candidate class" in proc.stdout and proc.stdout.count("\n") == 1
    # the command line says so in one line too
    cli = _fasttag(["segment", "-m", "bad.ftm"], tmp_path, input="我爱北京\n")
    assert cli.returncode == 2 and cli.stderr.count("\n") == 1 and "candidate class" in cli.stderr


def _set(path, value):
    def change(header, arrays):
        d = header
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return change


def _delete_array(name):
    return lambda header, arrays: arrays.pop(name)


def _array(name, value):
    def change(header, arrays):
        arrays[name] = value(arrays[name]) if callable(value) else value
    return change


def _words(text):
    return np.frombuffer(text.encode("utf-8"), dtype=np.uint8).copy()


CLASSES = [list(c) for c in CANDIDATE_CLASSES]      # what a saved segmenter holds

HOSTILE = {
    "too few classes": _set(["tagdict_classes"], CLASSES[:-1]),
    "too many classes": _set(["tagdict_classes"], CLASSES + [[0]]),
    "no classes": _set(["tagdict_classes"], []),
    "classes missing": lambda h, a: h.pop("tagdict_classes"),
    "huge class": _set(["tagdict_classes"], [[3] * 100_000] + CLASSES[1:]),
    "repeated tag": _set(["tagdict_classes"], [c + c for c in CLASSES]),
    "descending tags": _set(["tagdict_classes"], [sorted(c, reverse=True) for c in CLASSES]),
    "tag out of range": _set(["tagdict_classes"], [[4]] + CLASSES[1:]),
    "negative tag": _set(["tagdict_classes"], [[-1]] + CLASSES[1:]),
    "empty class": _set(["tagdict_classes"], [[]] + CLASSES[1:]),
    "classes reordered": _set(["tagdict_classes"], CLASSES[::-1]),
    "float tags": _set(["tagdict_classes"], [[float(t) for t in c] for c in CLASSES]),
    "bool tags": _set(["tagdict_classes"], [[True]] + CLASSES[1:]),
    "str tags": _set(["tagdict_classes"], [[str(t) for t in c] for c in CLASSES]),
    "classes a string": _set(["tagdict_classes"], "12"),
    "tags a string": _set(["tags"], "BMES"),
    "five tags": _set(["tags"], ["B", "M", "E", "S", "X"]),
    "tags reordered": _set(["tags"], ["S", "M", "E", "B"]),
    "featurizer a list": _set(["featurizer"], ["chars"]),
    "featurizer a string": _set(["featurizer"], "chars"),
    "featurizer missing": lambda h, a: h.pop("featurizer"),
    "max_word float": _set(["featurizer", "max_word"], 7.0),
    "max_word other": _set(["featurizer", "max_word"], 8),
    "runs a list": _set(["featurizer", "runs"], ["latin"]),
    "runs unknown kind": _set(["featurizer", "runs"], {"numbers": True}),
    "runs not bool": _set(["featurizer", "runs"], {"latin": "no"}),
    "runs number": _set(["featurizer", "runs"], {"latin": 1}),
    "meta a list": _set(["meta"], [["a", 1]]),
    "meta a string": _set(["meta"], "x"),
    "meta a number": _set(["meta"], 3),
    "training a list": _set(["training"], [1]),
    "greedy decoder": _set(["decoder"], "greedy"),
    "decoder a list": _set(["decoder"], ["viterbi"]),
    "prune_k 2": _set(["prune_k"], 2),
    "prune_k true": _set(["prune_k"], True),
    "prune_k huge": _set(["prune_k"], 2 ** 70),
    "a tag dictionary": _set(["tagdict_words"], ["北京"]),
    "templates a string": _set(["templates"], "c[0]"),
    "templates not names": _set(["templates"], [1, 2]),
    "template offset past int32": _set(["templates"], ["c[99999999999]"]),
    "template unknown attribute": _set(["templates"], ["word[0]"]),
    "allowed missing": _delete_array("allowed"),
    "allowed everything": _array("allowed", lambda a: np.ones_like(a)),
    "allowed float": _array("allowed", lambda a: a.astype(np.float64) / 2),
    "allowed wrong size": _array("allowed", lambda a: a[:-1]),
    "transitions missing": _delete_array("transitions"),
    "emission label out of range": _array("emit.labels", lambda a: a + 4),
}
for _name in ("vocab", "train_dict"):
    HOSTILE.update({
        f"{_name} as floats": _array(_name, np.array([229.0, 140.5, 151.0])),
        f"{_name} as int64": _array(_name, lambda a: a.astype(np.int64) + 256),
        f"{_name} 2-d": _array(_name, np.zeros((2, 3), dtype=np.uint8) + 65),
        f"{_name} not UTF-8": _array(_name, np.array([0xFF, 0xFE], dtype=np.uint8)),
        f"{_name} empty word": _array(_name, _words("北京\n\n上海")),
        f"{_name} word with a space": _array(_name, _words("北京\n上 海")),
    })


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_model_is_rejected_at_load(small, name, tmp_path):
    header, arrays = modelfile.loads(small.to_bytes())
    header = json.loads(json.dumps(header))
    arrays = dict(arrays)
    if "train_dict" in name:
        arrays["train_dict"] = _words("区块链\n云计算")
    HOSTILE[name](header, arrays)
    data = modelfile.dumps(header, arrays)
    with pytest.raises(fasttag.ModelFormatError) as info:
        fasttag.loads(data)
    assert "\n" not in str(info.value)
    with pytest.raises(fasttag.ModelFormatError):
        Segmenter.from_bytes(data)
    path = tmp_path / "hostile.ftm"
    path.write_bytes(data)
    with pytest.raises(fasttag.ModelFormatError, match="hostile.ftm: "):
        fasttag.load(path)


GOOD = {
    "as saved": lambda h, a: None,
    "runs null": _set(["featurizer", "runs"], None),
    "some runs": _set(["featurizer", "runs"], {"digits": True}),
    "no meta": lambda h, a: h.pop("meta"),
    "no training info": lambda h, a: h.pop("training"),
    "no vocab": _delete_array("vocab"),
    "long dictionary words": _array("train_dict", _words("区块链\n" + LONG + "\n" + "中" * 256)),
    "surrogate in a word": _array("vocab", np.frombuffer("北京\n\ud800中".encode("utf-8", "surrogatepass"),
                                                         dtype=np.uint8).copy()),
}


@pytest.mark.parametrize("name", sorted(GOOD))
def test_model_that_loads_segments_evaluates_and_saves(small, name):
    """The other half of the contract: whatever loads also works."""
    header, arrays = modelfile.loads(small.to_bytes())
    header = json.loads(json.dumps(header))
    arrays = dict(arrays)
    GOOD[name](header, arrays)
    seg = fasttag.loads(modelfile.dumps(header, arrays))
    text = "我们在北京大学 学习iPhone12和3.14%的区块链"
    words = seg.segment(text)
    assert "".join(words) == "".join(text.split()) and all(words)
    assert seg.evaluate(["我们 在 北京", "学习"])["f1"] >= 0
    again = fasttag.loads(seg.to_bytes())
    assert again.segment(text) == words and again.to_bytes() == seg.to_bytes()


def test_random_header_mutations_never_crash(small, tmp_path):
    """Any JSON value in any header field: a ModelFormatError at load, or a
    model that segments, evaluates and saves.  Run in a subprocess so that
    a crash fails this test instead of killing the test run."""
    path = tmp_path / "small.ftm"
    small.save(path)
    code = r'''
import json, random, sys
import fasttag
from fasttag.model import modelfile
from fasttag.features.segmentation import CANDIDATE_CLASSES
header, arrays = modelfile.read(sys.argv[1])
rng = random.Random(11)
VALUES = [None, True, False, 0, 1, -1, 7, 2 ** 70, 1.5, float("nan"), "", "x", "viterbi", "chars", [], [1], [[3]],
          ["B", "M", "E", "S"], {}, {"latin": True}, {"name": "chars"}, [[3] * 1000]]

def leaves(node, path=()):
    yield path
    if isinstance(node, dict):
        for k, v in node.items():
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node[:3]):
            yield from leaves(v, path + (i,))

paths = [p for p in leaves(header) if p]
bad = []
rejected = 0
for trial in range(300):
    h = json.loads(json.dumps(header))
    p = rng.choice(paths)
    d = h
    for k in p[:-1]:
        d = d[k]
    d[p[-1]] = rng.choice(VALUES)
    try:
        seg = fasttag.loads(modelfile.dumps(h, arrays))
    except fasttag.ModelFormatError:
        rejected += 1
        continue
    except Exception as exc:
        bad.append(f"load {p}: {type(exc).__name__}: {exc}")
        continue
    try:
        words = seg.segment("我们 在北京iPhone12")
        assert "".join(words) == "我们在北京iPhone12", words
        seg.evaluate(["我们 在 北京"])
        fasttag.loads(seg.to_bytes()).segment("我们")
    except Exception as exc:
        bad.append(f"use {p}: {type(exc).__name__}: {exc}")
print(json.dumps({"bad": bad, "rejected": rejected}))
'''
    proc = _python(code, tmp_path, str(path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    result = json.loads(proc.stdout)
    assert result["bad"] == []
    assert result["rejected"] > 50          # the mutations do reach the checks


def test_bundled_model_round_trips(zh):
    again = fasttag.loads(zh.to_bytes())
    assert [again.segment(t) for t in TEXTS] == [zh.segment(t) for t in TEXTS]


# ---------------------------------------------------------------- wrong argument types

@pytest.mark.parametrize("value, says", [
    (["我爱北京"], "not list"), (None, "not NoneType"), (123, "not int"), (b"\xe6\x88\x91", "not bytes"),
])
def test_segment_rejects_non_str(small, value, says):
    with pytest.raises(TypeError, match=says):
        small.segment(value)


def test_segment_lines_rejects_wrong_types(small):
    with pytest.raises(TypeError, match="use segment"):
        small.segment_lines("我爱北京")            # a str would segment character by character
    with pytest.raises(TypeError, match="NoneType"):
        small.segment_lines(None)
    with pytest.raises(TypeError, match="line 2 takes a str, not int"):
        list(small.segment_lines(["我们", 5]))
    with pytest.raises(TypeError, match="line 1 .*bytes"):
        list(small.segment_lines([b"abc"]))


def test_add_words_rejects_wrong_types(small, tmp_path):
    seg = _fresh(small)
    with pytest.raises(TypeError, match="not int"):
        seg.add_words(["区块链", 7])
    with pytest.raises(TypeError, match="not int"):
        seg.add_words({1: 2.0})
    with pytest.raises(TypeError, match="not NoneType"):
        seg.add_words(None)
    with pytest.raises(TypeError, match="not float"):
        seg.add_words(3.5)
    with pytest.raises(fasttag.InputError, match="whitespace"):
        seg.add_words({"北 京": 1.0})
    with pytest.raises(fasttag.InputError, match="cannot read"):
        seg.add_words(tmp_path / "no" / "such" / "dict.txt")     # a Path is a file: a missing one
    assert seg.user_words == {"force": {}, "feature": {}}
    words = tmp_path / "words"
    words.write_text("区块链\n", encoding="utf-8")
    assert seg.add_words(words) == 1               # a Path, even without a dot
    assert seg.add_words(str(words)) == 1          # a str is one word, never a path
    assert str(words) in seg.user_words["force"]


def test_train_rejects_wrong_types(small):
    with pytest.raises(TypeError, match="NoneType"):
        Segmenter.train(None, epochs=1, verbose=False)
    with pytest.raises(TypeError, match="sentence 2 is a int"):
        Segmenter.train(["我们 在", 5], epochs=1, verbose=False)
    with pytest.raises(TypeError, match="sentence 1 holds a int"):
        Segmenter.train([["我们", 3]], epochs=1, verbose=False)
    with pytest.raises(TypeError, match="dev data"):
        Segmenter.train(["我们 在"], dev=[None], epochs=1, verbose=False)
    with pytest.raises(TypeError, match="runs"):
        Segmenter.train(["我们 在"], runs="yes", epochs=1, verbose=False)
    with pytest.raises(TypeError):
        Segmenter.train(["我们 在"], dictionary=[b"x"], epochs=1, verbose=False)
    seg = _fresh(small)
    with pytest.raises(TypeError, match="True or False"):
        seg.runs = {"latin": "no"}


def test_lone_surrogate_is_an_ordinary_character(small):
    text = "我们\ud800在\udfff北京"
    words = small.segment(text)
    assert "".join(words) == text
    assert list(small.segment_lines([text, "\ud83d"])) == [words, ["\ud83d"]]


# ---------------------------------------------------------------- threads

def test_shared_segmenter_from_threads_matches_single_thread(zh):
    """One segmenter used by 4 threads at once (the decoder runs without
    the GIL) gives exactly the words a fresh single-threaded one gives."""
    shared = _fresh(zh)
    reference = _fresh(zh)
    for seg in (shared, reference):
        seg.add_words({"区块链": 1.0, "云计算": 2.0, "人工智能技术": 1.0})
    pieces = SAMPLE.read_text(encoding="utf-8").split() + [
        "iPhone12", "3.14%", "１９９８年", " ", "区块链", "云计算", "😀", "http://a.cn/x", "人工智能技术", "\ud800"]
    rng = random.Random(5)
    jobs = [["".join(rng.choice(pieces) for _ in range(rng.randint(1, 25))) for _ in range(rng.randint(1, 12))]
            for _ in range(160)]
    expected = [list(reference.segment_lines(job)) for job in jobs]
    barrier = threading.Barrier(4)
    results, errors = {}, []

    def work(k):
        try:
            barrier.wait()
            for i in range(k, len(jobs), 4):
                results[i] = list(shared.segment_lines(jobs[i])) if i % 4 else [shared.segment(t) for t in jobs[i]]
        except BaseException as exc:        # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == len(jobs)
    assert [i for i in range(len(jobs)) if results[i] != expected[i]] == []
