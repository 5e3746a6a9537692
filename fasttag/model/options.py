"""Every option of training and reading, in one table.

Each :class:`Option` gives its Python keyword, its command-line flag, its
default per task, its type and valid range, and its help text.  The task
classes resolve their keyword arguments through :func:`resolve`.  The
command line builds its ``train``, ``tag`` and ``eval`` options from the
same table (:mod:`fasttag.cli`).  So a default or a range is written
once, and the API and the CLI agree on it.

An option that does not apply to a task is refused, never ignored.  An
out-of-range value is refused before any work starts.
"""
import argparse
import math
import numbers
import re
from dataclasses import dataclass, field

from ..errors import InputError

# MIRA's k: each update solves for the k best sequences' constraints
# together, at a cost that grows faster than k squared (62 tokens: k=50
# 0.15 s, k=200 1.4 s, k=999 40 s).  The defaults are 1 and 3, and the
# literature uses up to about 20; a model file's k is bounded the same
# way, so that fine-tuning or update() cannot be made to run for hours.
MAX_MIRA_K = 64

ALL = ("pos", "seg", "chunk", "ner", "spans", "tok", "features")
TEMPLATE_TASKS = ("pos", "seg", "chunk", "ner", "spans", "tok")   # features: the caller's dicts are the features
WORD_TASKS = ("pos", "chunk", "ner", "spans")
TAG_SET_TASKS = WORD_TASKS + ("features",)                      # tasks whose tags come from the data
SPAN_TASKS = ("chunk", "ner", "spans")   # spans: a span tagger trained with no task named


@dataclass(frozen=True)
class Option:
    """One option.  ``default`` is a value or a {task: value} dict.
    ``parse`` turns a command-line string into a value (None: the option
    has no flag).  ``check(value)`` returns an error text or None.
    ``reads``: the value names a file the command reads (``TYPE=FILE``:
    the part after ``=``), which no output of the command may replace."""
    name: str
    help: str
    default: object = None
    tasks: tuple = ALL
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
        if isinstance(self.default, dict):
            return self.default.get(task)
        return self.default


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


def _str_or_none(v):
    if v is not None and not isinstance(v, str):
        return f"must be a str, not {type(v).__name__}"


OPTIONS = [
    # ---------------------------------------------------------- learning
    Option("epochs", "training epochs", default={"pos": 10, "seg": 12, "chunk": 8, "ner": 15, "spans": 10, "tok": 20,
                                                    "features": 10},
           parse=int, check=_int_at_least(1), metavar="N"),
    Option("seed", "seed of the per-epoch shuffle (cluster: of the first classes)", default=0, parse=int,
           check=_int_at_least(0), metavar="S", tasks=ALL + ("cluster",), phases=("train", "cluster")),
    # NER, segmentation and chunking: 3-best MIRA, chosen on CoNLL-2003 testa (+0.6 F1), People's
    # Daily 1998 dev (+0.15 F1) and held-out CoNLL-2000 training sentences (three seeds: +0.13 F1
    # alone, +0.22 with the chunk templates; 2-2.5x the training time)
    Option("algorithm", "structured perceptron (Collins) or k-best MIRA",
           default={**{t: "perceptron" for t in ALL}, "ner": "mira", "seg": "mira", "chunk": "mira"},
           parse=str, choices=("perceptron", "mira"), check=_one_of("perceptron", "mira")),
    Option("k", "MIRA: best sequences per update", default={**{t: 1 for t in ALL}, "ner": 3, "seg": 3, "chunk": 3},
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
    Option("templates", "feature templates (default: the task's)", tasks=TEMPLATE_TASKS),
    Option("verbose", "progress lines on standard error (default: when it is a terminal)"),
    Option("allow_new_tags", "fine-tuning: add the tags of the new data the model does not know",
           default=False, tasks=TAG_SET_TASKS, check=_one_of(True, False), parse=bool,
           extra={"flag": True, "needs": ("init", ...)}),
    Option("init", "fine-tune this model (its features, tags and settings) instead of training anew",
           parse=str, metavar="MODEL", reads=True),
    Option("corpus", "name of the training corpus, stored in the model", check=_str_or_none),
    Option("licence", "licence of the training corpus, stored in the model", check=_str_or_none),
    # ---------------------------------------------------------- decoding
    Option("decoder", "Viterbi or greedy left-to-right decoding", default="viterbi",
           tasks=TAG_SET_TASKS, parse=str, choices=("viterbi", "greedy"), check=_one_of("viterbi", "greedy")),
    Option("tagdict_min_count", "words seen N+ times take only their seen tags (0: off; default: by tag count)",
           tasks=("pos",), parse=int, check=lambda v: None if v is None else _int_at_least(0)(v), metavar="N"),
    Option("prune_k", "open words keep their K best tags (0: all; default: by tag count)",
           tasks=("pos",), parse=int, check=lambda v: None if v is None else _int_at_least(0)(v), metavar="K"),
    # ---------------------------------------------------------- reading
    Option("format", "file format (default: guessed, or as trained)", tasks=("pos", "seg"),
           parse=str, choices=("conllu", "conll", "text"), phases=("train", "eval", "tag"),
           check=lambda v: None if v is None else _one_of("conllu", "conll", "text")(v)),
    Option("column", "tag column: upos or xpos for CoNLL-U, a 0-based index for column files "
           "(default: upos, or the last column)", tasks=WORD_TASKS, parse=_parse_column,
           check=_column_value, phases=("train", "eval", "tag")),
    Option("word_column", "word column of column files", default=0, tasks=WORD_TASKS,
           parse=int, check=_int_at_least(0), metavar="N", phases=("train", "eval")),
    Option("feature_columns", "columns used as features beside the words, 0-based (default: none for ner, "
           "so that its model tags raw text; every other column for chunk)", default={"ner": ()},
           tasks=SPAN_TASKS, parse=_parse_int_list, check=_int_list, metavar="N,M"),
    Option("scheme", "tag scheme of the files (default: detected)", tasks=SPAN_TASKS, parse=str,
           choices=("iob1", "iob2", "bioes"), check=lambda v: None if v is None else _one_of("iob1", "iob2", "bioes")(v),
           phases=("train", "eval")),
    Option("internal_scheme", "the scheme learned and decoded with", default="bioes", tasks=SPAN_TASKS,
           check=_one_of("bioes", "iob2")),
    Option("document_features", "document-level features (default: off for ner and chunk); they need whole "
           "documents (column files with -DOCSTART- lines), which raw text, tagged a sentence at a "
           "time, does not give",
           default={"chunk": False, "ner": False, "spans": True}, tasks=SPAN_TASKS, check=_one_of(True, False),
           parse=_parse_switch, metavar="on|off"),
    Option("ambiguity_classes", "features of the span types each word took in the training data "
           "(jackknifed; default: on for ner, off for chunk)",
           default={"chunk": False, "ner": True, "spans": False}, tasks=SPAN_TASKS, check=_one_of(True, False),
           parse=_parse_switch, metavar="on|off"),
    Option("gazetteers", "gazetteer entries of one type, one per line (repeatable); in Python a "
           "{type: path or entries} dict", tasks=SPAN_TASKS, parse=str, metavar="TYPE=FILE",
           flag_name="gazetteer", reads=True),
    # ---------------------------------------------------------- segmentation
    Option("dictionary", "user dictionary used as features: one word per line (optional weight)",
           tasks=("seg",), parse=str, metavar="FILE", flag_name="dict", reads=True),
    Option("folds", "jackknife folds of the vocabulary features (1: none)", default=3, tasks=("seg",),
           parse=int, check=_int_at_least(1), metavar="N"),
    Option("runs", "runs of letters (of alphabets written with spaces), digits, URLs and e-mail addresses "
           "kept whole; off for a language whose alphabet the runs would keep from being segmented (in "
           "Python True, False or a dict)", default=True, tasks=("seg",), parse=_parse_switch, metavar="on|off"),
    Option("unlabeled", "raw text whose strings of high accessor variety become word-candidate features "
           "(in Python also str lines); stored in the model", tasks=("seg",), parse=str, metavar="FILE",
           reads=True),
    Option("prune", "drop averaged weights smaller than this in absolute value (MIRA's weights are far "
           "smaller than the perceptron's; with dev data the pruned model is scored again)", default=0.0,
           tasks=("seg",), parse=float, check=_non_negative_float, metavar="X"),
    # ---------------------------------------------------------- tokenization
    Option("max_sentences", "train on the first N sentences only", tasks=("tok",),
           check=lambda v: None if v is None else _int_at_least(1)(v)),
    # ---------------------------------------------------------- word clusters
    Option("clusters", "Brown clusters as features: a bitstring<TAB>word<TAB>count file (in Python also "
           "a dict word -> bit string); stored in the model (seg: clusters of characters)", tasks=WORD_TASKS + ("seg",),
           parse=str, metavar="FILE", reads=True),
    Option("n_clusters", "clusters to learn (the leaves of the tree; at most 5000)", default=1000,
           tasks=("cluster",), parse=int, check=_int_between(2, 5000), metavar="N", phases=("cluster",),
           flag_name="clusters"),
    Option("min_count", "cluster only words seen at least N times", default=2, tasks=("cluster",),
           parse=int, check=_int_at_least(1), metavar="N", phases=("cluster",)),
    Option("iterations", "exchange passes at most (it stops when no word moves)", default=15,
           tasks=("cluster",), parse=int, check=_int_at_least(0), metavar="N", phases=("cluster",)),
    # ---------------------------------------------------------- evaluation
    Option("words", "training word list for OOV recall (segmentation) or unknown-word accuracy (pos)",
           tasks=("pos", "seg"), parse=str, metavar="FILE", phases=("eval",), check=None,
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
        if task not in opt.tasks:
            if value is None or (not cli and value == opt.default_for(task)):
                continue
            raise InputError(f"{named(opt)} does not apply to {_task_text(task)} models")
        if value is not None and opt.check is not None:
            err = opt.check(value)
            if err:
                raise InputError(f"{named(opt)} {err}")
        out[name] = _plain(value)
    for opt in OPTIONS:
        if task in opt.tasks and phase in opt.phases and out.get(opt.name) is None:
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


_OPTION_NAME = re.compile(r"\boption ([A-Za-z][A-Za-z_]*)\b")


def cli_text(message, flags=None):
    """``message`` of an error or warning for the command line: each
    ``option NAME`` that errors raised to Python use (see :func:`resolve`)
    becomes the option's flag, ``--NAME``, where the command has it
    (``flags``: the command's flags, None: any); so does a method's
    keyword outside the table (``option nbest``) that the command has as a
    flag.  Other names are kept."""
    def flag(m):
        opt = BY_NAME.get(m.group(1))
        if opt is None:         # a keyword of a method (tag_file's json, nbest): its flag where the command has one
            named = "--" + m.group(1).replace("_", "-")
            return named if flags is not None and named in flags else m.group()
        if opt.parse is None or (flags is not None and opt.flag not in flags):
            return m.group()
        return opt.flag
    return _OPTION_NAME.sub(flag, message)


def _plain(value):
    """numpy's numbers (a grid search's ``np.arange``) as Python's, which
    the model file's JSON header stores."""
    if isinstance(value, numbers.Number) and type(value) not in (int, float, complex):
        return value.item() if hasattr(value, "item") else value
    return value


def _task_text(task):
    return {"pos": "POS tagger", "seg": "segmenter", "chunk": "chunker", "ner": "named-entity",
            "spans": "span tagger", "tok": "tokenizer", "features": "feature tagger"}.get(task, task)


def for_cli(task, phase):
    """The options with a flag that apply to ``task`` in ``phase``."""
    return [o for o in OPTIONS if o.parse is not None and task in o.tasks and phase in o.phases]
