"""Why a model tags as it does: per-token explanations, and a summary of a
model's weights.

Feature keys are hashes, so a model file cannot list its features by
name.  What can be named is every feature of given text: a template such
as ``norm[-1]|suffix3[0]`` applied to a token gives the feature
``norm[-1]=the|suffix3[0]=dog``, and its weights are looked up by its key.
:func:`explain` does that for one sentence; :func:`top_features` for every
feature occurring in a corpus.
"""
import numpy as np

from . import confidence
from .features import WordFeaturizer, _PART

PAD = "<pad>"


def _feature_names(model, tokens, context):
    """Per token, the readable name of each template's feature (word
    attributes, then the featurizer's extra columns; ``<pad>`` outside the
    sentence)."""
    names = model.templates.names
    words = getattr(model.featurizer, "words", model.featurizer)     # a span tagger's word part
    if not isinstance(words, WordFeaturizer):
        words = WordFeaturizer()
    n_word = words.n_type_attributes                                 # with cluster prefixes, if any
    attr_names = model.featurizer.attribute_names
    word_values = [words.attribute_values(w) for w in tokens]

    def value(attr, i):
        if not 0 <= i < len(tokens):
            return PAD
        a = attr_names.index(attr)
        if a < n_word:
            return word_values[i][a]
        return str(context[i][a - n_word]) if context is not None else "?"

    out = []
    for i in range(len(tokens)):
        row = []
        for name in names:
            if name == "bias":
                row.append("bias")
                continue
            parts = []
            for part in name.split("|"):
                m = _PART.match(part.strip())
                parts.append(f"{part.strip()}={value(m.group(1), i + int(m.group(2)))}")
            row.append("|".join(parts))
        out.append(row)
    return out


def explain(model, tokens, context=None, temperature=1.0, top=5):
    """For each token of one sentence (``model``: a
    :class:`fasttag.sequence.SequenceModel` with a word featurizer): the
    decoded tag, the runner-up (the next most probable tag by the
    marginals), both probabilities, and the ``top`` features whose weights
    favour the chosen tag over the runner-up most (name, weight
    difference), with the transitions' share as a feature named
    ``transition``."""
    example = [(list(tokens), context)]
    if not tokens:
        return []
    ids = model.predict_ids(example)[0]
    probs = confidence.marginals(model, example, temperature)[0]
    keys, _, _, _ = model.featurize(example)
    names = _feature_names(model, list(tokens), context)
    T = len(model.tags)
    trans = np.asarray(model.trans)
    out = []
    for i, tag in enumerate(ids.tolist()):
        order = np.argsort(-probs[i], kind="stable")
        runner = int(next((t for t in order if t != tag), tag))
        contrib = {}
        for f, key in enumerate(keys[i].tolist()):
            d = model.emit.get(key, tag) - model.emit.get(key, runner)
            if d:
                contrib[names[i][f]] = contrib.get(names[i][f], 0.0) + d
        prev = T if i == 0 else int(ids[i - 1])          # T: the start row
        d = trans[prev * T + tag] - trans[prev * T + runner]
        if i + 1 < len(ids):
            nxt = int(ids[i + 1])
            d += trans[tag * T + nxt] - trans[runner * T + nxt]
        else:
            d += trans[(T + 1) * T + tag] - trans[(T + 1) * T + runner]
        if d:
            contrib["transition"] = float(d)
        best = sorted(contrib.items(), key=lambda kv: -kv[1])[:top]
        out.append({"token": tokens[i], "tag": model.tags[tag], "probability": float(probs[i, tag]),
                    "runner_up": model.tags[runner], "runner_up_probability": float(probs[i, runner]),
                    "features": [(name, float(w)) for name, w in best]})
    return out


def transitions(model):
    """The transition weights as a ``(T + 2) x T`` array: rows are the
    previous tag, then start, then end (read as "this tag ends the
    sentence")."""
    T = len(model.tags)
    return np.asarray(model.trans, dtype=np.float64).reshape(T + 2, T)


def top_features(model, examples, top=10):
    """Per tag, the ``top`` features with the largest weight among those
    occurring in ``examples`` (``(tokens, context)`` pairs): a dict tag ->
    list of (feature name, weight)."""
    seen = {}
    for tokens, context in examples:
        if not tokens:
            continue
        keys, _, _, _ = model.featurize([(list(tokens), context)])
        names = _feature_names(model, list(tokens), context)
        for i in range(len(tokens)):
            for f, key in enumerate(keys[i].tolist()):
                seen.setdefault(key, names[i][f])
    out = {}
    if not seen:
        return {t: [] for t in model.tags}
    keys = np.fromiter(seen, dtype=np.uint64, count=len(seen))
    scores = model.emit.score_batch(keys, np.arange(len(keys) + 1, dtype=np.int64), n_classes=len(model.tags))
    labels = [seen[k] for k in keys.tolist()]
    for t, tag in enumerate(model.tags):
        col = scores[:, t]
        best = np.argsort(-col, kind="stable")[:top]
        out[tag] = [(labels[j], float(col[j])) for j in best if col[j] > 0]
    return out


def describe(task_model, data=None, top=10):
    """A summary of a trained task model (:class:`fasttag.task.SequenceTask`):
    kind, tags, templates, size, training and metadata, the transition
    matrix, and, given ``data`` (a path or the task's Python form, read
    as the model was trained), the top features per tag among those
    occurring in it."""
    model = task_model.model
    meta = {k: v for k, v in task_model.meta.items() if k != "history"}
    out = {"kind": task_model.kind, "tags": list(model.tags), "templates": list(model.templates.names),
           "features": len(model.emit), "weights": model.emit.n_weights, "decoder": model.decoder,
           "temperature": task_model.temperature, "training": dict(model.training_info), "meta": meta,
           "transitions": transitions(model).tolist()}
    if data is not None:
        if not isinstance(model.featurizer, WordFeaturizer) and not hasattr(model.featurizer, "words"):
            raise TypeError(f"feature names are shown for word-level models only, not for a {task_model.kind}")
        opts = task_model._reading_options({}, {})
        examples = task_model._read(data, opts, "data")
        out["top_features"] = top_features(model, task_model._inputs(examples), top)
    return out


def report(desc, max_tags=20):
    """The human-readable text of :func:`describe`'s result."""
    tags = desc["tags"]
    lines = [f"kind              {desc['kind']}",
             f"tags              {len(tags)}: {' '.join(tags[:40])}{' ...' if len(tags) > 40 else ''}",
             f"templates         {len(desc['templates'])}",
             f"features          {desc['features']:,} ({desc['weights']:,} weights)",
             f"decoder           {desc['decoder']}",
             f"temperature       {desc['temperature']:.4g}"]
    info = desc["training"]
    if info:
        lines.append("training          " + ", ".join(f"{k} {v}" for k, v in info.items() if v is not None))
    for key in ("corpus", "licence", "fine_tuned"):
        if key in desc["meta"]:
            lines.append(f"{key:<18}{desc['meta'][key]}")
    T = len(tags)
    trans = np.array(desc["transitions"])
    lines += ["", "transitions (row: previous tag, column: tag)"]
    if T <= max_tags:
        width = max(8, max(len(t) for t in tags) + 2)
        lines.append(" " * width + "".join(f"{t:>{width}}" for t in tags))
        for r, name in enumerate(tags + ["<start>", "<end>"]):
            lines.append(f"{name:<{width}}" + "".join(f"{v:>{width}.2f}" for v in trans[r]))
    else:
        flat = [(trans[p, t], tags[p], tags[t]) for p in range(T) for t in range(T)]
        flat.sort(key=lambda x: -x[0])
        lines.append(f"(largest {max_tags} of {T} x {T})")
        lines += [f"  {p:>12} -> {t:<12} {w:8.2f}" for w, p, t in flat[:max_tags]]
    if "top_features" in desc:
        lines += ["", "top features per tag (among those in the data)"]
        for tag, feats in desc["top_features"].items():
            lines.append(f"{tag}")
            lines += [f"  {w:8.3f}  {name}" for name, w in feats]
    return "\n".join(lines)
