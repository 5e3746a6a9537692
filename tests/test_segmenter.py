"""The Chinese word segmenter: valid output on any input, width
normalisation, protected runs, user dictionaries, storage, CLI, scores."""
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag import cli
from fasttag.text.metrics import score_segmentation
from fasttag import Segmenter
from fasttag.text.metrics import bmes_word_f1
from fasttag.text.schemes import bmes_ids

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLE = DATA / "sample_zh_train.txt"
USERDICT = DATA / "sample_userdict.txt"


@pytest.fixture(scope="module")
def seg():
    return Segmenter.train(SAMPLE, epochs=5, verbose=False, folds=5)


def check_valid(text, words):
    assert all(words), "no empty words"
    assert not any(ch.isspace() for w in words for ch in w), "whitespace is never part of a word"
    assert "".join(words) == "".join(text.split())


# ---------------------------------------------------------------- basics

def test_segments_training_sentence(seg):
    assert seg.segment("我们今天去北京参观博物馆。") == ["我们", "今天", "去", "北京", "参观", "博物馆", "。"]


def test_empty_and_whitespace_lines(seg):
    assert seg.segment("") == []
    assert seg.segment(" \t\u3000\n") == []
    out = list(seg.segment_lines(["我们", "", "  ", "他在大学", ""]))
    assert len(out) == 5
    assert out[1] == out[2] == out[4] == []
    check_valid("他在大学", out[3])


def test_whitespace_is_a_boundary(seg):
    # "北京" is a training word: a space inside it splits it
    words = seg.segment("我们去北 京")
    check_valid("我们去北 京", words)
    assert words[-1] == "京" and words[-2].endswith("北")
    # and a space never joins a word
    assert "".join(seg.segment("学 生")) == "学生" and len(seg.segment("学 生")) == 2


def test_odd_characters_never_crash(seg):
    text = "😀中国\x00\x07\U00020000\U0002A700人民\ud800\u200b\ufeff\uffff。"
    check_valid(text, seg.segment(text))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(
    st.text(min_size=0, max_size=30),
    st.text(alphabet="中国人民我们的北京大学学生在１２３4５ａＢc .,，。\u3000\t\n😀", max_size=40),
), min_size=1, max_size=6))
def test_property_valid_segmentation(lines):
    seg = _SEG_CACHE.setdefault("seg", Segmenter.train(SAMPLE, epochs=2, verbose=False, folds=2))
    out = list(seg.segment_lines(lines))
    assert len(out) == len(lines)
    for line, words in zip(lines, out):
        check_valid(line, words)
    # one line at a time gives the same as batched
    assert [seg.segment(line) for line in lines] == out


_SEG_CACHE = {}


# ---------------------------------------------------------------- normalisation and runs

def _fullwidth(text):
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" and c != "," else c for c in text)


def test_full_and_half_width_segment_alike(seg):
    half = "他在2000年用IBM电脑写了3.5万字,我们在1998年1月1日去了北京。"
    full = _fullwidth(half)
    assert full != half and len(full) == len(half)
    hw, fw = seg.segment(half), seg.segment(full)
    assert [len(w) for w in hw] == [len(w) for w in fw]
    check_valid(full, fw)            # the output keeps the input's characters
    assert "１９９８年" in fw and "1998年" in hw


def test_runs_are_never_split(seg):
    text = "我用iPhone12访问http://www.example.com/a?b=1和test.user@mail.example.org得到3.14%的结果"
    words = seg.segment(text)
    check_valid(text, words)
    joined = " ".join(words)
    for run in ("iPhone12", "http://www.example.com/a?b=1", "test.user@mail.example.org", "3.14%"):
        assert any(run in w for w in words), (run, joined)


def test_words_of_alphabets_are_never_split(seg):
    """Letters of any alphabet (accented Latin, Cyrillic, Greek, Hangul),
    combining marks included, are runs as ASCII letters are."""
    for model in (seg, fasttag.load("zh")):
        for word in ("Zürich", "naïve", "Straße", "Dvořák", "Москва", "αβγδ", "서울", "Zu\u0308rich", "שָׁלוֹם"):
            words = model.segment(f"他去{word}了")
            assert words[-1] == "了" and word in words, words


def test_a_script_written_without_spaces_is_segmented_not_protected():
    """Thai letters are no run: a Thai segmenter learns its words (with
    every alphabet protected it scored F1 0.06 on its own training data)."""
    import random
    rng = random.Random(0)
    words = ["ฉัน", "กิน", "ข้าว", "ที่", "บ้าน", "เขา", "ไป", "โรงเรียน"]
    data = [rng.sample(words, 5) for _ in range(100)]
    thai = Segmenter.train(data, epochs=5, verbose=False)
    assert thai.segment("ฉันกินข้าวที่บ้าน") == ["ฉัน", "กิน", "ข้าว", "ที่", "บ้าน"]
    assert thai.evaluate([" ".join(ws) for ws in data])["f1"] > 0.99


def test_runs_can_be_switched_off(seg):
    seg2 = Segmenter.from_bytes(seg.to_bytes())
    seg2.runs = False
    assert seg2.runs is None
    check_valid("abc123def", seg2.segment("abc123def"))
    seg2.runs = {"digits": True}
    assert seg2.runs == {"latin": False, "digits": True, "urls": False, "emails": False}
    with pytest.raises(ValueError):
        seg2.runs = {"numbers": True}


# ---------------------------------------------------------------- user dictionaries

def test_force_dictionary_words_come_out_whole(seg):
    rng = random.Random(7)
    vocab = ["区块链", "云计算", "人工智能", "深度学习", "北京", "大学生", "我们的", "a1"]
    filler = list("我们在北京大学学习人工的智能和云计算中心") + ["", " "]
    seg2 = Segmenter.from_bytes(seg.to_bytes())
    assert seg2.add_words(vocab, mode="force") == len(vocab)
    for _ in range(200):
        parts = [rng.choice(vocab) if rng.random() < 0.4 else rng.choice(filler) for _ in range(rng.randint(1, 12))]
        text = "".join(parts)
        words = seg2.segment(text)
        check_valid(text, words)
        stripped = "".join(text.split())
        # every occurrence overlapping no other occurrence must be a word
        occ = [(i, i + len(w)) for w in vocab for i in range(len(stripped)) if stripped.startswith(w, i)]
        # occurrences across whitespace do not count
        spans = set()
        pos = 0
        for w in words:
            spans.add((pos, pos + len(w)))
            pos += len(w)
        gaps = _gap_positions(text)
        for a, b in occ:
            if any(a < g < b for g in gaps):
                continue
            if any(x < b and a < y and (x, y) != (a, b) for x, y in occ):
                continue
            assert (a, b) in spans, (text, words, stripped[a:b])


def _gap_positions(text):
    """Offsets (in the text without whitespace) where whitespace was."""
    out, pos = set(), 0
    parts = text.split()
    for p in parts[:-1]:
        pos += len(p)
        out.add(pos)
    return out


def test_force_overlaps_by_weight_then_length(seg):
    seg2 = Segmenter.from_bytes(seg.to_bytes())
    seg2.add_words({"研究生": 1.0, "生命": 1.0, "起源": 1.0})
    assert seg2.segment("研究生命起源")[:1] == ["研究生"]     # longer wins
    seg2.clear_words()
    seg2.add_words({"研究生": 1.0, "生命": 5.0, "起源": 1.0})
    assert "生命" in seg2.segment("研究生命起源")               # heavier wins


def test_force_dictionary_file_and_feature_mode(seg, tmp_path):
    seg2 = Segmenter.from_bytes(seg.to_bytes())
    assert seg2.add_words(USERDICT, mode="force") == 4
    assert "区块链" in seg2.segment("我们研究区块链和云计算")
    assert "云计算" in seg2.segment("我们研究区块链和云计算")
    seg3 = Segmenter.from_bytes(seg.to_bytes())
    seg3.add_words(USERDICT, mode="feature")
    check_valid("我们研究区块链和云计算", seg3.segment("我们研究区块链和云计算"))
    with pytest.raises(ValueError):
        seg3.add_words(["x"], mode="maybe")
    bad = tmp_path / "bad.txt"
    bad.write_text("词 -1\n", encoding="utf-8")
    with pytest.raises(fasttag.InputError):
        seg3.add_words(bad)


def test_training_dictionary_is_stored(tmp_path):
    seg = Segmenter.train(SAMPLE, epochs=2, verbose=False, dictionary=USERDICT, folds=3)
    assert "区块链" in seg.train_dict
    path = tmp_path / "m.ftm"
    seg.save(path)
    again = fasttag.load(path)
    assert again.train_dict == seg.train_dict
    assert again.vocab == seg.vocab


# ---------------------------------------------------------------- storage

def test_save_load_roundtrip(seg, tmp_path):
    path = tmp_path / "seg.ftm"
    seg.save(path)
    loaded = fasttag.load(path)
    assert isinstance(loaded, Segmenter)
    text = ["他在大学学习计算机科学。", "１９９８年１月１日", ""]
    assert list(loaded.segment_lines(text)) == list(seg.segment_lines(text))
    assert loaded.to_bytes() == seg.to_bytes()
    assert fasttag.loads(seg.to_bytes()).segment(text[0]) == seg.segment(text[0])


def test_corrupt_header_is_rejected(seg):
    from fasttag.model import modelfile
    header, arrays = modelfile.loads(seg.to_bytes())
    header["featurizer"]["name"] = "words"
    with pytest.raises(fasttag.ModelFormatError):
        fasttag.loads(modelfile.dumps(header, arrays))


def test_pruning_keeps_a_working_model(seg):
    total = Segmenter.from_bytes(seg.to_bytes()).prune(0)
    seg2 = Segmenter.from_bytes(seg.to_bytes())
    kept = seg2.prune(0.01)         # in MIRA's units, the default algorithm's
    assert 0 < kept < total
    assert len(seg2.to_bytes()) < len(seg.to_bytes())
    check_valid("我们在北京", seg2.segment("我们在北京"))


def test_pruning_with_dev_reports_the_pruned_score(dev_copy):
    """A threshold is in the weights' own units (MIRA's are far smaller
    than the perceptron's): with a dev set, the pruned model is scored
    again, and a threshold that wipes out the model is a warning."""
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    dev = dev_copy(SAMPLE)
    kept = Segmenter.train(SAMPLE, dev=dev, epochs=3, verbose=False, prune=0.005)
    assert kept.meta["pruned_dev_score"] == pytest.approx(kept.evaluate(SAMPLE)["f1"])   # the pruned model's
    assert kept.meta["pruned_dev_score"] > 0.9
    with pytest.warns(UserWarning, match="option prune: .* lowered the dev score"):
        wiped = Segmenter.train(SAMPLE, dev=dev, epochs=3, verbose=False, prune=1e9)
    assert wiped.meta["pruned_dev_score"] < 0.5
    check_valid("我们在北京", wiped.segment("我们在北京"))


def test_cli_prune_warning_is_one_line(run_cli, tmp_path, dev_copy):
    model = tmp_path / "seg.ftm"
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    dev = dev_copy(SAMPLE)
    done = run_cli("train", "seg", SAMPLE, "-o", model, "--dev", dev, "--epochs", "2", "--quiet",
                   "--prune", "1e9")
    assert done.returncode == 0 and model.exists()
    lines = done.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fasttag: warning: --prune: "), lines
    done = run_cli("train", "seg", SAMPLE, "-o", model, "--dev", dev, "--epochs", "2", "--prune", "1e9")
    last = done.stderr.decode().strip().splitlines()[-1]     # the score of the model saved, not the unpruned one
    pruned = fasttag.load(model).meta["pruned_dev_score"]
    assert last.startswith("saved ") and last.endswith(f", {100 * pruned:.2f}% after pruning"), last


# ---------------------------------------------------------------- scores

def test_dev_scorer_matches_sighan_scorer():
    rng = random.Random(3)
    for _ in range(50):
        gold, pred = [], []
        for _ in range(rng.randint(1, 5)):
            text = "".join(rng.choice("甲乙丙丁戊己") for _ in range(rng.randint(1, 12)))
            gold.append(_random_split(text, rng))
            pred.append(_random_split(text, rng))
        expected = score_segmentation(gold, pred)["f1"]
        got = bmes_word_f1(_ids(pred), _ids(gold))
        assert got == pytest.approx(expected)


def _random_split(text, rng):
    words, cur = [], ""
    for ch in text:
        cur += ch
        if rng.random() < 0.5:
            words.append(cur)
            cur = ""
    return words + ([cur] if cur else [])


def _ids(sents):
    flat = bmes_ids([len(w) for ws in sents for w in ws])
    out, pos = [], 0
    for ws in sents:
        n = sum(map(len, ws))
        out.append(flat[pos:pos + n])
        pos += n
    return out


def test_evaluate_hand_computed(seg, tmp_path):
    # whatever the model predicts, scoring the gold against itself through
    # evaluate's machinery: build a gold file from the model's own output
    lines = ["我们今天去北京参观博物馆。", "他在大学学习计算机科学。"]
    pred = list(seg.segment_lines(lines))
    gold = tmp_path / "gold.txt"
    gold.write_text("\n".join("  ".join(ws) for ws in pred) + "\n", encoding="utf-8")
    r = seg.evaluate(gold)
    assert r["precision"] == r["recall"] == r["f1"] == 1.0
    assert r["chars"] == sum(map(len, lines)) and r["chars_per_second"] > 0
    # OOV relative to a given word list: only 我们 is in vocabulary
    r = seg.evaluate(gold, words=["我们"])
    n = sum(map(len, pred))
    assert r["oov_rate"] == pytest.approx((n - 1) / n)
    assert r["oov_recall"] == r["iv_recall"] == 1.0
    # every gold word in the word list: no OOV word, so no OOV recall (not 0%)
    r = seg.evaluate(gold, words=[w for ws in pred for w in ws])
    assert r["oov_rate"] == 0.0 and r["oov_recall"] is None and r["iv_recall"] == 1.0
    assert "OOV recall        n/a" in Segmenter.report(r)
    # completely wrong: every gold word joined with its neighbour
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("甲乙 丙丁\n", encoding="utf-8")
    seg2 = Segmenter.from_bytes(seg.to_bytes())
    seg2.add_words(["乙丙"], mode="force")
    r = seg2.evaluate(wrong, words=["甲乙"])
    assert r["precision"] == 0.0 and r["recall"] == 0.0 and r["f1"] == 0.0
    assert r["oov_rate"] == pytest.approx(0.5) and r["oov_recall"] == 0.0 and r["iv_recall"] == 0.0


# ---------------------------------------------------------------- CLI

def test_cli_train_segment_eval(tmp_path, capsys, dev_copy):
    model = tmp_path / "seg.ftm"
    # dev: a copy of the training file (training refuses the file itself); the test is not about held-out data
    assert cli.main(["train", "seg", str(SAMPLE), "-o", str(model), "--dev", str(dev_copy(SAMPLE)),
                     "--epochs", "3", "--quiet"]) == 0
    src = tmp_path / "in.txt"
    src.write_text("我们今天去北京\n\n他在大学学习区块链\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    assert cli.main(["segment", "-m", str(model), str(src), "-o", str(out), "--dict", str(USERDICT)]) == 0
    lines = out.read_text(encoding="utf-8").split("\n")
    assert lines[1] == "" and len(lines) == 4
    assert "区块链" in lines[2].split()
    assert "".join(lines[0].split()) == "我们今天去北京"
    capsys.readouterr()
    assert cli.main(["eval", str(model), str(SAMPLE), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    for key in ("precision", "recall", "f1", "oov_rate", "oov_recall", "iv_recall", "chars_per_second"):
        assert key in result
    assert result["f1"] > 0.9


def test_bundled_model():
    try:
        path = fasttag.default_model_path("zh")
    except fasttag.FasttagError:
        pytest.skip("the bundled Chinese model is not built")
    assert path.stat().st_size <= 15 * 1024 * 1024
    seg = fasttag.load(path)
    assert seg.segment("迈向充满希望的新世纪") == ["迈向", "充满", "希望", "的", "新", "世纪"]
    assert "People's Daily" in seg.meta.get("corpus", "")


# ---------------------------------------------------------------- real data

def test_people_daily_to_sighan_pku(shared_data):
    """3 epochs on all of PD 1998 train (no dev set: the last epoch is kept),
    scored on the SIGHAN 2005 PKU test.  The full recipe (12 epochs, best on
    dev) reaches about 96.0 F1 and 81 % OOV recall; the floors leave room
    for the shorter training."""
    seg = Segmenter.train(shared_data / "zh_pd1998" / "train.txt", epochs=3, folds=5, verbose=False)
    r = seg.evaluate(shared_data / "sighan2005" / "pku_test_gold.utf8",
                     words=shared_data / "sighan2005" / "pku_training_words.utf8")
    assert r["f1"] > 0.953, r
    assert r["oov_recall"] > 0.78, r
    # the half-width test text gives the same words as its full-width form
    raw = (shared_data / "sighan2005" / "pku_test.utf8").read_text(encoding="utf-8").splitlines()[:200]
    half = list(seg.segment_lines(raw))
    full = list(seg.segment_lines(_fullwidth(line) for line in raw))
    assert [[len(w) for w in ws] for ws in half] == [[len(w) for w in ws] for ws in full]


def test_a_very_long_line_is_segmented_in_pieces():
    """A line past LONG_LINE characters is cut after sentence ends, commas
    or whitespace (never inside a word) and its words joined again: nothing
    is lost, and ordinary lines are segmented whole, as before."""
    from fasttag.tasks import seg as segmod
    seg = fasttag.load("zh")
    sentence = "迈向充满希望的新世纪——一九九八年新年讲话。"
    line = sentence * (2 * segmod.LONG_LINE // len(sentence) + 3)
    pieces = list(segmod._pieces(line))
    assert len(pieces) >= 3 and all(len(p) <= segmod.LONG_LINE for p, _ in pieces)
    assert "".join(p for p, _ in pieces) == line and [last for _, last in pieces][-1] is True
    assert all(p.endswith("。") for p, last in pieces if not last)
    words = seg.segment(line)
    assert "".join(words) == line
    whole = seg._segment_batch([line])[0]        # the old, unbounded path
    assert words == whole
    short = ["迈向充满希望的新世纪", "", "一九九八年新年讲话"]
    assert list(seg.segment_lines(short)) == seg._segment_batch(short)
    no_breaks = "的" * (segmod.LONG_LINE + 17)
    assert "".join(seg.segment(no_breaks)) == no_breaks


def test_a_mark_stays_with_its_letter():
    """A combining accent, an emoji's joiners and skin tone never begin a
    word: they belong to the character before them."""
    seg = fasttag.load("zh")
    for text, word in [("咖啡Cafe\u0301很好", "Cafe\u0301"), ("我e\u0301你", "e\u0301"),
                       ("家庭👨\u200d👩\u200d👧很好", "👨\u200d👩\u200d👧"), ("好👍\U0001F3FD的", "👍\U0001F3FD")]:
        words = seg.segment(text)
        assert "".join(words) == text and word in words, words


@pytest.mark.parametrize("protected", ["1,000", "12:30", "https://example.com/path?q=1,2:3", "ＡＢ，ＣＤ"])
@pytest.mark.parametrize("at", [-7, -3, -1, 0, 1, 2])
def test_a_long_line_is_never_cut_inside_a_run_or_a_force_word(protected, at):
    """Whatever break character falls at the cut of a long line, a number,
    a URL or a word of the force dictionary stays whole, as in a short
    line (the cut used to fall after its comma or colon)."""
    from fasttag.tasks import seg as segmod
    seg = fasttag.load("zh")
    seg.add_words(["ＡＢ，ＣＤ"])
    filler = "我们今天去北京看看天安门" * (segmod.LONG_LINE // 10)
    head = filler[:segmod.LONG_LINE - len(protected) // 2 + at]      # the protected text straddles the cut
    line = head + "是" + protected + "了" + filler[:3000]
    assert len(line) > segmod.LONG_LINE
    words = seg.segment(line)
    assert "".join(words) == line and protected in words
    assert protected in seg.segment("是" + protected + "了")


def test_conllu_gives_the_tokens_as_written(tmp_path):
    """From CoNLL-U a segmenter learns the surface tokens: a multiword
    token's form ("zum"), not its words ("zu dem", text that never
    occurred), and a form holding a space is one word without it."""
    path = tmp_path / "mwt.conllu"
    path.write_text("# text = zum Park\n1-2\tzum\t_\t_\t_\t_\t_\t_\t_\t_\n1\tzu\tzu\tADP\t_\t_\t_\t_\t_\t_\n"
                    "2\tdem\tder\tDET\t_\t_\t_\t_\t_\t_\n3\tPark\tPark\tNOUN\t_\t_\t_\t_\t_\t_\n\n"
                    "1\tViệt Nam\t_\tPROPN\t_\t_\t_\t_\t_\t_\n2\tđẹp\t_\tADJ\t_\t_\t_\t_\t_\t_\n\n", encoding="utf-8")
    from fasttag.tasks.seg import read_words
    assert read_words(path) == [["zum", "Park"], ["ViệtNam", "đẹp"]]
    # runs off: a segmenter that keeps Latin runs whole could never split them, and refuses such gold
    model = Segmenter.train(path, epochs=2, verbose=False, runs=False)
    assert model.evaluate(path)["chars"] == len("zumPark") + len("ViệtNamđẹp")
    with pytest.raises(fasttag.errors.InputError, match="alphabets written with spaces"):
        Segmenter.train(path, epochs=2, verbose=False).evaluate(path)


def test_segmenter_overrides_no_training_entry_point():
    """What the segmenter loads from its options is a hook of the base
    class; ``train`` and ``untrained`` are the shared ones."""
    assert "train" not in Segmenter.__dict__ and "untrained" not in Segmenter.__dict__
    assert "_prepare_options" in Segmenter.__dict__


def test_untrained_reads_unlabeled_text_as_train_does(tmp_path):
    """``unlabeled`` (a path of raw text) becomes word candidate features for
    an online model too, stored in the model file."""
    text = tmp_path / "raw.txt"
    text.write_text("".join(line.replace(" ", "") for line in SAMPLE.read_text(encoding="utf-8").splitlines(True)),
                    encoding="utf-8")
    online = Segmenter.untrained(SAMPLE, unlabeled=str(text))
    trained = Segmenter.train(SAMPLE, epochs=1, unlabeled=str(text), verbose=False)
    assert online.model.featurizer.candidates is not None
    assert online.model.templates.names == trained.model.templates.names
    online.update(SAMPLE)
    again = fasttag.loads(online.to_bytes())
    assert list(again.segment_lines(["我们喜欢北京"])) == list(online.segment_lines(["我们喜欢北京"]))
