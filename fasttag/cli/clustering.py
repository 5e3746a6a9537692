"""``fasttag cluster``: Brown clusters of raw text
(:func:`fasttag.features.clusters.cluster`), written for ``train --clusters``."""
from ..errors import InputError
from ..model import options
from ..text import formats as ftio
from .messages import say
from .parser import given_options
from .paths import check_output, input_path


def cluster_command(args):
    import time
    from ..text import rawtext
    from ..tasks.rawtext_tokenizer import tokenizer_of
    from ..features.clusters import cluster
    given = given_options(args, [o.name for o in options.for_cli("cluster", "cluster")])
    opts = options.resolve("cluster", "cluster", given, cli=True)
    if args.raw.count("-") > 1:
        raise InputError("RAW names standard input ('-') twice")
    paths = [input_path(p, "RAW", stdin_ok=True) for p in args.raw]
    check_output(args.output, "-o")
    tokenizer = None if args.pretokenized or args.chars else tokenizer_of(None)
    sentences = []
    t0 = time.perf_counter()
    for path in paths:
        lines = ftio.read_lines(path, "the raw text")
        if args.chars:
            from ..features.segmentation import character_sentences
            sentences.extend(character_sentences(lines))
            continue
        found = rawtext.pretokenized_sentences(lines) if args.pretokenized else rawtext.raw_sentences(lines, tokenizer)
        sentences.extend(s.words for s in found)
    n_tokens = sum(map(len, sentences))
    if not args.quiet:
        say(f"read {n_tokens:,} tokens in {time.perf_counter() - t0:.1f} s")
    t1 = time.perf_counter()
    clusters = cluster(sentences, n_clusters=opts["n_clusters"], min_count=opts["min_count"],
                       seed=opts["seed"], iterations=opts["iterations"])
    try:
        clusters.save(args.output)
    except OSError as exc:
        raise InputError(f"cannot write the clusters ({exc.strerror})", path=args.output) from None
    if not args.quiet:
        say(f"saved {args.output}: {len(clusters):,} words in {len(set(clusters.values())):,} clusters "
            f"({time.perf_counter() - t1:.1f} s)")
    return 0
