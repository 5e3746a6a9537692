"""Every option of training and reading, in one table.

Tasks declare the groups they take and their own defaults
(:func:`fasttag.model.registry.task`); the task classes (:func:`resolve`)
and the command line (:mod:`fasttag.cli`) read the same table, so a default
or a range is written once.  An option that does not apply to a task is
refused, never ignored.
"""
import argparse
import math
import numbers
import re
from dataclasses import dataclass, field

from . import registry
from ..errors import InputError

# MIRA's k: an update costs more than k squared; a model file's k is bounded
# the same way, so that fine-tuning or update() cannot run for hours.
MAX_MIRA_K = 64

#: The commands that take options without being tasks: the option groups
#: or names each takes.
COMMANDS = {"cluster": ("cluster", "seed")}


@dataclass(frozen=True)
class Option:
    """One option.  ``group``: the tasks that declare it or its group take
    it ("training": every task).  ``default``: unless the task declares its
    own.  ``parse`` turns a command-line string into a value (None: no
    flag).  ``check(value)`` returns an error text or None.  ``reads``: the
    value names a file the command reads, which no output may replace."""
    name: str
    help: str
    default: object = None
    group: str = "training"
    parse: object = None
    check: object = None
    metavar: str = None
    choices: tuple = None
    phases: tuple = ("train",)
    flag_name: str = None
    reads: bool = False
    extra: dict = field(default_factory=dict)

    @property
    def flag(self):
        return "--" + (self.flag_name or self.name.replace("_", "-"))

    def default_for(self, task):
        entry = registry.TASKS.get(task)
        if entry is not None and self.name in entry.defaults:
            return entry.defaults[self.name]
        return self.default

    def applies(self, task):
        """Whether ``task`` (a declared task or a command of
        :data:`COMMANDS`) takes this option."""
        entry = registry.TASKS.get(task)
        if entry is not None and self.name in entry.refuses:
            return False
        takes = entry.options if entry is not None else COMMANDS.get(task, ())
        return self.group in takes or self.name in takes


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _int_at_least(lo):
    def check(v):
        if not _is_int(v) or v < lo:
            return f"must be an integer of at least {lo}, not {v!r}"
    return check


def _int_between(lo, hi):
    def check(v):
        if not _is_int(v) or not lo <= v <= hi:
            return f"must be an integer from {lo} to {hi}, not {v!r}"
    return check


def _is_number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _positive_float(v):
    if not _is_number(v) or not math.isfinite(v) or v <= 0:
        return f"must be a positive number, not {v!r}"


def _non_negative_float(v):
    if not _is_number(v) or not math.isfinite(v) or v < 0:
        return f"must be a number of at least 0, not {v!r}"


def _one_of(*values):
    def check(v):
        if v not in values:
            return f"must be one of {', '.join(map(str, values))}, not {v!r}"
    return check


def _column_value(v):
    if v is None or v in ("upos", "xpos") or _is_int(v):
        return None
    return f"must be upos, xpos or a 0-based column index, not {v!r}"


def _parse_column(value):
    if value in ("upos", "xpos"):
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected upos, xpos or a column number, not {value!r}") from None


def _parse_int_list(value):
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated column numbers, not {value!r}") from None


def _int_list(v):
    if v is None or (isinstance(v, (list, tuple)) and all(_is_int(j) for j in v)):
        return None
    return f"must be a list of column indices, not {v!r}"


def _parse_switch(value):
    """on/off (or yes/no, true/false) -> bool."""
    switch = {"on": True, "yes": True, "true": True, "off": False, "no": False, "false": False}
    try:
        return switch[value.lower()]
    except KeyError:
        raise argparse.ArgumentTypeError(f"expected on or off, not {value!r}") from None


def _comma_list(text):
    return [x.strip() for x in text.split(",")]


def _names_or_classes(v):
    if v is None:
        return None
    if isinstance(v, (str, bytes)) or not isinstance(v, (list, tuple)) or not v:
        return f"must be a non-empty list of component names or classes, not {v!r}"
    bad = next((x for x in v if not (isinstance(x, type) or isinstance(x, str) and x.isidentifier())), None)
    if bad is not None:
        return f"must be a list of component names or classes, not one holding {bad!r}"


def _str_or_none(v):
    if v is not None and not isinstance(v, str):
        return f"must be a str, not {type(v).__name__}"


OPTIONS = [
    # ---------------------------------------------------------- learning
    Option("epochs", "training epochs", default=10,
           parse=int, check=_int_at_least(1), metavar="N"),
    Option("seed", "seed of the per-epoch shuffle (cluster: of the first classes)", default=0, parse=int,
           check=_int_at_least(0), metavar="S", phases=("train", "cluster")),
    # NER, segmentation and chunking declare 3-best MIRA their default (fasttag.tasks)
    Option("algorithm", "structured perceptron (Collins) or k-best MIRA",
           default="perceptron",
           parse=str, choices=("perceptron", "mira"), check=_one_of("perceptron", "mira")),
    Option("k", "MIRA: best sequences per update", default=1,
           parse=int, check=_int_between(1, MAX_MIRA_K), metavar="K",
           extra={"needs": ("algorithm", "mira"), "default_without": 1}),
    Option("C", "MIRA: aggressiveness (the largest step)", default=1.0, parse=float,
           check=_positive_float, metavar="C", extra={"needs": ("algorithm", "mira")}),
    Option("threads", "train on N shards at once, one thread each (iterative parameter mixing; "
           "deterministic for a given seed and N; 0: every core, as for tagging)", default=1, parse=int,
           check=_int_at_least(0), metavar="N"),
    Option("ensemble", "train N times on different shuffles (seeds S, S+1 ...) and average the N models' "
           "weights into one: steadier, N times the training time", default=1, parse=int,
           check=_int_at_least(1), metavar="N"),
    Option("templates", "feature templates (default: the task's)", group="templates"),
    Option("verbose", "progress lines on standard error (default: when it is a terminal)"),
    Option("allow_new_tags", "fine-tuning: add the tags of the new data the model does not know",
           default=False, group="tag set", check=_one_of(True, False), parse=bool,
           extra={"flag": True, "needs": ("init", ...)}),
    Option("init", "fine-tune this model (its features, tags and settings) instead of training anew",
           parse=str, metavar="MODEL", reads=True),
    Option("gold_tokens", "UD pipeline: tag the gold tokens (default: tokenize the raw text of the # text lines)",
           default=False, group="gold_tokens", check=_one_of(True, False), parse=bool, phases=("eval",),
           extra={"flag": True}),
    Option("components", "the pipeline's components, in order: registered names, comma-separated (default: "
           "tok,upos,xpos,feats,lemma)", group="components", check=_names_or_classes, parse=_comma_list,
           metavar="NAMES"),
    Option("corpus", "name of the training corpus, stored in the model", check=_str_or_none, parse=str,
           metavar="NAME"),
    Option("licence", "licence of the training corpus, stored in the model", check=_str_or_none, parse=str,
           metavar="TEXT"),
    # ---------------------------------------------------------- decoding
    Option("decoder", "Viterbi or greedy left-to-right decoding", default="viterbi",
           group="tag set", parse=str, choices=("viterbi", "greedy"), check=_one_of("viterbi", "greedy")),
    Option("tagdict_min_count", "words seen N+ times take only their seen tags (0: off; default: by tag count)",
           group="tag dictionary", parse=int, check=lambda v: None if v is None else _int_at_least(0)(v), metavar="N"),
    Option("prune_k", "open words keep their K best tags (0: all; default: by tag count)",
           group="tag dictionary", parse=int, check=lambda v: None if v is None else _int_at_least(0)(v), metavar="K"),
    # ---------------------------------------------------------- reading
    Option("format", "file format (default: guessed, or as trained)", group="format",
           parse=str, choices=("conllu", "conll", "text"), phases=("train", "eval", "tag"),
           check=lambda v: None if v is None else _one_of("conllu", "conll", "text")(v)),
    Option("column", "tag column: upos or xpos for CoNLL-U, a 0-based index for column files "
           "(default: upos, or the last column)", group="columns", parse=_parse_column,
           check=_column_value, phases=("train", "eval", "tag")),
    Option("word_column", "word column of column files", default=0, group="columns",
           parse=int, check=_int_at_least(0), metavar="N", phases=("train", "eval")),
    Option("feature_columns", "columns used as features beside the words, 0-based (default: none for ner, "
           "so that its model tags raw text; every other column for chunk)", group="spans",
           parse=_parse_int_list, check=_int_list, metavar="N,M"),
    Option("scheme", "tag scheme of the files (default: detected)", group="spans", parse=str,
           choices=("iob1", "iob2", "bioes"), check=lambda v: None if v is None else _one_of("iob1", "iob2", "bioes")(v),
           phases=("train", "eval")),
    Option("internal_scheme", "the scheme learned and decoded with", default="bioes", group="spans",
           check=_one_of("bioes", "iob2")),
    Option("document_features", "document-level features (default: off for ner and chunk); they need whole "
           "documents (column files with -DOCSTART- lines), which raw text, tagged a sentence at a "
           "time, does not give",
           group="spans", check=_one_of(True, False),
           parse=_parse_switch, metavar="on|off"),
    Option("ambiguity_classes", "features of the span types each word took in the training data "
           "(jackknifed; default: on for ner, off for chunk)",
           group="spans", check=_one_of(True, False),
           parse=_parse_switch, metavar="on|off"),
    Option("gazetteers", "gazetteer entries of one type, one per line (repeatable); in Python a "
           "{type: path or entries} dict", group="spans", parse=str, metavar="TYPE=FILE",
           flag_name="gazetteer", reads=True),
    # ---------------------------------------------------------- segmentation
    Option("dictionary", "user dictionary used as features: one word per line (optional weight)",
           group="segmentation", parse=str, metavar="FILE", flag_name="dict", reads=True),
    Option("folds", "jackknife folds of the vocabulary features (1: none)", default=3, group="segmentation",
           parse=int, check=_int_at_least(1), metavar="N"),
    Option("runs", "runs of letters (of alphabets written with spaces), digits, URLs and e-mail addresses "
           "kept whole; off for a language whose alphabet the runs would keep from being segmented (in "
           "Python True, False or a dict)", default=True, group="segmentation", parse=_parse_switch, metavar="on|off"),
    Option("unlabeled", "raw text whose strings of high accessor variety become word-candidate features "
           "(in Python also str lines); stored in the model", group="segmentation", parse=str, metavar="FILE",
           reads=True),
    Option("prune", "drop averaged weights smaller than this in absolute value (MIRA's weights are far "
           "smaller than the perceptron's; with dev data the pruned model is scored again)", default=0.0,
           group="segmentation", parse=float, check=_non_negative_float, metavar="X"),
    # ---------------------------------------------------------- tokenization
    Option("max_sentences", "train on the first N sentences only", group="tokenization",
           check=lambda v: None if v is None else _int_at_least(1)(v)),
    # ---------------------------------------------------------- word clusters
    Option("clusters", "Brown clusters as features: a bitstring<TAB>word<TAB>count file (in Python also "
           "a dict word -> bit string); stored in the model (seg: clusters of characters)", group="clusters",
           parse=str, metavar="FILE", reads=True),
    Option("n_clusters", "clusters to learn (the leaves of the tree; at most 5000)", default=1000,
           group="cluster", parse=int, check=_int_between(2, 5000), metavar="N", phases=("cluster",),
           flag_name="clusters"),
    Option("min_count", "cluster only words seen at least N times", default=2, group="cluster",
           parse=int, check=_int_at_least(1), metavar="N", phases=("cluster",)),
    Option("iterations", "exchange passes at most (it stops when no word moves)", default=15,
           group="cluster", parse=int, check=_int_at_least(0), metavar="N", phases=("cluster",)),
    # ---------------------------------------------------------- evaluation
    Option("words", "training word list for OOV recall (segmentation) or unknown-word accuracy (pos)",
           group="words", parse=str, metavar="FILE", phases=("eval",), check=None,
           reads=True),
]

BY_NAME = {o.name: o for o in OPTIONS}


def resolve(task, phase, given, what=None, cli=False):
    """The options of ``task`` for ``phase`` ("train", "eval" or "tag"):
    ``given`` checked and completed with the defaults.

    An unknown keyword is a TypeError, as for any Python function.  A
    known option that does not apply to this task, or a bad value, is an
    InputError naming the option (by its flag with ``cli``)."""
    def named(opt):
        return opt.flag if cli else f"option {opt.name}"
    out = {}
    for name, value in given.items():
        opt = BY_NAME.get(name)
        if opt is None or phase not in opt.phases:
            raise TypeError(f"{what or task}: unexpected keyword argument {name!r}")
        if not opt.applies(task):
            if value is None or (not cli and value == opt.default_for(task)):
                continue
            raise InputError(f"{named(opt)} does not apply to {_task_text(task)} models")
        if value is not None and opt.check is not None:
            err = opt.check(value)
            if err:
                raise InputError(f"{named(opt)} {err}")
        out[name] = _plain(value)
    for opt in OPTIONS:
        if opt.applies(task) and phase in opt.phases and out.get(opt.name) is None:
            out[opt.name] = opt.default_for(task)
    for opt in OPTIONS:
        needs = opt.extra.get("needs")
        if needs and given.get(opt.name) is None and "default_without" in opt.extra \
                and out.get(needs[0]) != needs[1]:
            out[opt.name] = opt.extra["default_without"]     # k of NER trained without MIRA
        if needs and opt.name in given and given[opt.name] is not None \
                and given[opt.name] not in (opt.default_for(task), opt.extra.get("default_without")) \
                and not (out.get(needs[0]) is not None if needs[1] is ... else out.get(needs[0]) == needs[1]):
            need = needs[0] if needs[1] is ... else f"{needs[0]} {needs[1]}"
            raise InputError(f"{named(opt)} applies to {'--' if cli else ''}{need} only")
    return out


_OPTION_NAME = re.compile(r"\boption ([A-Za-z][A-Za-z_]*)\b(?:=('[^'\s]*'|True|-?\d+(?:\.\d+)?)(?![\w.]))?")


def cli_text(message, flags=None, commands=None):
    """``message`` for the command line: ``option NAME[=VALUE]`` becomes
    ``--NAME [VALUE]`` where the command has that flag (``flags``: a set or
    {flag: its choices}; None: any); a value its flag does not take is quoted
    with the first of ``commands`` ({command: flags}) that takes it."""
    def flag(m):
        name, value = m.group(1), m.group(2)
        opt = BY_NAME.get(name)
        if opt is not None and opt.parse is None or opt is None and flags is None:
            return m.group()
        text = opt.flag if opt is not None else "--" + name.replace("_", "-")
        if flags is not None and text not in flags:
            return m.group()
        if value == "True":
            return text if opt is None or opt.extra.get("flag") else m.group()
        if value is None:
            return text
        value = value.strip("'")
        for command, known in [(None, flags)] + list((commands or {}).items()):
            choices = known.get(text) if isinstance(known, dict) else None
            if known is None or text in known and (choices is None or value in choices):
                return f"{text} {value}" if command is None else f"'fasttag {command} {text} {value}'"
        return m.group()
    return _OPTION_NAME.sub(flag, message)


def _plain(value):
    """numpy's numbers (a grid search's ``np.arange``) as Python's, which
    the model file's JSON header stores."""
    if isinstance(value, numbers.Number) and type(value) not in (int, float, complex):
        return value.item() if hasattr(value, "item") else value
    return value


def _task_text(task):
    entry = registry.TASKS.get(task)
    return task if entry is None else entry.title


def for_cli(task, phase):
    """The options with a flag that apply to ``task`` in ``phase``."""
    return [o for o in OPTIONS if o.parse is not None and o.applies(task) and phase in o.phases]
