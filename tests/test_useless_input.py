"""Input that would train or score nonsense is refused in one line.

A tag column with one value, segmentation data without word boundaries
(raw text, word/TAG text), English given as Chinese gold, CoNLL-U given
to the commands that read raw text, a CoNLL-U file of comments only: each
gives the right answer or one line naming the file, option or column
(exit status 2), through the console script and through the Python API.
Every flag such a line names is one its command has.
"""
from pathlib import Path

import pytest

import fasttag
from fasttag import Segmenter, SpanTagger, Tagger
from fasttag.errors import InputError

DATA = Path(__file__).resolve().parents[1] / "data"

# a treebank without XPOS (as many UD treebanks): "_" in column 5
NO_XPOS = ("# sent_id = 1\n# text = Je mange.\n"
           "1\tJe\tmoi\tPRON\t_\t_\t2\tnsubj\t_\t_\n"
           "2\tmange\tmanger\tVERB\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
           "3\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_\n\n"
           "# sent_id = 2\n# text = Il dort\n"
           "1\tIl\til\tPRON\t_\t_\t2\tnsubj\t_\t_\n"
           "2\tdort\tdormir\tVERB\t_\t_\t0\troot\t_\t_\n\n")
RAW_ZH = "我爱北京天安门\n今天天气很好\n我们都是好朋友\n"
TAGGED_ZH = "我/r 爱/v 北京/ns 天安门/ns\n今天/t 天气/n 很/d 好/a\n"
SEGMENTED_ZH = "我 爱 北京 天安门\n今天 天气 很 好\n我们 都 是 好 朋友\n"
ENGLISH = "The quick brown fox jumps over the lazy dog.\nI like fish and chips very much.\n"
COMMENTS = "# newdoc id = a\n# sent_id = 1\n# text = Je mange.\n\n"


def one_error(result, *names):
    """The one error line of a failed command, which names ``names``."""
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, (result.returncode, err)
    lines = [line for line in err.splitlines() if not line.startswith("[fasttag ")]
    assert len(lines) == 1 and "Traceback" not in err, err
    for name in names:
        assert name in lines[0], lines[0]
    return lines[0]


def refused(run_cli, foreign_flags, args, *names):
    """Run ``args``: one error line naming ``names`` and only flags the
    command has."""
    line = one_error(run_cli(*args), *names)
    assert foreign_flags([str(a) for a in args], line) == [], line
    return line


@pytest.fixture
def write(tmp_path):
    def write(name, text):
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


# ---------------------------------------------------------------- one tag value

def test_a_tag_column_of_one_value_is_refused_naming_the_column(run_cli, foreign_flags, write, tmp_path):
    treebank = write("fr.conllu", NO_XPOS)
    out = tmp_path / "m.ftm"
    line = refused(run_cli, foreign_flags, ["train", "pos", treebank, "--column", "xpos", "-o", out],
                   "fr.conllu", "--column", "xpos", "'_'")
    assert "option column" not in line
    same = write("same.tsv", "a\tNN\nb\tNN\n\nc\tNN\n\n")
    refused(run_cli, foreign_flags, ["train", "pos", same, "--format", "conll", "-o", out],
            "same.tsv", "'NN'", "--column")
    assert not out.exists()
    assert run_cli("train", "pos", treebank, "-o", out, "--epochs", "1").returncode == 0     # UPOS has tags


def test_a_tag_column_of_one_value_is_refused_in_python(write):
    treebank = write("fr.conllu", NO_XPOS)
    with pytest.raises(InputError, match=r"fr.conllu: every tag .* '_' \(column xpos, option column\)"):
        Tagger.train(str(treebank), column="xpos", verbose=False)
    with pytest.raises(InputError, match="every tag of the training data is 'X'"):
        Tagger.train([(["a", "b"], ["X", "X"]), (["c"], ["X"])], verbose=False)


# ---------------------------------------------------------------- segmentation data

def test_segmentation_training_data_without_boundaries_or_with_tags_is_refused(run_cli, foreign_flags, write,
                                                                                 tmp_path):
    out = tmp_path / "s.ftm"
    refused(run_cli, foreign_flags, ["train", "seg", write("raw.txt", RAW_ZH), "-o", out],
            "raw.txt", "no word boundaries")
    refused(run_cli, foreign_flags, ["train", "seg", write("wp.txt", TAGGED_ZH), "-o", out],
            "wp.txt", "word/TAG")
    # raw text with a space here and there: its "words" are whole sentences
    spaced = "我爱北京天安门今天天气很好 我们都是好朋友\n今天天气很好我们都是好朋友 我爱北京天安门\n"
    refused(run_cli, foreign_flags, ["train", "seg", write("spaced.txt", spaced), "-o", out],
            "spaced.txt", "no word boundaries")
    assert not out.exists()
    with pytest.raises(InputError, match="no word boundaries"):
        Segmenter.train(RAW_ZH.splitlines(), verbose=False)
    with pytest.raises(InputError, match="word/TAG"):
        Segmenter.train(TAGGED_ZH.splitlines(), verbose=False)
    Segmenter.train(SEGMENTED_ZH.splitlines(), epochs=1, verbose=False)


def test_segmentation_gold_without_boundaries_or_in_english_is_refused(run_cli, foreign_flags, write):
    refused(run_cli, foreign_flags, ["eval", "zh", write("raw.txt", RAW_ZH)], "raw.txt", "no word boundaries")
    refused(run_cli, foreign_flags, ["eval", "zh", write("wp.txt", TAGGED_ZH)], "wp.txt", "word/TAG")
    refused(run_cli, foreign_flags, ["eval", "zh", write("en.txt", ENGLISH)], "en.txt",
            "alphabets written with spaces")
    good = run_cli("eval", "zh", write("gold.txt", SEGMENTED_ZH), "--json")
    assert good.returncode == 0, good.stderr
    seg = fasttag.load("zh")
    with pytest.raises(InputError, match="alphabets written with spaces"):
        seg.evaluate(ENGLISH.splitlines())
    with pytest.raises(InputError, match="alphabets written with spaces"):     # as dev data too
        Segmenter.train(SEGMENTED_ZH.splitlines(), dev=ENGLISH.splitlines(), epochs=1, verbose=False)
    with pytest.raises(InputError, match="no word boundaries"):
        seg.evaluate(RAW_ZH.splitlines())
    with pytest.raises(InputError, match=r"raw.txt: the test data has no word boundaries"):
        seg.evaluate(str(write("raw.txt", RAW_ZH)))


@pytest.mark.parametrize("name", ["sighan2005/pku_test_gold.utf8", "zh_pd1998/dev.txt", "zh_pd1998/train.txt"])
def test_real_chinese_segmentation_is_never_refused(shared_data, name):
    from fasttag.text.formats import read_segmented
    from fasttag.tasks.seg import check_segmented, spaced_gold
    path = shared_data / name
    if not path.is_file():
        pytest.skip(f"{name} not found")
    sentences = [ws for ws in read_segmented(path) if ws]
    check_segmented(sentences, "gold data")
    spaced_gold(sentences)


def test_real_raw_and_english_text_are_refused_as_gold(shared_data):
    from fasttag.text.formats import read_segmented
    from fasttag.tasks.seg import check_segmented, spaced_gold
    raw, english = shared_data / "sighan2005" / "pku_test.utf8", shared_data / "unlabeled_en" / "webtext.txt"
    if not raw.is_file() or not english.is_file():
        pytest.skip("pku_test.utf8 or webtext.txt not found")
    with pytest.raises(InputError, match="no word boundaries"):
        check_segmented([ws for ws in read_segmented(raw) if ws])
    with pytest.raises(InputError, match="alphabets written with spaces"):
        spaced_gold([ws for ws in read_segmented(english) if ws])


# ---------------------------------------------------------------- CoNLL-U to raw-text commands

def test_tokenize_and_segment_read_the_text_of_conllu(run_cli, write):
    treebank = write("fr.conllu", NO_XPOS)
    tokens = run_cli("tokenize", treebank)
    assert tokens.returncode == 0, tokens.stderr
    out = tokens.stdout.decode()
    assert "PRON" not in out and "moi" not in out and "\t" not in out
    assert [line for line in out.splitlines() if line] == ["Je mange .", "Il dort"]
    # the text of a sentence without "# text": its forms, spaced as SpaceAfter says
    zh = write("zh.conllu", "# sent_id = 1\n# text = 我爱北京天安门\n"
                            "1\t我爱\t_\tX\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
                            "2\t北京天安门\t_\tX\t_\t_\t1\tdep\t_\tSpaceAfter=No\n\n"
                            "1\t今天天气\t_\tX\t_\t_\t0\troot\t_\tSpaceAfter=No\n"
                            "2\t很好\t_\tX\t_\t_\t1\tdep\t_\tSpaceAfter=No\n\n")
    words = run_cli("segment", zh)
    assert words.returncode == 0, words.stderr
    expected = run_cli("segment", input="我爱北京天安门\n今天天气很好\n".encode())
    assert words.stdout == expected.stdout and b"root" not in words.stdout
    seg = fasttag.load("zh")
    import io
    out = io.StringIO()
    seg.tag_file(str(zh), out)
    assert out.getvalue() == expected.stdout.decode()


def test_a_conllu_file_of_comments_only_is_an_error(run_cli, foreign_flags, write, tmp_path):
    comments = write("c.conllu", COMMENTS)
    out = tmp_path / "m.ftm"
    for args in (["tag", comments], ["tag", comments, "--format", "conllu"], ["segment", comments],
                 ["tokenize", comments], ["eval", "en", comments], ["eval", "en-tok", comments],
                 ["train", "pos", comments, "-o", out], ["train", "seg", comments, "-o", out],
                 ["train", "tok", comments, "-o", out]):
        refused(run_cli, foreign_flags, args, "c.conllu", "comments only")
    assert not out.exists()
    from fasttag.text import formats as ftio
    with pytest.raises(InputError, match="comments only"):
        list(ftio.read_conllu(str(comments)))
    title = write("title.txt", "# A title\n")            # raw text may open with "#": still raw text
    assert run_cli("tokenize", title).returncode == 0


# ---------------------------------------------------------------- messages that pointed the wrong way

def test_train_ner_on_conllu_names_no_option_it_lacks(run_cli, foreign_flags, tmp_path):
    line = refused(run_cli, foreign_flags, ["train", "ner", DATA / "sample.conllu", "-o", tmp_path / "m.ftm"],
                   "sample.conllu", "not CoNLL-U")
    assert "--format" not in line
    refused(run_cli, foreign_flags, ["eval", "en-ner", DATA / "sample.conllu"], "sample.conllu", "not CoNLL-U")
    with pytest.raises(InputError, match="not CoNLL-U"):
        SpanTagger.train(str(DATA / "sample.conllu"), task="ner", verbose=False)


def test_fine_tuning_on_fewer_columns_names_the_column_option(run_cli, foreign_flags, write, tmp_path):
    three = write("three.conll", "EU NNP B-ORG\nrejects VBZ O\n\nPeter NNP B-PER\nBlackburn NNP I-PER\n\n")
    refused(run_cli, foreign_flags, ["train", "ner", three, "--init", "en-ner", "-o", tmp_path / "m.ftm"],
            "three.conll", "tag column 3 is out of range", "--column")
    refused(run_cli, foreign_flags, ["eval", "en-ner", three], "three.conll", "--column")
    refused(run_cli, foreign_flags, ["train", "ner", three, "--word-column", "5", "-o", tmp_path / "m.ftm"],
            "three.conll", "--word-column")
    with pytest.raises(InputError, match=r"option column names the tag column"):
        SpanTagger.train(str(three), task="ner", init=fasttag.load("en-ner"), verbose=False)


def test_an_unknown_option_points_to_the_subcommands_help(run_cli, tmp_path):
    assert "(see 'fasttag tag --help')" in one_error(run_cli("tag", "--fast"), "--fast")
    assert "(see 'fasttag train pos --help')" in one_error(
        run_cli("train", "pos", DATA / "sample.conllu", "-o", tmp_path / "m.ftm", "--bogus", "3"), "--bogus")
    assert "(see 'fasttag eval --help')" in one_error(run_cli("eval", "en", DATA / "sample.conllu", "--x"), "--x")


def test_threads_zero_is_every_core_for_training_too(run_cli, tmp_path):
    out = tmp_path / "m.ftm"
    result = run_cli("train", "pos", DATA / "sample.conllu", "-o", out, "--threads", "0", "--epochs", "1")
    assert result.returncode == 0, result.stderr
    assert fasttag.load(out).tags
    assert "0: every core" in run_cli("train", "pos", "--help").stdout.decode()
    assert "0: every core" in run_cli("tag", "--help").stdout.decode()
    Tagger.train(str(DATA / "sample.conllu"), threads=0, epochs=1, verbose=False)
    with pytest.raises(InputError, match="option threads"):
        Tagger.train(str(DATA / "sample.conllu"), threads=-1, epochs=1, verbose=False)


def test_python_option_names_become_the_commands_flags():
    from fasttag.model.options import cli_text
    assert cli_text("bad (option column, option word_column)") == "bad (--column, --word-column)"
    assert cli_text("option column x", flags={"--format"}) == "option column x"     # a flag it lacks: kept
    assert cli_text("option max_sentences and option table") == "option max_sentences and option table"


def _all_parsers():
    """{command words: parser} of every command and train task."""
    import argparse

    from fasttag.cli import build_parser
    root = build_parser()
    out = {"": root}

    def walk(parser, prefix):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out[(prefix + " " + name).strip()] = sub
                    walk(sub, prefix + " " + name)
    walk(root, "")
    return out


def _message_flags(source):
    """The --flags in the str constants of Python ``source`` that are not
    docstrings: what its messages can name."""
    import ast
    import re
    tree = ast.parse(source)
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef)) and node.body
            and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    flag = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
    return {f for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in docs for f in flag.findall(node.value)}


def test_every_flag_a_message_names_exists():
    """Statically: each --flag in a message string of the package is a flag
    of some command, and each one the command functions of the CLI name is a
    flag of a command that function runs."""
    import inspect

    from fasttag import cli
    parsers = _all_parsers()
    every = set().union(*(p.flags for p in parsers.values()))
    package = Path(fasttag.__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        unknown = _message_flags(path.read_text(encoding="utf-8")) - every
        assert not unknown, (path.name, unknown)
    served = {}
    for name, fn in cli.COMMANDS.items():
        for key, parser in parsers.items():
            if key == name or key.startswith(name + " "):
                served.setdefault(fn, set()).update(parser.flags)
    for fn, flags in served.items():
        unknown = _message_flags(inspect.getsource(fn)) - flags
        assert not unknown, (fn.__name__, unknown)
