"""Text in a script the model was not trained on is tagged, with one
warning line: Chinese given to the English tagger, German to the Chinese
segmenter.  The model's scripts come from the words it already holds; text
in its own script, or mixed text with a few foreign words, gives none."""
import warnings
from pathlib import Path

import pytest

import fasttag
from fasttag.text import scripts

ZH = "迈向充满希望的新世纪"
ZH_TEXT = "我们今天去北京。\n他在大学学习经济，明年毕业。\n中国人民银行发布了新的报告。\n"
DE_TEXT = ("Der Hund bellt laut, und die Katze schläft im Garten.\n"
           "Heute ist ein schöner Tag in Berlin, sagte die Lehrerin.\n")
EN_TEXT = "The dog barks at the postman every morning.\nShe said that it was a fine day in London.\n"
# mostly one script, a few words of another
ZH_MIXED = "我们在大学学习Python和Linux，老师说这门课很有意思。\n"
EN_MIXED = "We had dinner at 北京饭店 last night, and the duck was excellent as always.\n"


def warning_lines(result):
    return [line for line in result.stderr.decode("utf-8", "replace").splitlines()
            if line.startswith("fasttag: warning: ")]


def test_chinese_to_the_english_tagger_warns_and_still_tags(run_cli):
    r = run_cli("tag", input=(ZH + "\n").encode("utf-8"))
    assert r.returncode == 0, r.stderr
    lines = r.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1 and lines[0].startswith("fasttag: warning: "), lines
    assert "Han" in lines[0] and "--" not in lines[0]
    assert r.stdout.strip()                         # the output is still written


def test_german_to_the_chinese_segmenter_warns_and_still_segments(run_cli, tmp_path):
    text = tmp_path / "text.txt"
    text.write_text(DE_TEXT, encoding="utf-8")
    out = tmp_path / "out.txt"
    r = run_cli("segment", text, "-o", out)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.decode("utf-8").splitlines()
    assert len(lines) == 1 and lines[0].startswith("fasttag: warning: ") and "Latin" in lines[0], lines
    assert "Hund" in out.read_text(encoding="utf-8")


@pytest.mark.parametrize("command,text", [
    ("tag", EN_TEXT), ("segment", ZH_TEXT), ("segment", ZH_MIXED), ("tag", EN_MIXED), ("ner", EN_TEXT),
    ("tag", "a 1 2 3 ...\n"),                  # too few letters to say
], ids=["en-tag", "zh-segment", "zh-mixed-segment", "en-mixed-tag", "en-ner", "few-letters"])
def test_text_in_the_models_script_gives_no_warning(run_cli, command, text):
    r = run_cli(command, input=text.encode("utf-8"))
    assert r.returncode == 0, r.stderr
    assert warning_lines(r) == [], r.stderr


def test_only_the_opening_of_a_large_input_is_looked_at(run_cli, tmp_path):
    """English text after a long Chinese opening: the opening decides."""
    text = tmp_path / "big.txt"
    text.write_text(ZH_TEXT * 200 + EN_TEXT * 2000, encoding="utf-8")
    r = run_cli("segment", text, "-o", tmp_path / "out.txt")
    assert r.returncode == 0 and warning_lines(r) == [], r.stderr
    assert len(scripts.opening_text(text)) <= scripts.SAMPLE_BYTES


def test_python_warns_with_a_user_warning(tmp_path):
    import io
    tagger, seg = fasttag.load("en"), fasttag.load("zh")
    with pytest.warns(UserWarning, match="Han script") as caught:
        tagger.tag_file(io.BytesIO(ZH.encode("utf-8")), io.StringIO())
    assert not any("--" in str(w.message) for w in caught)
    de = tmp_path / "de.txt"
    de.write_text(DE_TEXT, encoding="utf-8")
    out = io.StringIO()
    with pytest.warns(UserWarning, match="Latin script"):
        seg.tag_file(de, out)
    assert "Hund" in out.getvalue()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tagger.tag_file(io.BytesIO(EN_TEXT.encode("utf-8")), io.StringIO())
        seg.tag_file(io.BytesIO(ZH_TEXT.encode("utf-8")), io.StringIO())


def test_a_stream_is_peeked_not_consumed():
    import io
    stream = io.BufferedReader(io.BytesIO(ZH_TEXT.encode("utf-8")))
    assert scripts.opening_text(stream) == ZH_TEXT
    assert stream.read().decode("utf-8") == ZH_TEXT
    seekable = io.BytesIO(b"abc" + ZH_TEXT.encode("utf-8"))
    seekable.read(3)
    assert scripts.opening_text(seekable) == ZH_TEXT and seekable.tell() == 3


def test_undecodable_or_cut_openings():
    import io
    gbk = io.BytesIO(ZH_TEXT.encode("gbk"))
    assert scripts.opening_text(gbk) is None                    # not UTF-8: no guess
    assert scripts.opening_text(gbk, "gbk") == ZH_TEXT
    cut = io.BytesIO("北京".encode("utf-8")[:-1])
    assert scripts.opening_text(cut) == "北"                     # a character cut at the end is left out


@pytest.mark.parametrize("ch,script", [("a", "Latin"), ("Ａ", "Latin"), ("é", "Latin"), ("北", "Han"),
                                       ("я", "Cyrillic"), ("ب", "Arabic"), ("の", "Kana"), ("カ", "Kana"),
                                       ("한", "Hangul"), ("α", "Greek"), ("1", None), (",", None), (" ", None)])
def test_script_of(ch, script):
    assert scripts.script_of(ch) == script


def test_a_model_without_a_word_table_is_not_checked():
    """A model that cannot tell its words (a tokenizer) never warns."""
    assert scripts.foreign_script(ZH_TEXT, lambda words: None) is None
    assert scripts.foreign_script(ZH_TEXT, lambda words: [False] * len(words)) is not None
    assert scripts.foreign_script(ZH_TEXT, lambda words: [True] * len(words)) is None


def test_the_bundled_models_know_their_scripts():
    tagger, seg, ner = fasttag.load("en"), fasttag.load("zh"), fasttag.load("en-ner")
    assert scripts.foreign_script(ZH_TEXT, seg._known_words) is None
    assert "Latin" in scripts.foreign_script(DE_TEXT, seg._known_words)
    for model in (tagger, ner):
        assert scripts.foreign_script(EN_TEXT, model._known_words) is None
        assert scripts.foreign_script(DE_TEXT, model._known_words) is None      # the same script
        assert "Han" in scripts.foreign_script(ZH_TEXT, model._known_words)


def test_a_toy_vocabulary_is_not_judged():
    """A model of a few sentences misses the words of any text: no warning."""
    data = Path(__file__).resolve().parents[1] / "data"
    seg = fasttag.Segmenter.train(data / "sample_zh_train.txt", epochs=1, verbose=False)
    tagger = fasttag.Tagger.train(data / "sample.conllu", epochs=1, verbose=False)
    assert seg._known_words(["北京"]) is None and tagger._known_words(["dog"]) is None
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        import io
        seg.tag_file(io.BytesIO(DE_TEXT.encode("utf-8")), io.StringIO())


def test_comment_lines_are_not_the_text(run_cli, tmp_path):
    """A CoNLL-U file of comments only is an error, with no warning before it."""
    comments = tmp_path / "c.conllu"
    comments.write_text("# newdoc id = a\n# sent_id = 1\n# text = Der Hund bellt laut im Garten.\n",
                        encoding="utf-8")
    r = run_cli("segment", comments)
    assert r.returncode == 2 and warning_lines(r) == [], r.stderr


@pytest.mark.parametrize("to", [[], ["--to", "conllu"], ["--json"]], ids=["tagged", "conllu", "json"])
def test_the_ud_pipeline_warns_once_and_still_tags(run_cli, to):
    """A pipeline's models share one check: one warning, not one per tagger."""
    r = run_cli("tag", "-m", "en-ud", *to, input=ZH_TEXT.encode("utf-8"))
    assert r.returncode == 0, r.stderr
    lines = warning_lines(r)
    assert len(lines) == 1 and "Han" in lines[0], r.stderr
    assert "我" in r.stdout.decode("utf-8")
    r = run_cli("tag", "-m", "en-ud", *to, input=EN_TEXT.encode("utf-8"))
    assert r.returncode == 0 and warning_lines(r) == [], r.stderr


def test_in_memory_calls_warn_once_per_script():
    tagger, seg, ud = fasttag.load("en"), fasttag.load("zh"), fasttag.load("en-ud")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tagger.tag_text(EN_TEXT)                    # call 1: Latin, known
    with pytest.warns(UserWarning, match="Han script") as caught:
        tagger.tag_sents([list(ZH)])                # call 2: Han
        tagger.tag_sents([list(ZH_TEXT)])           # call 3 is not looked at; Han is judged already
        tagger.tag_text(ZH_TEXT)                    # call 4: Han, judged already
    assert len([w for w in caught if issubclass(w.category, UserWarning)]) == 1
    with pytest.warns(UserWarning, match="Latin script"):
        assert "Hund" in seg.segment(DE_TEXT)
    with pytest.warns(UserWarning, match="Latin script"):
        assert list(fasttag.load("zh").segment_lines(DE_TEXT.splitlines()))
    with pytest.warns(UserWarning, match="Han script") as caught:
        assert "我" in ud.to_conllu(ZH_TEXT)
    assert len(caught) == 1
    ner = fasttag.load("en-ner")
    with pytest.warns(UserWarning, match="Han script"):
        ner.tag_sents([list(ZH_TEXT)])


def test_in_memory_texts_are_looked_at_on_calls_1_2_4_8_only():
    """Each text of another script, so each judged call asks the model."""
    texts = ["The dog barks at the postman", "我们今天去北京他在大学学习经济", "Собака лает на почтальона утром",
             "Ο σκύλος γαβγίζει τον ταχυδρόμο", "الكلب ينبح على ساعي البريد صباحا", "개가 아침마다 우체부에게 짖는다",
             "いぬがあさゆうびんやさんにほえる", "הכלב נובח על הדוור בכל בוקר", "कुत्ता हर सुबह डाकिये पर भौंकता है",
             "Ang aso ay tumatahol sa kartero"]
    asked = []

    def known(words):
        asked.append(words)
        return [True] * len(words)
    check = scripts.ScriptCheck(known)
    for text in texts:
        check.sampled([text])
    assert len(asked) == 4                                     # calls 1, 2, 4 and 8
    assert [scripts.main_script(" ".join(w))[0] for w in asked] == ["Latin", "Han", "Greek", "Hebrew"]


def test_a_file_is_judged_by_its_opening_alone():
    """English text after a Chinese-free opening: the sentences tagged from
    the file are not sampled again (the opening decided)."""
    import io
    tagger = fasttag.load("en")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tagger.tag_file(io.BytesIO((EN_TEXT * 200 + ZH_TEXT * 50).encode("utf-8")), io.StringIO())


@pytest.mark.parametrize("text", ["是https://example.com/path?q=1,2:3了", "请发邮件到 someone.else@example.com 谢谢",
                                  "我喜欢 #fasttag 和 @someone_else"])
def test_urls_addresses_and_mentions_are_not_the_texts_script(text):
    """A Chinese sentence citing a web address is Chinese text."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fasttag.load("zh").segment(text)
    assert scripts.main_script(text) is None or scripts.main_script(text)[0] == "Han"


def test_the_annotation_columns_of_conllu_are_not_the_text(run_cli, tmp_path):
    """A Chinese treebank's UPOS, DEPREL and MISC are Latin letters; its forms are the text."""
    rows = [("我们", "PRON", "nsubj"), ("今天", "NOUN", "obl"), ("去", "VERB", "root"), ("北京", "PROPN", "obj"),
            ("。", "PUNCT", "punct")]
    sentence = "".join(f"{i}\t{w}\t{w}\t{u}\t_\t_\t{0 if d == 'root' else 3}\t{d}\t_\tSpaceAfter=No\n"
                       for i, (w, u, d) in enumerate(rows, 1))
    treebank = tmp_path / "zh.conllu"
    treebank.write_text((sentence + "\n") * 3, encoding="utf-8")
    r = run_cli("segment", treebank)
    assert r.returncode == 0 and warning_lines(r) == [], r.stderr
    assert scripts.main_script(treebank.read_text(encoding="utf-8"))[0] == "Han"
    latin = tmp_path / "de.conllu"
    latin.write_text("".join(f"{i}\t{w}\t_\tX\t_\t_\t_\t_\t_\t_\n" for i, w in enumerate(DE_TEXT.split(), 1)) + "\n",
                     encoding="utf-8")
    r = run_cli("segment", latin)
    assert r.returncode == 0 and "Latin" in "".join(warning_lines(r)), r.stderr
