"""The CoNLL 2018 shared-task scores (fasttag.text.conll18): small gold and
system files whose scores are worked out by hand in the comments, the
script's own alignment cases, and the tokenizer's scores agreeing with
the file scores on random tokenizations."""
import io

import pytest
from hypothesis import given, settings, strategies as st

import fasttag
from fasttag.errors import InputError
from fasttag.tasks.tok import read_conllu_text, score_tokenization
from fasttag.text.goldtext import SurfaceToken
from fasttag.text import conll18
from fasttag.text.conllu import UDDocument, format_document


def row(wid, form, lemma="_", upos="_", xpos="_", feats="_", misc="_"):
    return f"{wid}\t{form}\t{lemma}\t{upos}\t{xpos}\t{feats}\t_\t_\t_\t{misc}"


def conllu(*sentences):
    """A CoNLL-U text of sentences given as lists of rows."""
    return "".join("\n".join(s) + "\n\n" for s in sentences)


def evaluate(tmp_path, gold, system):
    (tmp_path / "gold.conllu").write_text(gold, encoding="utf-8")
    (tmp_path / "system.conllu").write_text(system, encoding="utf-8")
    return fasttag.evaluate_conllu(tmp_path / "gold.conllu", tmp_path / "system.conllu")


def counts(score):
    return score["correct"], score["gold"], score["system"]


NO = "SpaceAfter=No"


def test_tokens_split_differently(tmp_path):
    # text "ab cd." -- gold: ab | cd | .   system: ab | cd.
    gold = conllu([row(1, "ab", upos="X"), row(2, "cd", upos="Y", misc=NO), row(3, ".", upos="PUNCT")])
    system = conllu([row(1, "ab", upos="X"), row(2, "cd.", upos="Y")])
    r = evaluate(tmp_path, gold, system)
    # one token right (ab) of 3 gold and 2 system: P 1/2, R 1/3, F1 2*1/(3+2) = 0.4
    assert counts(r["Tokens"]) == (1, 3, 2)
    assert (r["Tokens"]["precision"], r["Tokens"]["recall"]) == (0.5, pytest.approx(1 / 3))
    assert r["Tokens"]["f1"] == pytest.approx(0.4) and r["Tokens"]["aligned_accuracy"] is None
    # no multiword token: words are tokens, the same one aligned
    assert counts(r["Words"]) == (1, 3, 2) and r["Words"]["f1"] == pytest.approx(0.4)
    # UPOS of the one aligned word agrees: 1 correct of 1 aligned
    assert counts(r["UPOS"]) == (1, 3, 2) and r["UPOS"]["aligned"] == 1
    assert r["UPOS"]["aligned_accuracy"] == 1.0
    # one sentence on each side, the same span
    assert counts(r["Sentences"]) == (1, 1, 1) and r["Sentences"]["f1"] == 1.0


def test_sentences_split_differently_and_spacing_ignored(tmp_path):
    # gold: "A b. C d." as [A b .] [C d .]
    gold = conllu([row(1, "A"), row(2, "b", misc=NO), row(3, ".")],
                  [row(1, "C"), row(2, "d", misc=NO), row(3, ".")])
    # system: the same tokens, in three sentences [A b .] [C] [d .], and
    # spaced differently ("A b.C d.", "Cd.") -- spacing is not scored
    system = conllu([row(1, "A"), row(2, "b", misc=NO), row(3, ".", misc=NO)],
                    [row(1, "C", misc=NO)],
                    [row(1, "d", misc=NO), row(2, ".")])
    r = evaluate(tmp_path, gold, system)
    # sentence spans (characters without spaces): gold (0,3) (3,6), system (0,3) (3,4) (4,6): one right
    assert counts(r["Sentences"]) == (1, 2, 3)
    assert r["Sentences"]["precision"] == pytest.approx(1 / 3) and r["Sentences"]["recall"] == 0.5
    assert r["Sentences"]["f1"] == pytest.approx(2 / 5)
    assert counts(r["Tokens"]) == (6, 6, 6) and counts(r["Words"]) == (6, 6, 6)


def test_one_sentence_against_two(tmp_path):
    gold = conllu([row(1, "A"), row(2, ".")], [row(1, "B"), row(2, ".")])
    system = conllu([row(1, "A"), row(2, "."), row(3, "B"), row(4, ".")])
    r = evaluate(tmp_path, gold, system)
    # gold (0,2) (2,4), system (0,4): none right
    assert counts(r["Sentences"]) == (0, 2, 1) and r["Sentences"]["f1"] == 0.0


DONT_GOLD = conllu(["1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "do", "do", "AUX"), row(2, "n't", "not", "PART"),
                    row(3, "go", "go", "VERB")])


def test_multiword_token_matched(tmp_path):
    r = evaluate(tmp_path, DONT_GOLD, DONT_GOLD)
    # tokens don't, go; words do, n't, go
    assert counts(r["Tokens"]) == (2, 2, 2) and counts(r["Words"]) == (3, 3, 3)
    assert counts(r["Lemmas"]) == (3, 3, 3)


def test_multiword_token_as_two_tokens(tmp_path):
    # the system writes "don't" as two tokens "do" + "n't": the token is
    # wrong, but the multiword span (characters 0-5) aligns its words by
    # the longest common subsequence of forms: do, n't both aligned
    system = conllu([row(1, "do", "do", "AUX", misc=NO), row(2, "n't", "not", "ADV"), row(3, "go", "go", "VERB")])
    r = evaluate(tmp_path, DONT_GOLD, system)
    # tokens: gold (0,5) (5,7), system (0,2) (2,5) (5,7): only "go" right
    assert counts(r["Tokens"]) == (1, 2, 3) and r["Tokens"]["f1"] == pytest.approx(2 / 5)
    assert counts(r["Words"]) == (3, 3, 3)
    # UPOS: n't is PART in gold, ADV in the system: 2 of 3 aligned
    assert counts(r["UPOS"]) == (2, 3, 3) and r["UPOS"]["aligned_accuracy"] == pytest.approx(2 / 3)


def test_multiword_token_with_wrong_words(tmp_path):
    # the right token, split into the wrong words "did" + "not"
    system = conllu(["1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "did", "do", "AUX"), row(2, "not", "not", "PART"),
                     row(3, "go", "go", "VERB")])
    r = evaluate(tmp_path, DONT_GOLD, system)
    # tokens both right; words: no common form in the span, only "go" aligned: P = R = F1 = 1/3
    assert counts(r["Tokens"]) == (2, 2, 2)
    assert counts(r["Words"]) == (1, 3, 3) and r["Words"]["f1"] == pytest.approx(1 / 3)
    # the aligned word's tags: 1 of 1
    assert counts(r["UPOS"]) == (1, 3, 3) and r["UPOS"]["aligned"] == 1


def test_multiword_forms_compared_lowercased(tmp_path):
    # the words of a multiword token need not spell it: "DO" + "N'T"
    gold = conllu(["1-2\tDon't\t_\t_\t_\t_\t_\t_\t_\t_", row(1, "DO"), row(2, "N'T")])
    system = conllu([row(1, "Do", misc=NO), row(2, "n't")])
    assert counts(evaluate(tmp_path, gold, system)["Words"]) == (2, 2, 2)


def test_ufeats_universal_features_only(tmp_path):
    gold = conllu([row(1, "a", upos="NOUN", xpos="N", feats="Case=Nom|Clitic=Ko|Number=Sing"),
                   row(2, "b", upos="NOUN", xpos="N", feats="Number=Plur"),
                   row(3, "c", upos="ADV", xpos="D"),
                   row(4, "d", upos="NOUN", xpos="N", feats="Case=Nom|Number=Sing")])
    system = conllu([row(1, "a", upos="NOUN", xpos="N", feats="Case=Nom|Number=Sing"),   # Clitic ignored: right
                     row(2, "b", upos="NOUN", xpos="N", feats="Number=Sing"),            # wrong
                     row(3, "c", upos="ADV", xpos="R", feats="Clitic=Ko"),               # no universal ones: right
                     row(4, "d", upos="NOUN", xpos="N", feats="Number=Sing|Case=Nom")])  # order ignored: right
    r = evaluate(tmp_path, gold, system)
    assert counts(r["UFeats"]) == (3, 4, 4) and r["UFeats"]["f1"] == 0.75
    assert counts(r["UPOS"]) == (4, 4, 4)
    assert counts(r["XPOS"]) == (3, 4, 4)
    # AllTags: UPOS, XPOS and UFeats all right on a and d only
    assert counts(r["AllTags"]) == (2, 4, 4) and r["AllTags"]["aligned_accuracy"] == 0.5


def test_lemmas_gold_underscore_counts_as_right(tmp_path):
    gold = conllu([row(1, "a", "_"), row(2, "b", "b"), row(3, "c", "c"), row(4, "d", "d")])
    system = conllu([row(1, "a", "x"), row(2, "b", "b"), row(3, "c", "_"), row(4, "d", "D")])
    r = evaluate(tmp_path, gold, system)
    # a: gold "_" so right whatever the system says; b right; c ("_" for c) and d (case) wrong
    assert counts(r["Lemmas"]) == (2, 4, 4) and r["Lemmas"]["f1"] == 0.5


def test_spaces_inside_a_token_are_not_characters(tmp_path):
    # gold "1 000" is one token (a space inside it); the system writes
    # "1" and "000": the texts agree without spaces, the tokens do not
    gold = conllu([row(1, "1 000"), row(2, "km")])
    system = conllu([row(1, "1"), row(2, "000"), row(3, "km")])
    r = evaluate(tmp_path, gold, system)
    # characters "1000km": gold (0,4) (4,6), system (0,1) (1,4) (4,6)
    assert counts(r["Tokens"]) == (1, 2, 3) and counts(r["Words"]) == (1, 2, 3)


def test_empty_nodes_are_skipped(tmp_path):
    plain = conllu([row(1, "a", upos="X"), row(2, "b", upos="Y")])
    with_empty = conllu([row(1, "a", upos="X"), "1.1\tz\t_\tZ\t_\t_\t_\t_\t_\t_", row(2, "b", upos="Y")])
    r = evaluate(tmp_path, plain, with_empty)
    assert counts(r["Words"]) == (2, 2, 2) and counts(r["UPOS"]) == (2, 2, 2)


def test_identical_files_score_one_everywhere(tmp_path):
    r = evaluate(tmp_path, DONT_GOLD, DONT_GOLD)
    assert list(r) == list(conll18.METRICS)
    assert all(s["f1"] == 1.0 for s in r.values())


def test_file_objects_accepted():
    r = fasttag.evaluate_conllu(io.StringIO(DONT_GOLD), io.StringIO(DONT_GOLD))
    assert r["Words"]["correct"] == 3


def test_different_text_names_both_files_and_lines(tmp_path):
    gold = conllu([row(1, "ab")], [row(1, "cd"), row(2, "ef")])
    system = conllu([row(1, "ab")], [row(1, "cd"), row(2, "eg")])
    with pytest.raises(InputError) as info:
        evaluate(tmp_path, gold, system)
    message = str(info.value)
    assert "\n" not in message
    # "ef" is on line 4 of both files (line 2 is blank)
    assert message.startswith(f"{tmp_path / 'system.conllu'}:4:")
    assert f"{tmp_path / 'gold.conllu'}:4" in message and "'g'" in message and "'f'" in message


def test_system_text_shorter_or_longer(tmp_path):
    gold = conllu([row(1, "ab"), row(2, "cd")])
    with pytest.raises(InputError, match=r"system.conllu: the text ends before .*gold.conllu:2"):
        evaluate(tmp_path, gold, conllu([row(1, "ab")]))
    with pytest.raises(InputError, match=r"system.conllu:4: text beyond the end of the gold text \(.*gold.conllu\): 'x'"):
        evaluate(tmp_path, gold, conllu([row(1, "ab"), row(2, "cd")], [row(1, "x")]))


@pytest.mark.parametrize("gold, system, name", [(None, "x.conllu", "gold"), ("x.conllu", 3, "system")])
def test_arguments_named(gold, system, name):
    with pytest.raises(TypeError, match=f"^{name} must be the path of a CoNLL-U file or a file object, not"):
        fasttag.evaluate_conllu(gold, system)


def test_empty_gold_is_refused(tmp_path):
    with pytest.raises(InputError, match=r"gold.conllu: no sentences: nothing to score against"):
        evaluate(tmp_path, "", "")
    with pytest.raises(InputError, match=r"system.conllu: the text ends before the gold text does"):
        evaluate(tmp_path, DONT_GOLD, "")


def test_documents_in_memory_named_when_texts_differ():
    def t(a, b, text):
        return SurfaceToken(a, b, text[a:b], (text[a:b],))
    gold = UDDocument.from_tokens("ab cd", [[t(0, 2, "ab cd"), t(3, 5, "ab cd")]])
    system = UDDocument.from_tokens("ab ce", [[t(0, 2, "ab ce"), t(3, 5, "ab ce")]])
    with pytest.raises(InputError, match=r"^the system document: the text differs .* here it reads 'e', the gold document reads 'd'$"):
        conll18.evaluate_documents(gold, system)


def test_malformed_file_names_its_line(tmp_path):
    bad = "1\ta\t_\t_\t_\t_\t_\t_\t_\n"
    with pytest.raises(InputError, match=r"system.conllu:1: expected 10 tab-separated fields"):
        evaluate(tmp_path, DONT_GOLD, bad)


# ------------------------------------------------- the script's own cases

def words_file(tokens):
    """The script's test notation: "abc a b c" is the multiword token abc
    of words a, b, c; "a" a one-word token."""
    rows, n = [], 0
    for t in tokens:
        form, *words = t.split(" ")
        if words:
            rows.append(f"{n + 1}-{n + len(words)}\t{form}\t_\t_\t_\t_\t_\t_\t_\t_")
            for w in words:
                n += 1
                rows.append(row(n, w))
        else:
            n += 1
            rows.append(row(n, form))
    return conllu(rows)


@pytest.mark.parametrize("gold, system, correct", [
    (["a"], ["a"], 1),
    (["a", "b", "c"], ["a", "b", "c"], 3),
    (["abc a b c"], ["a", "b", "c"], 3),
    (["a", "bc b c", "d"], ["a", "b", "c", "d"], 4),
    (["abcd a b c d"], ["ab a b", "cd c d"], 4),
    (["abc a b c", "de d e"], ["a", "bcd b c d", "e"], 5),
    (["abcd"], ["a", "b", "c", "d"], 0),
    (["abc", "d"], ["a", "b", "c", "d"], 1),
    (["a", "bc", "d"], ["a", "b", "c", "d"], 2),
    (["a", "bc b c", "d"], ["a", "b", "cd"], 2),
    (["abc a BX c", "def d EX f"], ["ab a b", "cd c d", "ef e f"], 4),
    (["ab a b", "cd bc d"], ["a", "bc", "d"], 2),
    (["a", "bc b c", "d"], ["ab AX BX", "cd CX a"], 1),
])
def test_alignment_cases_of_the_script(tmp_path, gold, system, correct):
    r = evaluate(tmp_path, words_file(gold), words_file(system))
    n_gold = sum(max(1, len(t.split(" ")) - 1) for t in gold)
    n_system = sum(max(1, len(t.split(" ")) - 1) for t in system)
    assert counts(r["Words"]) == (correct, n_gold, n_system)
    assert r["Words"]["f1"] == 2 * correct / (n_gold + n_system)


def test_different_characters_fail_as_in_the_script(tmp_path):
    with pytest.raises(InputError):
        evaluate(tmp_path, words_file(["a"]), words_file(["b"]))


# ------------------------------------------------- one definition

@st.composite
def tokenization(draw, text):
    """Random sentences of tokens over ``text`` (no whitespace inside a
    token), some of them multiword tokens with made-up words."""
    cuts = sorted(draw(st.sets(st.integers(1, len(text) - 1), max_size=len(text) - 1)))
    pieces = [(a, b) for a, b in zip([0] + cuts, cuts + [len(text)])]
    tokens = []
    for a, b in pieces:
        for chunk_start, chunk in _chunks(text[a:b], a):
            form = chunk
            words = (form,)
            if len(form) > 1 and draw(st.booleans()):
                k = draw(st.integers(1, len(form) - 1))
                words = (form[:k], draw(st.sampled_from([form[k:], "x", form[k:].upper()])))
            tokens.append(SurfaceToken(chunk_start, chunk_start + len(form), form, words))
    breaks = sorted(draw(st.sets(st.integers(1, max(1, len(tokens) - 1)), max_size=3)))
    sentences = [tokens[a:b] for a, b in zip([0] + breaks, breaks + [len(tokens)])]
    return [s for s in sentences if s]


def _chunks(piece, offset):
    """(start, run) of each run of non-space characters of ``piece``."""
    out, i = [], 0
    for run in piece.split(" "):
        if run:
            out.append((offset + i, run))
        i += len(run) + 1
    return out


TEXT = "ab c'd efg. h ij"


@settings(max_examples=60)
@given(tokenization(TEXT), tokenization(TEXT))
def test_tokenizer_scores_are_the_file_scores(gold, system):
    """score_tokenization on offsets gives the scores of the files written
    from the same tokens."""
    s = score_tokenization(gold, system)
    files = [format_document(UDDocument.from_tokens(TEXT, sents)) for sents in (gold, system)]
    r = fasttag.evaluate_conllu(io.StringIO(files[0]), io.StringIO(files[1]))
    for key, metric in (("token", "Tokens"), ("sentence", "Sentences"), ("word", "Words")):
        assert (s[f"correct_{key}s"], s[f"gold_{key}s"], s[f"system_{key}s"]) == counts(r[metric])
        assert s[f"{key}_f1"] == pytest.approx(r[metric]["f1"])


def test_bundled_tokenizer_scored_the_same_from_its_conllu(shared_data, tmp_path):
    """The tokenizer's own evaluation and the file scores of the CoNLL-U it
    writes agree on EWT test, and the files' counts are the treebank's."""
    gold_path = shared_data / "en_ewt" / "en_ewt-ud-test.conllu"
    if not gold_path.is_file():
        pytest.skip(f"{gold_path} not found")
    tok = fasttag.load("en-tok")
    gold = read_conllu_text(gold_path)
    system = tmp_path / "system.conllu"
    system.write_text(format_document(UDDocument.from_tokens(gold.text, tok.sentence_tokens(gold.text))),
                      encoding="utf-8")
    r = fasttag.evaluate_conllu(gold_path, system)
    s = tok.evaluate(gold_path)
    assert (r["Tokens"]["gold"], r["Sentences"]["gold"], r["Words"]["gold"]) == (24740, 2077, 25094)
    for key, metric in (("token", "Tokens"), ("sentence", "Sentences"), ("word", "Words")):
        assert (s[f"correct_{key}s"], s[f"gold_{key}s"], s[f"system_{key}s"]) == counts(r[metric])


def _chained(pairs, shifted):
    """CoNLL-U of the text ``ab`` * ``pairs`` as two-word multiword tokens,
    starting one character later when ``shifted``: each token overlaps two
    of the unshifted file's, so the whole text is one multiword span."""
    def word(i, form):
        return f"{i}\t{form}\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n"
    text, lines, i, at = "ab" * pairs, [], 1, 0
    if shifted:
        lines.append(word(1, "a"))
        i, at = 2, 1
    while at + 2 <= len(text):
        lines += [f"{i}-{i + 1}\t{text[at:at + 2]}\t_\t_\t_\t_\t_\t_\t_\tSpaceAfter=No\n",
                  word(i, text[at]), word(i + 1, text[at + 1])]
        i, at = i + 2, at + 2
    if at < len(text):
        lines.append(word(i, text[at]))
    return "".join(lines) + "\n"


def test_a_multiword_span_past_the_bound_is_refused_not_aligned_for_ever(tmp_path):
    gold, system = tmp_path / "gold.conllu", tmp_path / "system.conllu"
    gold.write_text(_chained(40, False), encoding="utf-8")
    system.write_text(_chained(40, True), encoding="utf-8")
    words = conll18.evaluate_conllu(gold, system)["Words"]
    assert words["gold"] == words["system"] == 80 and words["correct"] == 80   # every form found in order
    side = int(conll18.MAX_SPAN_PRODUCT ** 0.5) // 2 + 1       # words on either side just past the bound
    gold.write_text(_chained(side, False), encoding="utf-8")
    system.write_text(_chained(side, True), encoding="utf-8")
    with pytest.raises(InputError, match=rf"^{gold}:1: a multiword span of [0-9,]+ gold and [0-9,]+ system words.*"
                                         rf"\(the system's from {system}:1\)$"):
        conll18.evaluate_conllu(gold, system)
