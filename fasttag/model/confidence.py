"""Confidence of a sequence model's output: the k best tag sequences,
per-token marginal probabilities, span probabilities, and the temperature
that calibrates them.

The model's scores are read as a linear-chain CRF with temperature tau;
the perceptron never optimised that likelihood, so one scalar tau fitted
on held-out data (temperature scaling) makes the probabilities honest
without changing any decision.  The lattice is the decoder's: forbidden
transitions and closed candidate lists have probability zero, but every
candidate tag counts (no ``prune_k``).  Details: docs/python-api.md.
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


class Lattice:
    """Emission scores of one sentence (``n x T``, -inf for tags that are
    not candidates) with the model's transition scores and mask."""

    def __init__(self, emissions, trans, allowed):
        T = emissions.shape[1]
        self.E = emissions
        trans = np.asarray(trans, dtype=np.float64)
        self.A = trans[:T * T].reshape(T, T)
        self.start = trans[T * T:T * T + T]
        self.end = trans[(T + 1) * T:]
        if allowed is not None:
            ok = np.asarray(allowed, dtype=bool)
            self.A = np.where(ok[:T * T].reshape(T, T), self.A, -np.inf)
            self.start = np.where(ok[T * T:T * T + T], self.start, -np.inf)
            self.end = np.where(ok[(T + 1) * T:], self.end, -np.inf)
        self.unmasked = (trans[:T * T].reshape(T, T), trans[T * T:T * T + T], trans[(T + 1) * T:])

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
        """The probability that every position ``i`` of ``constraints``
        (a dict position -> allowed tag ids) has one of its tags: the
        forward pass of the constrained lattice scaled by the unconstrained
        pass's normalisers, so that no two huge log partition functions are
        subtracted."""
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
    """One :class:`Lattice` per ``(input, context)`` example of a
    :class:`fasttag.model.sequence.SequenceModel`, scored with its averaged
    weights (or ``emit``/``trans``)."""
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
    """:meth:`Lattice.marginals` of many lattices of one model, computed
    in lockstep: sentences of similar length are padded into one array, at
    most ``max_group`` sentences and ``max_cells`` (sentences x tags x
    tags) per step."""
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
    normalised (its log-sum-exp 0), and the per-position normalisers
    (B x n; 0 past a sentence's end).  With ``norms``, those normalisers
    are subtracted instead of each row's own."""
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
    alpha and beta (B x n x T) and log Z (B); padding rows carry alpha and
    beta through unchanged, so one array serves sentences of any length.

    Every row of alpha and beta is shifted by its own log-sum-exp (the
    scaled forward-backward): the values that matter stay near 0 whatever
    the size of the weights, so ``posteriors(alpha + beta)`` are exact
    marginals even for scores of 1e40, where alpha + beta - log Z would
    cancel huge numbers (weights of 1e13 gave "probabilities" summing to
    20).  Each position's marginals are alpha + beta up to a constant."""
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
    """Per row of ``scores`` (n x T log scores) the probabilities they say
    (a softmax with the row's maximum subtracted): every row sums to 1."""
    m = np.max(scores, axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        p = np.exp(scores - np.where(np.isfinite(m), m, 0.0))
    p = np.nan_to_num(p, nan=0.0)
    return p / np.maximum(p.sum(axis=1, keepdims=True), np.finfo(float).tiny)


def _lockstep(lat, Es, tau):
    """Marginals of emission matrices ``Es`` (one sentence each) under the
    transitions of ``lat``; None for a sentence with no valid path under
    the mask (the caller falls back to the unmasked lattice)."""
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
    best first (fewer when there are fewer valid sequences), from the
    exact k-best Viterbi of the compiled decoder."""
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


def fit_temperature(model, examples, gold, lo=0.05, hi=50.0, tol=0.01):
    """The temperature that minimises the negative log-likelihood of the
    ``gold`` tag ids (one int array per example) under the per-token
    marginals: golden-section search over log tau in [``lo``, ``hi``] to
    within a factor ``1 + tol``.  Returns 1.0 when there is nothing to fit
    on."""
    lats = list(lattices(model, examples))
    pairs = [(lat, np.asarray(g)) for lat, g in zip(lats, gold) if len(g) and np.all(np.asarray(g) >= 0)]
    if not pairs:
        return 1.0

    lats = [lat for lat, _ in pairs]
    gold = [g for _, g in pairs]

    def nll(log_tau):
        total = 0.0
        for p, g in zip(batch_marginals(lats, math.exp(log_tau)), gold):
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
