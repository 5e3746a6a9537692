"""Would second-order transitions pay for chunking?  A reference measurement.

    python benchmarks/bench_second_order.py --clusters CLUSTERS [--epochs 8] [--orders 1,2] [--seed 0]

fasttag's decoder is first order: a tag's score depends on the tag before
it.  A second-order model also scores each tag triple.  This script trains
the averaged structured perceptron in plain numpy, once per order, on the
same feature keys as the chunker (fasttag's span featurizer, with
clusters), the same 8 epochs and the same BIOES transition mask, on
CoNLL-2000 training minus its last 936 sentences.  It prints the
held-out dev F1 after each epoch and the test F1 at the end.  The
first-order run reproduces fasttag's own chunker (95.05 dev against 95.06),
so the difference between the two orders is the second order's.

Slow (the second-order run takes about 45 s an epoch): a measurement to
decide on, not a tagger.  The decoder is checked against brute force on
small random lattices before training.  Needs ``../shared/data``.
"""
import argparse
import itertools
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import harness as H  # noqa: E402


class Averaged:
    """Weights with their running average (w - u / c after c steps)."""

    def __init__(self, shape):
        self.w, self.u = np.zeros(shape), np.zeros(shape)

    def add(self, index, value, step):
        np.add.at(self.w, index, value)
        np.add.at(self.u, index, step * value)

    def average(self, step):
        return self.w - self.u / step


def decode(em, w1, w2, masks, order):
    """Best tag sequence.  ``em``: (n, T) emission scores; ``w1`` (T+1, T+1)
    and ``w2`` (T+1, T+1, T+1) transition weights, index T standing for the
    start (as a previous tag) and the end (as a next tag); ``masks``:
    (prev -> cur, start -> cur, cur -> end) as 0 or -inf."""
    A, S, E = masks
    n, T = em.shape
    if order == 1:
        d = em[0] + w1[T, :T] + S
        back = []
        for i in range(1, n):
            s = d[:, None] + w1[:T, :T] + A
            b = s.argmax(0)
            back.append(b)
            d = s[b, np.arange(T)] + em[i]
        y = [int((d + w1[:T, T] + E).argmax())]
        for b in reversed(back):
            y.append(int(b[y[-1]]))
        return y[::-1]
    d = np.full((T + 1, T), -np.inf)         # state (previous tag, tag); previous T: the start
    d[T] = em[0] + w1[T, :T] + w2[T, T, :T] + S
    trans = w1[:T, :T] + A
    back = []
    for i in range(1, n):
        s = d[:, :, None] + w2[:, :T, :T]     # (tag before the previous, previous, tag)
        b = s.argmax(0)
        d = np.full((T + 1, T), -np.inf)
        d[:T] = np.take_along_axis(s, b[None], 0)[0] + trans + em[i][None, :]
        back.append(b)
    final = d + w1[:T, T][None, :] + w2[:, :T, T] + E[None, :]
    p, c = np.unravel_index(int(np.argmax(final)), final.shape)
    if n == 1:
        return [int(c)]
    y = [int(c), int(p)]
    for i in range(len(back) - 1, 0, -1):
        y.append(int(back[i][y[-1], y[-2]]))
    return y[::-1]


def path_parts(y, T):
    """The tag pairs and triples of a path, with the start and end (T)."""
    ext = [T, T] + list(y) + [T]
    return ([(ext[i], ext[i + 1]) for i in range(1, len(ext) - 1)],
            [(ext[i], ext[i + 1], ext[i + 2]) for i in range(len(ext) - 2)])


def check_decoder(trials=300, T=4):
    """Both orders against brute force over every sequence of small lattices."""
    rng = np.random.default_rng(1)
    allowed = rng.random((T + 2, T)) > 0.2
    masks = tuple(np.where(a, 0.0, -np.inf) for a in (allowed[:T], allowed[T], allowed[T + 1]))
    for _ in range(trials):
        n = int(rng.integers(1, 5))
        em, w1, w2 = rng.normal(size=(n, T)), rng.normal(size=(T + 1, T + 1)), rng.normal(size=(T + 1,) * 3)
        for order in (1, 2):
            def score(y):
                pairs, triples = path_parts(y, T)
                s = sum(em[i, y[i]] for i in range(n)) + masks[1][y[0]] + masks[2][y[-1]]
                s += sum(masks[0][y[i - 1], y[i]] for i in range(1, n)) + sum(w1[p] for p in pairs)
                return s + (sum(w2[t] for t in triples) if order == 2 else 0.0)
            best = max(score(y) for y in itertools.product(range(T), repeat=n))
            got = score(decode(em, w1, w2, masks, order))
            assert best == -np.inf or abs(got - best) < 1e-9, (order, n, got, best)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clusters", required=True, help="a clusters file (fasttag cluster)")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--orders", default="1,2")
    ap.add_argument("--holdout", type=int, default=936)
    ap.add_argument("--seed", type=int, default=0, help="seed of the per-epoch shuffle")
    args = ap.parse_args()
    from fasttag import SpanTagger
    from fasttag.text import formats as ftio
    from fasttag.text import schemes
    check_decoder()
    train = list(ftio.read_conll(H.data_path("conll2000", "train.txt")))
    test = list(ftio.read_conll(H.data_path("conll2000", "test.txt")))
    train, dev = train[:-args.holdout], train[-args.holdout:]
    tagger = SpanTagger.untrained(train, task="chunk", clusters=args.clusters)
    model, tags = tagger.model, tagger.model.tags
    T = len(tags)

    def featurize(data, training):
        examples = tagger._encode([(s, i) for i, s in enumerate(data)], training=training)
        keys, bounds, _, _ = model.featurize([(x, c) for x, c, _ in examples])
        return keys, np.asarray(bounds), [np.array(g) for _, _, g in examples]
    k_train, b_train, g_train = featurize(train, True)
    vocab, ids_train = np.unique(k_train.ravel(), return_inverse=True)
    ids_train = ids_train.reshape(k_train.shape)

    def ids_of(keys):                    # keys unseen in training read a row of zeros
        pos = np.minimum(np.searchsorted(vocab, keys.ravel()), len(vocab) - 1)
        return np.where(vocab[pos] == keys.ravel(), pos, len(vocab)).reshape(keys.shape)
    held = {}
    for name, data in (("dev", dev), ("test", test)):
        keys, bounds, _ = featurize(data, False)
        held[name] = (ids_of(keys), bounds, data)
    allowed = np.asarray(model.allowed, dtype=bool).reshape(T + 2, T)
    masks = tuple(np.where(a, 0.0, -np.inf) for a in (allowed[:T], allowed[T], allowed[T + 1]))

    def f1(name, w, w1, w2, order):
        ids, bounds, data = held[name]
        pred = [[tags[t] for t in decode(w[ids[a:b]].sum(1), w1, w2, masks, order)]
                for a, b in zip(bounds[:-1], bounds[1:])]
        pred = [schemes.convert(p, "bioes", "iob2") for p in pred]
        return H.conll_f1([H.iob1_to_iob2(s.tags) for s in data], pred)["f1"]

    for order in (int(o) for o in args.orders.split(",")):
        emit, t1, t2 = Averaged((len(vocab) + 1, T)), Averaged((T + 1, T + 1)), Averaged((T + 1,) * 3)
        rng = np.random.default_rng(args.seed)
        step = 1
        for epoch in range(1, args.epochs + 1):
            t0 = time.process_time()
            for s in rng.permutation(len(b_train) - 1):
                a, b = b_train[s], b_train[s + 1]
                rows, gold = ids_train[a:b], g_train[s]
                pred = decode(emit.w[rows].sum(1), t1.w, t2.w if order == 2 else t2.w * 0, masks, order)
                if list(pred) != list(gold):
                    for i in np.flatnonzero(np.asarray(pred) != gold):
                        emit.add((rows[i], gold[i]), 1.0, step)
                        emit.add((rows[i], pred[i]), -1.0, step)
                    for y, sign in ((gold, 1.0), (pred, -1.0)):
                        pairs, triples = path_parts(y, T)
                        for p in pairs:
                            t1.add(p, sign, step)
                        if order == 2:
                            for t in triples:
                                t2.add(t, sign, step)
                step += 1
            w, w1, w2 = emit.average(step), t1.average(step), t2.average(step)
            print(f"order {order}  epoch {epoch}  held-out dev F1 {100 * f1('dev', w, w1, w2, order):.2f}  "
                  f"{time.process_time() - t0:.0f} CPU s", flush=True)
        print(f"order {order}  test F1 {100 * f1('test', w, w1, w2, order):.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
