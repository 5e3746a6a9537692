"""Confidence of a sequence model's output: the k best tag sequences,
per-token marginal probabilities, span probabilities, and the temperature
that calibrates them.

The scores are read as a linear-chain CRF with temperature tau, fitted on
held-out data since the perceptron never optimised that likelihood; the
lattice is the decoder's, without ``prune_k`` (docs/python-api.md).
"""
import math

import numpy as np

from .._core.kbest import kbest
from ..errors import InputError
from ..text.output import MAX_NBEST
from .sequence import BATCH_TOKENS, example_batches

ECE_BINS = 15


def _logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        out = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    return np.squeeze(out, axis=axis)


def _split(v, T):
    """(tag x tag, start, end) parts of a flat transition vector."""
    return v[:T * T].reshape(T, T), v[T * T:T * T + T], v[(T + 1) * T:]


class Lattice:
    """Emission scores of one sentence (``n x T``, -inf for tags that are
    not candidates) with the model's transition scores and mask."""

    def __init__(self, emissions, trans, allowed):
        T = emissions.shape[1]
        self.E = emissions
        self.unmasked = _split(np.asarray(trans, dtype=np.float64), T)
        self.A, self.start, self.end = self.unmasked
        if allowed is not None:
            ok = _split(np.asarray(allowed, dtype=bool), T)
            self.A, self.start, self.end = (np.where(m, v, -np.inf) for m, v in zip(ok, self.unmasked))

    def _transitions(self, tau, use_mask=True):
        A, start, end = (self.A, self.start, self.end) if use_mask else self.unmasked
        return A / tau, start / tau, end / tau

    def _run(self, tau):
        """Forward-backward over the sentence: (alpha, beta, log Z, the
        transitions used); the mask is dropped when no sequence is valid
        under it (as the decoder does)."""
        for use_mask in (True, False):
            A, start, end = self._transitions(tau, use_mask)
            alpha, beta, log_z = forward_backward(self.E[None] / tau, np.array([self.E.shape[0]]), A, start, end)
            if math.isfinite(log_z[0]) or not use_mask:
                return alpha[0], beta[0], log_z[0], (A, start, end)

    def marginals(self, tau=1.0):
        """``n x T`` probabilities that token i has tag t."""
        if self.E.shape[0] == 0:
            return np.zeros(self.E.shape)
        alpha, beta = self._run(tau)[:2]
        return posteriors(alpha + beta)

    def probability(self, constraints, tau=1.0):
        """The probability that every position of ``constraints`` (position
        -> allowed tag ids) has one of its tags, scaled by the unconstrained
        pass's normalisers so no two huge log partition functions subtract."""
        if self.E.shape[0] == 0:
            return 1.0
        A, start, end = self._run(tau)[3]
        n = self.E.shape[0]
        lengths = np.array([n])
        E = self.E[None] / tau
        alpha, norms = _forward(E, lengths, A, start)
        kept = E.copy()
        for i, tags in constraints.items():
            keep = np.full(E.shape[2], -np.inf)
            keep[list(tags)] = 0.0
            kept[0, i] = kept[0, i] + keep
        alpha_c = _forward(kept, lengths, A, start, norms)[0]
        log_p = _logsumexp(alpha_c[0, n - 1] + end, axis=0) - _logsumexp(alpha[0, n - 1] + end, axis=0)
        return math.exp(min(0.0, float(log_p))) if not math.isnan(log_p) else 0.0


def lattices(model, examples, emit=None, trans=None):
    """One :class:`Lattice` per ``(input, context)`` example, scored with the
    model's weights (or ``emit``/``trans``)."""
    emit = model.emit if emit is None else emit
    trans = model.trans if trans is None else trans
    T = len(model.tags)
    for chunk in example_batches(examples, BATCH_TOKENS):
        keys, bounds, cands, _ = model.featurize(chunk)
        N, F = keys.shape
        offsets = np.arange(0, N * F + 1, F, dtype=np.int64) if F else np.zeros(N + 1, np.int64)
        scores = emit.score_batch(np.ascontiguousarray(keys).ravel(), offsets, n_classes=T)
        if cands is not None:
            classes, class_offsets, class_tags = cands
            for i in np.flatnonzero(np.asarray(classes) >= 0):
                c = classes[i]
                row = np.full(T, -np.inf)
                ids = class_tags[class_offsets[c]:class_offsets[c + 1]]
                row[ids] = scores[i, ids]
                scores[i] = row
        for s in range(len(bounds) - 1):
            yield Lattice(scores[bounds[s]:bounds[s + 1]], trans, model.allowed)


def marginals(model, examples, temperature=1.0):
    """Per example an ``n x T`` array of tag probabilities (columns in the
    order of ``model.tags``)."""
    return batch_marginals(list(lattices(model, examples)), temperature)


def batch_marginals(lats, tau=1.0, max_cells=1 << 22, max_group=256):
    """:meth:`Lattice.marginals` of many lattices of one model, sentences of
    similar length padded into one array (``max_group`` and ``max_cells``
    bound it)."""
    out = [None] * len(lats)
    if not lats:
        return out
    T = lats[0].E.shape[1]
    order = sorted(range(len(lats)), key=lambda i: lats[i].E.shape[0])
    group = max(1, min(max_group, max_cells // (T * T)))
    for g in range(0, len(order), group):
        idx = order[g:g + group]
        for i, p in zip(idx, _lockstep(lats[0], [lats[i].E for i in idx], tau)):
            out[i] = p if p is not None else lats[i].marginals(tau)
    return out


def _normalised(v, given=None):
    """``v`` (B x T log scores) shifted per row by its log-sum-exp (or by
    ``given``), and the shifts: rows of all -inf stay as they are."""
    z = _logsumexp(v, axis=1) if given is None else given
    return v - np.where(np.isfinite(z), z, 0.0)[:, None], z


def _forward(E, lengths, A, start, norms=None):
    """The forward pass of :func:`forward_backward`: alpha with each row
    normalised, and the normalisers (B x n), or ``norms`` subtracted instead."""
    B, n, T = E.shape
    alpha = np.empty((B, n, T))
    c = np.zeros((B, n))
    alpha[:, 0], c[:, 0] = _normalised(start + E[:, 0], None if norms is None else norms[:, 0])
    for i in range(1, n):
        step, z = _normalised(_logsumexp(alpha[:, i - 1, :, None] + A[None], axis=1) + E[:, i],
                              None if norms is None else norms[:, i])
        live = i < lengths
        alpha[:, i] = np.where(live[:, None], step, alpha[:, i - 1])
        c[:, i] = np.where(live, z, 0.0)
    return alpha, c


def forward_backward(E, lengths, A, start, end):
    """Log-space forward-backward of a batch: ``E`` (B x n x T) emission
    scores, sentence b using its first ``lengths[b]`` rows; ``A``,
    ``start`` and ``end`` the transition scores (-inf: forbidden).  Returns
    alpha and beta (B x n x T) and log Z (B).

    Every row of alpha and beta is shifted by its own log-sum-exp, so
    ``posteriors(alpha + beta)`` stay exact for huge weights, where
    alpha + beta - log Z would cancel huge numbers."""
    B, n, T = E.shape
    alpha, c = _forward(E, lengths, A, start)
    beta = np.empty((B, n, T))
    last = np.broadcast_to(_normalised(end[None])[0], (B, T))
    beta[:, n - 1] = last
    for i in range(n - 2, -1, -1):
        step = _normalised(_logsumexp(A[None] + (E[:, i + 1] + beta[:, i + 1])[:, None, :], axis=2))[0]
        beta[:, i] = np.where((i < lengths - 1)[:, None], step, last)
    with np.errstate(invalid="ignore"):
        log_z = c.sum(axis=1) + _logsumexp(alpha[:, n - 1] + end, axis=1)
    return alpha, beta, np.where(np.isnan(log_z), -np.inf, log_z)


def posteriors(scores):
    """The softmax of each row of ``scores`` (n x T log scores)."""
    m = np.max(scores, axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        p = np.exp(scores - np.where(np.isfinite(m), m, 0.0))
    p = np.nan_to_num(p, nan=0.0)
    return p / np.maximum(p.sum(axis=1, keepdims=True), np.finfo(float).tiny)


def _lockstep(lat, Es, tau):
    """Marginals of emission matrices ``Es`` under ``lat``'s transitions;
    None where no path is valid under the mask (the caller falls back)."""
    lengths = np.array([E.shape[0] for E in Es])
    B, n, T = len(Es), int(lengths.max()), lat.A.shape[0]
    if n == 0:
        return [np.zeros((0, T)) for _ in Es]
    E = np.zeros((B, n, T))
    for b, e in enumerate(Es):
        E[b, :len(e)] = e / tau
    alpha, beta, log_z = forward_backward(E, lengths, lat.A / tau, lat.start / tau, lat.end / tau)
    out = []
    for b, m in enumerate(lengths):
        if m == 0:
            out.append(np.zeros((0, T)))
        elif not np.isfinite(log_z[b]):
            out.append(None)
        else:
            out.append(posteriors(alpha[b, :m] + beta[b, :m]))
    return out


def nbest_ids(model, examples, k):
    """Per example the ``k`` best tag-id sequences as ``(score, ids)``,
    best first (fewer when there are fewer valid sequences)."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"n_best must be a positive integer, not {k!r}")
    if k > MAX_NBEST:
        raise ValueError(f"n_best must be at most {MAX_NBEST}, not {k}")
    if model.decoder == "greedy":       # its best sequence would not be the k-best list's first
        raise InputError("n-best lists need Viterbi decoding: this model decodes greedily (trained with "
                         "decoder greedy)")
    out = []
    for chunk in example_batches(examples, BATCH_TOKENS):
        keys, bounds, cands, _ = model.featurize(chunk)
        search = model.search(model.emit, model.trans, cands)
        out.extend(kbest(search, keys, bounds, int(k)))
    return out


def fit_temperature(model, examples, gold, lo=0.05, hi=50.0, tol=0.01, per_token=False):
    """The temperature minimising the negative log-likelihood of the
    ``gold`` tag ids under the marginals (golden-section search over log
    tau in [``lo``, ``hi``]); 1.0 when there is nothing to fit on.
    ``per_token``: under each position's softmax of its emission scores
    alone, for models of thousands of tags whose forward-backward would
    cost T squared a token (a lemmatizer's edit scripts)."""
    lats = list(lattices(model, examples))
    pairs = [(lat, np.asarray(g)) for lat, g in zip(lats, gold) if len(g) and np.all(np.asarray(g) >= 0)]
    if not pairs:
        return 1.0
    lats = [lat for lat, _ in pairs]
    gold = [g for _, g in pairs]

    def nll(log_tau):
        total = 0.0
        tau = math.exp(log_tau)
        found = [posteriors(lat.E / tau) for lat in lats] if per_token else batch_marginals(lats, tau)
        for p, g in zip(found, gold):
            total -= float(np.sum(np.log(np.maximum(p[np.arange(len(g)), g], 1e-12))))
        return total

    a, b = math.log(lo), math.log(hi)
    phi = (math.sqrt(5) - 1) / 2
    c, d = b - phi * (b - a), a + phi * (b - a)
    fc, fd = nll(c), nll(d)
    while b - a > tol:
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - phi * (b - a)
            fc = nll(c)
        else:
            a, c, fc = c, d, fd
            d = a + phi * (b - a)
            fd = nll(d)
    return float(math.exp((a + b) / 2))


def expected_calibration_error(confidence, correct, bins=ECE_BINS):
    """ECE of per-token confidences against 0/1 correctness: the
    support-weighted mean |accuracy - confidence| over ``bins`` equal-width
    confidence bins (Naeini et al. 2015)."""
    confidence = np.asarray(confidence, dtype=np.float64)
    correct = np.asarray(correct, dtype=np.float64)
    if len(confidence) == 0:
        return 0.0
    which = np.minimum((confidence * bins).astype(int), bins - 1)
    ece = 0.0
    for b in range(bins):
        sel = which == b
        if sel.any():
            ece += sel.mean() * abs(correct[sel].mean() - confidence[sel].mean())
    return float(ece)
