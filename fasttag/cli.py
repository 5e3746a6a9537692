"""The ``fasttag`` command: a thin shell over functions that return data.

    fasttag train pos|seg|chunk|ner TRAIN -o MODEL [options]
    fasttag tag [-m MODEL] [INPUT]           POS tags, or chunk/NER columns
    fasttag segment [-m MODEL] [INPUT]       Chinese word segmentation
    fasttag eval MODEL TEST [--json]

Every option's name, default and help live in this module; the work is done
by the task modules (:mod:`fasttag.tagger`, :mod:`fasttag.segmenter`,
:mod:`fasttag.spantagger`), whose ``*_command`` functions take the parsed
arguments.
"""
import argparse
import io as _io
import itertools
import json
import sys

from . import io as ftio
from .errors import FasttagError
from .loading import default_model_path, load

SENTENCES_PER_BATCH = 5000


def _column(value):
    """--column: "upos", "xpos" or a 0-based column index."""
    if value in ("upos", "xpos"):
        return value
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected upos, xpos or a column number, not {value!r}") from None


def _int_list(value):
    try:
        return [int(v) for v in value.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated column numbers, not {value!r}") from None


def _add_learning_options(p):
    p.add_argument("-o", "--output", required=True, metavar="MODEL", help="where to write the model")
    p.add_argument("--dev", metavar="DEV", help="development set: the best epoch on it is kept")
    p.add_argument("--epochs", type=int, default=None, metavar="N", help="training epochs (task default)")
    p.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the per-epoch shuffle (default 0)")
    p.add_argument("--algorithm", choices=("perceptron", "mira"), default="perceptron",
                   help="structured perceptron (default) or k-best MIRA")
    p.add_argument("--k", type=int, default=1, metavar="K", help="k best sequences per MIRA update (default 1)")
    p.add_argument("--C", type=float, default=None, metavar="C", help="MIRA aggressiveness (default 1.0)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")


def build_parser():
    parser = argparse.ArgumentParser(prog="fasttag", description="Fast trainable sequence taggers.")
    sub = parser.add_subparsers(dest="command", required=True)

    train = sub.add_parser("train", help="train a model")
    tasks = train.add_subparsers(dest="task", required=True)

    pos = tasks.add_parser("pos", help="part-of-speech tagger from CoNLL-U or column files")
    pos.add_argument("train", metavar="TRAIN")
    _add_learning_options(pos)
    pos.add_argument("--format", choices=("conllu", "conll"), help="input format (guessed when omitted)")
    pos.add_argument("--column", type=_column, default=None,
                     help="tag column: upos (default) or xpos for CoNLL-U, a 0-based index for column files "
                          "(default: the last column)")
    pos.add_argument("--word-column", type=int, default=0, help="word column of column files (default 0)")
    pos.add_argument("--decoder", choices=("viterbi", "greedy"), default="viterbi")
    pos.add_argument("--tagdict-min-count", type=int, default=None, metavar="N",
                     help="words seen N+ times take only their seen tags (0: off)")

    seg = tasks.add_parser("seg", help="Chinese word segmenter from one sentence per line, words separated by spaces")
    seg.add_argument("train", metavar="TRAIN")
    _add_learning_options(seg)
    seg.add_argument("--dict", metavar="FILE", help="user dictionary: one word per line (optional weight)")

    for task in ("chunk", "ner"):
        p = tasks.add_parser(task, help=f"{'chunker' if task == 'chunk' else 'named-entity tagger'} from column files")
        p.add_argument("train", metavar="TRAIN")
        _add_learning_options(p)
        p.add_argument("--scheme", choices=("iob1", "iob2", "bioes"), default=None,
                       help="tag scheme of the files (detected when omitted)")
        p.add_argument("--column", type=int, default=None, metavar="N", help="tag column (default: last)")
        p.add_argument("--word-column", type=int, default=0, metavar="N", help="word column (default 0)")
        p.add_argument("--feature-columns", type=_int_list, default=None, metavar="N,M",
                       help="columns used as features (default: every other column)")
        p.add_argument("--gazetteer", action="append", default=[], metavar="TYPE=FILE",
                       help="entries of one type, one per line (repeatable)")

    tag = sub.add_parser("tag", help="tag text, CoNLL-U or column files")
    tag.add_argument("input", nargs="?", metavar="INPUT", help="input file (default: standard input)")
    tag.add_argument("-m", "--model", help="model file (default: the bundled English POS model)")
    tag.add_argument("--format", choices=("text", "conllu", "conll"),
                     help="input format (guessed when omitted)")
    tag.add_argument("--column", type=_column, default=None, help="CoNLL-U column to fill: upos or xpos")
    tag.add_argument("-o", "--output", help="output file (default: standard output)")

    segment = sub.add_parser("segment", help="segment Chinese text, one line in, one line out")
    segment.add_argument("input", nargs="?", metavar="INPUT", help="input file (default: standard input)")
    segment.add_argument("-m", "--model", help="model file (default: the bundled Chinese model)")
    segment.add_argument("--dict", metavar="FILE", help="user dictionary whose words are kept whole")
    segment.add_argument("-o", "--output", help="output file (default: standard output)")

    ev = sub.add_parser("eval", help="evaluate a model on gold data")
    ev.add_argument("model", metavar="MODEL")
    ev.add_argument("test", metavar="TEST")
    ev.add_argument("--format", choices=("conllu", "conll"), help="test file format (default: as trained)")
    ev.add_argument("--column", type=_column, default=None, help="gold tag column (default: as trained)")
    ev.add_argument("--words", metavar="TRAINING_WORDS", help="segmentation: training word list for OOV recall")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    return parser


# ---------------------------------------------------------------- POS

def _peek_format(stream):
    """Guess the format of a (possibly unseekable) binary stream from the
    bytes already buffered, consuming nothing."""
    head = stream.peek(1 << 16) if hasattr(stream, "peek") else b""
    lines = head.decode("utf-8", errors="replace").splitlines()
    if len(lines) > 1 and not head.endswith(b"\n"):
        lines = lines[:-1]       # the last line may be cut short
    return ftio.guess_format(_io.StringIO("\n".join(lines) + "\n"))


def _open_out(path):
    return open(path, "w", encoding="utf-8", newline="\n") if path else sys.stdout


def train_pos_command(args):
    from .tagger import Tagger
    options = {}
    if args.tagdict_min_count is not None:
        options["tagdict_min_count"] = args.tagdict_min_count
    tagger = Tagger.train(args.train, dev=args.dev, format=args.format, column=args.column,
                          word_column=args.word_column, epochs=args.epochs or 10, seed=args.seed,
                          decoder=args.decoder, algorithm=args.algorithm, k=args.k, C=args.C,
                          verbose=None if not args.quiet else False, **options)
    tagger.save(args.output)
    info = tagger.model.training_info
    print(f"saved {args.output}: best epoch {info.get('best_epoch')}"
          + (f", dev accuracy {info['dev_score']:.4f}" if info.get("dev_score") is not None else ""),
          file=sys.stderr)
    return 0


def tag_pos_command(tagger, args):
    """Stream sentences through the tagger in batches."""
    source = args.input if args.input else sys.stdin.buffer
    fmt = args.format or (ftio.guess_format(args.input) if args.input else _peek_format(source))
    column = args.column or "upos"
    out = _open_out(args.output)
    try:
        sentences = ftio.read(source, format=fmt, column=column if fmt == "conllu" else None) \
            if fmt != "conll" else ftio.read_conll(source, tag_column=None)
        while True:
            batch = list(itertools.islice(sentences, SENTENCES_PER_BATCH))
            if not batch:
                break
            tags = tagger.tag_sents([s.words for s in batch])
            for sent, ts in zip(batch, tags):
                if fmt == "conllu":
                    ftio.write_conllu(sent, ts, out, column=column)
                elif fmt == "conll":
                    ftio.write_conll(sent, ts, out, mode="append")
                else:
                    ftio.write_text(sent, ts, out)
    finally:
        if out is not sys.stdout:
            out.close()
        else:
            out.flush()
    return 0


def eval_pos_command(tagger, args):
    result = tagger.evaluate(args.test, format=args.format, column=args.column)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    print(f"accuracy          {100 * result['accuracy']:.2f}%   ({result['tokens']} tokens)")
    print(f"known words       {100 * result['known_accuracy']:.2f}%")
    print(f"unknown words     {100 * result['unknown_accuracy']:.2f}%   ({result['unknown_tokens']} tokens)")
    print(f"speed             {result['tokens_per_second']:,.0f} tokens/s")
    print()
    print(f"{'tag':<10} {'precision':>9} {'recall':>9} {'f1':>9} {'support':>8}")
    for t, r in result["per_tag"].items():
        print(f"{t:<10} {100 * r['precision']:9.2f} {100 * r['recall']:9.2f} {100 * r['f1']:9.2f} {r['support']:8d}")
    if result["confusions"]:
        print()
        print("most frequent confusions (gold -> predicted)")
        for g, p, c in result["confusions"][:10]:
            print(f"  {g:<8} -> {p:<8} {c}")
    return 0


# ---------------------------------------------------------------- dispatch

def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return _run(args)
    except FasttagError as exc:
        print(f"fasttag: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0
    except OSError as exc:                 # a missing or unreadable file the user named
        where = f"{exc.filename}: " if exc.filename is not None else ""
        print(f"fasttag: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _run(args):
    if args.command == "train":
        if args.task == "pos":
            return train_pos_command(args)
        if args.task == "seg":
            from .segmenter import train_command
            return train_command(args)
        from .spantagger import train_command
        return train_command(args)
    if args.command == "segment":
        from .segmenter import segment_command
        return segment_command(args)
    model = load(args.model if args.command == "eval" else (args.model or default_model_path("en")))
    kind = type(model).__name__
    if args.command == "tag":
        if kind == "Tagger":
            return tag_pos_command(model, args)
        if kind == "SpanTagger":
            from .spantagger import tag_command
            return tag_command(model, args)
        raise FasttagError(f"{args.model} is a {kind} model: use 'fasttag segment'")
    if args.command == "eval":
        if kind == "Tagger":
            return eval_pos_command(model, args)
        if kind == "Segmenter":
            from .segmenter import eval_command
            return eval_command(model, args)
        from .spantagger import eval_command
        return eval_command(model, args)
    raise AssertionError(args.command)


if __name__ == "__main__":
    sys.exit(main())
