"""Hostile model files and hostile sizes: each reproduction below crashed
or misbehaved once.  Anything that could crash runs in a subprocess, so a
segfault fails the test instead of killing the run."""
import json
import os
import signal
import struct
import subprocess
import sys
import time
import zlib
from pathlib import Path

import numpy as np
import pytest

import fasttag
from fasttag import ModelFormatError, Tagger
from fasttag import files
from fasttag.model import modelfile
from fasttag._core.weights import WeightTable
from fasttag._core.sequence import MAX_TAGS, Search, transition_size

ROOT = Path(fasttag.__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parents[1] / "data"


def run_python(code, timeout=120):
    """Run ``code`` in a fresh interpreter that imports this fasttag."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    # cwd: not the source checkout, whose uncompiled fasttag/ would shadow the one under test
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=timeout, cwd=ROOT)


def assert_clean(proc, expect):
    assert proc.returncode == 0, f"exit {proc.returncode}\n{proc.stdout}\n{proc.stderr[-2000:]}"
    assert expect in proc.stdout, proc.stdout + proc.stderr[-2000:]


@pytest.fixture(scope="module")
def small_tagger():
    return Tagger.train(str(DATA / "sample.conllu"), epochs=2, verbose=False)


@pytest.fixture(scope="module")
def tagger_parts(small_tagger):
    return modelfile.loads(small_tagger.to_bytes())


def reload(parts):
    return fasttag.loads(modelfile.dumps(*parts))


def mutated(parts, header=None, arrays=None):
    h, a = parts
    h = json.loads(json.dumps(h))
    a = dict(a)
    h.update(header or {})
    a.update(arrays or {})
    return h, a


# ---------------------------------------------------------------- bug 1

def test_65536_tags_in_a_model_file_is_refused_before_allocating():
    # (T + 2) * T wrapped in C int at T = 65,536 to 131,072 entries: the
    # array below passed every shape check and tagging wrote T * T entries
    proc = run_python("""
import numpy as np, fasttag
from fasttag.model import modelfile
h, a = modelfile.read(fasttag.default_model_path("en"))
h["tags"] = [f"T{i}" for i in range(65536)]
a["transitions"] = np.zeros(131072, np.float32)
try:
    fasttag.loads(modelfile.dumps(h, a)).tag(["a"])
    print("LOADED")
except fasttag.ModelFormatError as exc:
    print("REFUSED", exc)
""")
    assert_clean(proc, "REFUSED")
    assert "65,536 tags" in proc.stdout and "GB" in proc.stdout


def test_training_65536_tags_is_refused_with_a_clear_error():
    proc = run_python("""
import fasttag
try:
    fasttag.Tagger.train([([f"w{i}"], [f"T{i}"]) for i in range(65536)], epochs=1, verbose=False)
    print("TRAINED")
except fasttag.FasttagError as exc:
    print("REFUSED", exc)
""")
    assert_clean(proc, "REFUSED")
    assert "maximum" in proc.stdout


def test_transition_size_is_computed_without_wrapping():
    assert transition_size(65536) == 65538 * 65536          # > 2**32
    assert transition_size(2**31) == (2**31 + 2) * 2**31


def test_the_largest_allowed_tag_set_decodes():
    # 64-bit index arithmetic all the way: T * T entries with T = MAX_TAGS
    T = MAX_TAGS
    trans = np.zeros(transition_size(T))
    trans[T * T + (T - 1)] = 1.0                  # start -> last tag
    search = Search(WeightTable(), trans, T)
    out = search.decode(np.zeros((1, 0), np.uint64), np.array([0, 1], np.int64))
    assert out.tolist() == [T - 1]


def test_search_refuses_too_many_tags():
    with pytest.raises(ValueError, match="maximum"):
        Search(WeightTable(), np.zeros(3), MAX_TAGS + 1)


# ---------------------------------------------------------------- bug 2

def test_repeated_tags_in_a_tag_dictionary_class_are_refused(tagger_parts):
    # build() reserves T + 1 candidates per token, then copied the class
    h, a = tagger_parts
    n_words = 5
    h2, a2 = mutated(tagger_parts, {"tagdict_classes": [[3] * 100_000],
                                    "tagdict_words": [f"w{i}" for i in range(n_words)]},
                     {"tagdict_class": np.zeros(n_words, np.int32)})
    with pytest.raises(ModelFormatError, match="ascending tag-id lists"):
        reload((h2, a2))


def test_repeated_tags_in_a_class_crashed_the_decoder_in_a_subprocess():
    proc = run_python(f"""
import numpy as np, fasttag
from fasttag.model import modelfile
t = fasttag.Tagger.train({str(DATA / "sample.conllu")!r}, epochs=1, verbose=False)
h, a = modelfile.loads(t.to_bytes())
h["tagdict_classes"] = [[3] * 100000]
h["tagdict_words"] = ["the", "a", "of"]
a["tagdict_class"] = np.zeros(3, np.int32)
try:
    fasttag.loads(modelfile.dumps(h, a)).tag(["the", "a", "of"] * 50)
    print("LOADED")
except fasttag.ModelFormatError as exc:
    print("REFUSED", exc)
""")
    assert_clean(proc, "REFUSED")


def test_search_refuses_classes_with_repeated_or_unsorted_tags():
    search = Search(WeightTable(), np.zeros(transition_size(4)), 4)
    with pytest.raises(ValueError, match="distinct"):
        search.set_candidates([0], [0, 3], [1, 1, 2])
    with pytest.raises(ValueError, match="distinct"):
        search.set_candidates([0], [0, 2], [2, 1])
    # a new class may start lower than the previous one ended
    assert search.set_candidates([0, 1], [0, 2, 4], [1, 3, 0, 2]) == 2


# ---------------------------------------------------------------- header values

@pytest.mark.parametrize("change, match", [
    ({"tags": []}, "at least one tag"),
    ({"tags": ["A", "A"]}, None),
    ({"tags": "NOUN"}, "tags"),
    ({"prune_k": 2**31}, None),
    ({"prune_k": -1}, "prune_k"),
    ({"prune_k": 1.5}, "prune_k"),
    ({"prune_k": True}, "prune_k"),
    ({"templates": ["word[99999999999]"]}, None),
    ({"templates": ["nosuchattribute[0]"]}, "unknown attribute"),
    ({"templates": [7]}, "templates"),
    ({"decoder": "beam"}, "decoder"),
    ({"tagdict_classes": [[0, 99]]}, None),
    ({"tagdict_classes": [[]]}, None),
    ({"tagdict_classes": {"a": 1}}, "tagdict_classes"),
    ({"training": []}, "training"),
])
def test_malformed_sequence_headers_raise_model_format_error(tagger_parts, change, match):
    parts = mutated(tagger_parts, change)
    if change.get("tags") == ["A", "A"]:
        parts[1]["transitions"] = np.zeros(transition_size(2), np.float32)
    with pytest.raises(ModelFormatError, match=match):
        reload(parts)


def test_a_loaded_model_saves_bytes_that_load_again(small_tagger):
    again = fasttag.loads(small_tagger.to_bytes())
    assert again.to_bytes() == small_tagger.to_bytes()
    assert again.tag(["The", "dog", "barked"]) == small_tagger.tag(["The", "dog", "barked"])


@pytest.mark.parametrize("name, value, match", [
    ("transitions", np.zeros(3, np.float32), "transition"),
    ("transitions", np.full(1, np.nan, np.float32), "transition"),
    ("allowed", np.zeros(3, np.uint8), "mask"),
    ("emit.labels", np.full(1, 7, np.int32), None),
    ("emit.keys", np.zeros(1, np.float64), "types"),
    ("emit.weights", np.full(1, np.inf, np.float32), None),
])
def test_malformed_sequence_arrays_raise_model_format_error(tagger_parts, name, value, match):
    with pytest.raises(ModelFormatError, match=match):
        reload(mutated(tagger_parts, arrays={name: value}))


# ---------------------------------------------------------------- the container

def container(header, table, payload):
    """A model file with this header and array table, every checksum valid."""
    full = dict(header, arrays=table)
    head = json.dumps(full).encode()
    head += b" " * ((-(20 + len(head))) % 8)
    body = struct.pack("<8sIQ", modelfile.MAGIC, modelfile.FORMAT_VERSION, len(head)) + head + payload
    return body + struct.pack("<I", zlib.crc32(body))


def spec(shape, offset=0, nbytes=0, crc=0, dtype="<f8", name="x"):
    return {"name": name, "dtype": dtype, "shape": shape, "offset": offset, "nbytes": nbytes,
            "crc32": crc}


@pytest.mark.parametrize("table", [
    [spec(["Infinity"])],
    [spec([float("inf")])],
    [spec([0, 2**63])],
    [spec([0] + [1] * 70)],
    [spec([1.5])],
    [spec([True])],
    [spec([0], offset=-8)],
    [spec([0], offset=2**70)],
    [spec([0], nbytes="8")],
    [spec([0]), spec([0])],
    ["not a dict"],
    [spec([0], dtype="|O")],
    [{"name": 3}],
])
def test_malformed_array_tables_raise_model_format_error(table):
    header = {"kind": "tagger"}
    for entry in table:
        if isinstance(entry, dict) and entry.get("shape") == ["Infinity"]:
            entry["shape"] = [float("inf")]
    with pytest.raises(ModelFormatError):
        modelfile.loads(container(header, table, b""))


def test_payload_size_must_match_the_array_table():
    data = np.arange(2, dtype="<f8").tobytes()
    good = container({"kind": "x"}, [spec([2], nbytes=16, crc=zlib.crc32(data))], data)
    assert modelfile.loads(good)[1]["x"].tolist() == [0.0, 1.0]
    longer = container({"kind": "x"}, [spec([2], nbytes=16, crc=zlib.crc32(data))], data + b"\0" * 8)
    with pytest.raises(ModelFormatError, match="size"):
        modelfile.loads(longer)


def test_load_refuses_a_file_descriptor_number():
    r, w = os.pipe()
    try:
        with pytest.raises(TypeError, match="path"):
            fasttag.load(r)
        os.fstat(r)                  # still open: load did not touch it
    finally:
        os.close(r)
        os.close(w)
    with pytest.raises(TypeError):
        fasttag.loads("not bytes")


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_loading_an_endless_device_stops_at_once():
    proc = run_python("""
import fasttag, resource
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
try:
    fasttag.load("/dev/zero")
except fasttag.ModelFormatError as exc:
    print("REFUSED", exc)
""", timeout=60)
    assert_clean(proc, "REFUSED")
    assert "/dev/zero" in proc.stdout


def test_a_pipe_is_refused_even_with_a_model_waiting_in_it(tmp_path, small_tagger):
    fifo = tmp_path / "model.fifo"
    os.mkfifo(fifo)
    data = small_tagger.to_bytes()
    proc = subprocess.Popen([sys.executable, "-c",
                             "import sys, time\n"
                             "f = open(sys.argv[1], 'wb')\n"
                             "f.write(sys.stdin.buffer.read()); f.flush()\n"
                             "time.sleep(30)\n", str(fifo)], stdin=subprocess.PIPE)
    try:
        proc.stdin.write(data)
        proc.stdin.close()
        with pytest.raises(ModelFormatError, match="named pipe.*not a regular file"):
            fasttag.load(fifo)          # only a regular file is a model (a FIFO may never be written)
    finally:
        proc.kill()
        proc.wait()


# ---------------------------------------------------------------- saving

def test_sigterm_during_save_leaves_no_temporary_file(tmp_path):
    code = f"""
import sys, numpy as np
from fasttag.model import modelfile
arrays = {{"x": np.random.default_rng(0).random(6_000_000)}}
print("ready", flush=True)
while True:
    modelfile.write({str(tmp_path / "m.ftm")!r}, {{"kind": "test"}}, arrays)
"""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for delay in (0.3, 0.7, 1.1):
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, cwd=ROOT)
        assert proc.stdout.readline() == b"ready\n"
        time.sleep(delay)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) in (143, -signal.SIGTERM)
        assert [p.name for p in tmp_path.iterdir() if p.name != "m.ftm"] == []
        if (tmp_path / "m.ftm").exists():
            assert modelfile.read(tmp_path / "m.ftm")[0]["kind"] == "test"


def _dead_pid():
    return subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()


def _machine_of_saves(folder):
    """The machine a save here writes into its temporary file's name
    (``.fasttag-PID@MACHINE-….tmp``), seen while the save is open."""
    with files.atomic_file(folder / "probe.txt", "w") as f:
        f.write("x")
        (name,) = [n for n in os.listdir(folder) if n.startswith(".fasttag-")]
    pid, at, rest = name[len(".fasttag-"):].partition("@")
    assert pid == str(os.getpid()) and at, name
    return rest.partition("-")[0]


@pytest.mark.skipif(not os.path.exists("/proc/sys/kernel/random/boot_id"), reason="needs Linux's boot id")
def test_temporaries_of_dead_writers_are_removed_by_the_next_save(tmp_path):
    dead = _dead_pid()
    ours = _machine_of_saves(tmp_path)
    stale = tmp_path / f".fasttag-{dead}@{ours}-abc123.tmp"
    stale.write_bytes(b"half a model")
    mine = tmp_path / f".fasttag-{os.getpid()}@{ours}-xyz.tmp"          # a live writer's: kept
    mine.write_bytes(b"in progress")
    other = tmp_path / "notes.tmp"                                   # not ours: kept
    other.write_bytes(b"x")
    modelfile.write(tmp_path / "m.ftm", {"kind": "test"}, {})
    assert not stale.exists()
    assert mine.exists() and other.exists()


def test_temporaries_of_other_machines_survive_a_save(tmp_path):
    """A folder shared by containers or over NFS: a process id that is dead
    here may be alive on the writer's machine, so its file is left alone;
    so is a file of the old name format, which names no machine."""
    dead = _dead_pid()
    ours = _machine_of_saves(tmp_path)
    foreign = "0123456789abcdef" if ours != "0123456789abcdef" else "fedcba9876543210"
    theirs = tmp_path / f".fasttag-{dead}@{foreign}-abc123.tmp"
    old_format = tmp_path / f".fasttag-{dead}-def456.tmp"
    for path in (theirs, old_format):
        path.write_bytes(b"in flight elsewhere")
    modelfile.write(tmp_path / "m.ftm", {"kind": "test"}, {})
    assert theirs.read_bytes() == old_format.read_bytes() == b"in flight elsewhere"


def test_save_leaves_a_program_sigterm_handler_in_place(tmp_path):
    def handler(signum, frame):
        pass
    old = signal.signal(signal.SIGTERM, handler)
    try:
        modelfile.write(tmp_path / "m.ftm", {"kind": "test"}, {})
        assert signal.getsignal(signal.SIGTERM) is handler
    finally:
        signal.signal(signal.SIGTERM, old)
    modelfile.write(tmp_path / "m.ftm", {"kind": "test"}, {})
    assert signal.getsignal(signal.SIGTERM) is old         # restored after the save


# ---------------------------------------------------------------- determinism

def _train_twice(train):
    first, second = train(), train()
    return first.to_bytes(), second.to_bytes()


@pytest.mark.parametrize("task", ["pos", "pos-mira", "seg", "ner"])
def test_identical_training_gives_identical_files(tmp_path, task, dev_copy):
    # timings (train_seconds, per-epoch history) stay on the object, out of the file
    from fasttag import Segmenter, SpanTagger
    trainers = {
        # dev: a copy of the training file (training refuses the file itself); not about held-out data
        "pos": lambda: Tagger.train(str(DATA / "sample.conllu"), dev=str(dev_copy(DATA / "sample.conllu")),
                                    epochs=3, seed=7, verbose=False),
        "pos-mira": lambda: Tagger.train(str(DATA / "sample.conllu"), epochs=2, seed=1,
                                         algorithm="mira", k=2, verbose=False),
        "seg": lambda: Segmenter.train(str(DATA / "sample_zh_train.txt"), epochs=2, seed=3, verbose=False),
        "ner": lambda: SpanTagger.train(str(DATA / "sample_ner.conll"), task="ner", epochs=2, seed=5,
                                        verbose=False, feature_columns=[1, 2], document_features=True),
    }
    a, b = _train_twice(trainers[task])
    assert a == b
    model = fasttag.loads(a)
    assert "train_seconds" not in modelfile.loads(a)[0].get("meta", {})
    model.save(tmp_path / "m.ftm")
    assert (tmp_path / "m.ftm").read_bytes() == a


def test_timings_stay_on_the_trained_object():
    t = Tagger.train(str(DATA / "sample.conllu"), epochs=2, verbose=False)
    assert t.meta["train_seconds"] > 0 and len(t.meta["history"]) == 2


def test_fasttag_load_opens_every_linear_estimator(tmp_path):
    from fasttag import linear
    X = [["w=the", "suf=he"], ["w=dog", "suf=og"], ["w=a"], ["w=cat", "suf=at"]]
    y = ["DET", "NOUN", "DET", "NOUN"]
    for name in ("Perceptron", "AveragedPerceptron", "PassiveAggressiveClassifier", "SGDClassifier"):
        est = getattr(linear, name)(max_iter=3, random_state=0).fit(X, y)
        est.save(tmp_path / f"{name}.ftm")
        back = fasttag.load(tmp_path / f"{name}.ftm")
        assert type(back) is type(est)
        assert list(back.predict(X)) == list(est.predict(X))
        assert type(fasttag.loads(est.to_bytes())) is type(est)
