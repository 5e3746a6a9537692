"""Why a model tags as it does: per-token explanations, and a summary of a
model's weights.

Feature keys are hashes, so only the features of given text can be named
(``norm[-1]=the|suffix3[0]=dog``): :func:`explain` names one sentence's,
:func:`top_features` those of a corpus.  :func:`describe` summarizes one
model, or a UD pipeline part by part.
"""
import json

import numpy as np

from . import confidence
from .taskmodel import TaskModel
from ..display import printable, quote
from ..features.words import WordFeaturizer, TEMPLATE_PART

PAD = "<pad>"


def _feature_names(model, tokens, context):
    """Per token, the readable name of each template's feature."""
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
                m = TEMPLATE_PART.match(part.strip())
                parts.append(f"{part.strip()}={value(m.group(1), i + int(m.group(2)))}")
            row.append("|".join(parts))
        out.append(row)
    return out


def explain(model, tokens, context=None, temperature=1.0, top=5):
    """For each token of one sentence: the decoded tag, the runner-up (next
    most probable), both probabilities, and the ``top`` features (name,
    weight difference) favouring the tag most, transitions as ``transition``."""
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
    """The transition weights as a ``(T + 2) x T`` array (rows: the previous
    tag, then start, then end), a view of the model's weights."""
    T = len(model.tags)
    return np.asarray(model.trans, dtype=np.float64).reshape(T + 2, T)


#: About how many weights the summaries below read at a time, so memory
#: stays about the model's size at thousands of tags.
_BLOCK = 1 << 20


def largest_transitions(trans, n):
    """The ``n`` largest tag -> tag weights of a ``(T + 2) x T`` transition
    array, largest first: a list of (previous tag id, tag id, weight)."""
    T = trans.shape[1]
    rows = max(1, _BLOCK // max(T, 1))
    best_v = np.empty(0, dtype=np.float64)
    best_i = np.empty(0, dtype=np.int64)
    for r0 in range(0, T, rows):
        vals = np.asarray(trans[r0:min(r0 + rows, T)], dtype=np.float64).ravel()
        if vals.size > n:
            kth = np.partition(vals, vals.size - n)[vals.size - n]      # the n-th largest of the block
            sel = np.flatnonzero(vals >= kth)
        else:
            sel = np.arange(vals.size)
        best_v = np.concatenate([best_v, vals[sel]])
        best_i = np.concatenate([best_i, sel + r0 * T])
        order = np.lexsort((best_i, -best_v))[:n]
        best_v, best_i = best_v[order], best_i[order]
    return [(int(i) // T, int(i) % T, float(v)) for v, i in zip(best_v, best_i)]


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
    if not seen:
        return {t: [] for t in model.tags}
    T = len(model.tags)
    keys = np.fromiter(seen, dtype=np.uint64, count=len(seen))
    step = max(1, _BLOCK // T)
    best_v = np.empty((0, T), dtype=np.float64)       # per tag (column): its best weights so far, best first
    best_j = np.empty((0, T), dtype=np.int64)         # and the features' indices in keys
    for k0 in range(0, len(keys), step):
        chunk = keys[k0:k0 + step]
        scores = model.emit.score_batch(chunk, np.arange(len(chunk) + 1, dtype=np.int64), n_classes=T)
        vals = np.concatenate([best_v, np.asarray(scores, dtype=np.float64).reshape(len(chunk), T)])
        idx = np.concatenate([best_j, np.broadcast_to(np.arange(k0, k0 + len(chunk))[:, None], (len(chunk), T))])
        # stable: of equal weights, the feature seen first (the rows are in that order)
        order = np.argsort(-vals, axis=0, kind="stable")[:top]
        best_v = np.take_along_axis(vals, order, axis=0)
        best_j = np.take_along_axis(idx, order, axis=0)
    labels = list(seen.values())
    return {tag: [(labels[j], float(v)) for v, j in zip(best_v[:, t].tolist(), best_j[:, t].tolist()) if v > 0]
            for t, tag in enumerate(model.tags)}


def parts_of(pipeline):
    """The parts of a UD pipeline by name, in the order they run: the
    model of each of its components, its tokenizer (``"tok"``) among them."""
    return {name: model for name, (model, _) in _components(pipeline).items()}


def _components(pipeline):
    """name -> (model, what it fills) of each component of ``pipeline``
    (:class:`fasttag.pipeline.Component`), in the order they run."""
    return {name: (c.model, "tokens, sentences" if c.tokenizes else ", ".join(f.upper() for f in c.fills))
            for name, c in pipeline.components.items()}


def part_of(pipeline, name):
    """The part ``name`` of a UD pipeline (one of :func:`parts_of`: ``"tok"``,
    ``"upos"``, ...); a ValueError naming its parts for a name it lacks, or
    for a model that is no pipeline."""
    if not has_parts(pipeline):
        raise ValueError(f"option part: only a UD pipeline has parts, not a "
                         f"{getattr(pipeline, 'kind', None) or type(pipeline).__name__} model")
    found = parts_of(pipeline)
    if name not in found:
        missing = " (its training was interrupted before that part was trained)" if name in pipeline.missing else ""
        raise ValueError(f"option part: the pipeline has no part {quote(name)}{missing}: its parts are "
                         f"{', '.join(found)}")
    return found[name]


def has_parts(task_model):
    """Whether ``task_model`` is a model of several (a pipeline): its ``composite`` says so."""
    return getattr(task_model, "composite", False) and hasattr(task_model, "components")


def is_sequence_model(task_model):
    """Whether :func:`describe` reads ``task_model`` as one model: a task
    model of a linear-chain model (not a pipeline component of another kind)."""
    inner = getattr(task_model, "model", None)
    return inner is not None and inner is not task_model and hasattr(inner, "emit")


def describe(task_model: TaskModel, data=None, top=10, with_transitions=True, part=None):
    """A summary of a trained task model: kind, tags, templates, size,
    training, metadata, the transitions (unless not ``with_transitions``)
    and, given ``data``, the top features per tag occurring in it.

    Of a UD pipeline: its parts in the order they run (``parts``: by name,
    each one's summary without transitions and what it fills), the parts
    its training left out (``missing``) and its metadata; ``part`` (a name
    of :func:`parts_of`) summarizes that one part as a model of its own, and
    only one part reads ``data``."""
    if part is not None:
        return describe(part_of(task_model, part), data, top, with_transitions)
    if has_parts(task_model):
        if data is not None:
            raise TypeError(f"feature names are shown for one part of a pipeline: name it (one of "
                            f"{', '.join(parts_of(task_model))})")
        described = {}
        for name, (model, fills) in _components(task_model).items():
            if is_sequence_model(model):            # as inspect shows one model
                desc = describe(model, with_transitions=False)
            else:                                   # a component of another kind: what it is
                desc = {"kind": getattr(model, "kind", None) or type(model).__name__}
            described[name] = {"kind": desc.pop("kind"), "fills": fills, **desc}
        meta = {k: v for k, v in task_model.meta.items() if k not in ("history", "missing")}
        return {"kind": task_model.kind, "parts": described, "missing": list(task_model.missing), "meta": meta}
    model = task_model.model
    meta = {k: v for k, v in task_model.meta.items() if k != "history"}
    out = {"kind": task_model.kind, "tags": list(model.tags), "templates": list(model.templates.names),
           "features": len(model.emit), "weights": model.emit.n_weights, "decoder": model.decoder,
           "temperature": task_model.temperature, "training": dict(model.training_info), "meta": meta}
    if with_transitions:
        out["transitions"] = transitions(model).tolist()
    if data is not None:
        if not isinstance(model.featurizer, WordFeaturizer) and not hasattr(model.featurizer, "words"):
            raise TypeError(f"feature names are shown for word-level models only, not for a {task_model.kind}")
        opts = task_model._reading_options({}, {})
        examples = task_model._read(data, opts, "data")
        out["top_features"] = top_features(model, task_model._inputs(examples), top)
    return out


def write_json(desc, out, transitions=None):
    """:func:`describe`'s result as one line of JSON on ``out``, with the
    array ``transitions`` (for a ``desc`` without them) written a row at a
    time after ``meta``."""
    def dump(value):
        return json.dumps(value, ensure_ascii=False)

    out.write("{")
    for n, (key, value) in enumerate(desc.items()):
        out.write(f"{', ' if n else ''}{dump(key)}: {dump(value)}")
        if key == "meta" and transitions is not None:
            out.write(', "transitions": [')
            for r, row in enumerate(transitions):
                out.write(f"{', ' if r else ''}{dump(np.asarray(row, dtype=np.float64).tolist())}")
            out.write("]")
    out.write("}\n")


def report(desc, max_tags=20, transitions=None):
    """The human-readable text of :func:`describe`'s result, every model
    string made printable (no escape sequences to a terminal).
    ``transitions``: for a ``desc`` without them; past ``max_tags`` tags
    only the largest tag -> tag weights are shown.  A UD pipeline's
    summary is one line per part."""
    if "parts" in desc:
        return _pipeline_report(desc)
    tags = [printable(t) for t in desc["tags"]]
    lines = [f"kind              {printable(desc['kind'])}",
             f"tags              {len(tags)}: {' '.join(tags[:40])}{' ...' if len(tags) > 40 else ''}",
             f"templates         {len(desc['templates'])}",
             f"features          {desc['features']:,} ({desc['weights']:,} weights)",
             f"decoder           {printable(desc['decoder'])}",
             f"temperature       {desc['temperature']:.4g}"]
    info = desc["training"]
    if info:
        lines.append("training          " + printable(", ".join(f"{k} {v}" for k, v in info.items()
                                                                if v is not None)))
    for key in ("corpus", "licence", "fine_tuned"):
        if key in desc["meta"]:
            lines.append(f"{key:<18}{printable(desc['meta'][key])}")
    T = len(tags)
    trans = np.asarray(desc["transitions"] if transitions is None else transitions)
    lines += ["", "transitions (row: previous tag, column: tag)"]
    if T <= max_tags:
        width = max(8, max(len(t) for t in tags) + 2)
        lines.append(" " * width + "".join(f"{t:>{width}}" for t in tags))
        for r, name in enumerate(tags + ["<start>", "<end>"]):
            lines.append(f"{name:<{width}}" + "".join(f"{v:>{width}.2f}" for v in trans[r]))
    else:
        lines.append(f"(largest {max_tags} of {T} x {T})")
        lines += [f"  {tags[p]:>12} -> {tags[t]:<12} {w:8.2f}" for p, t, w in largest_transitions(trans, max_tags)]
    if "top_features" in desc:
        lines += ["", "top features per tag (among those in the data)"]
        for tag, feats in desc["top_features"].items():
            lines.append(printable(tag))
            lines += [f"  {w:8.3f}  {printable(name)}" for name, w in feats]
    return "\n".join(lines)


def _pipeline_report(desc):
    """The human-readable text of a UD pipeline's summary: a line per part."""
    described = desc["parts"]
    lines = [f"kind              {printable(desc['kind'])}",
             f"parts             {len(described)}: {' '.join(printable(n) for n in described)}"]
    if desc["missing"]:
        lines.append(f"missing           {printable(' '.join(desc['missing']))}")
    for key in ("corpus", "licence", "fine_tuned"):
        if key in desc["meta"]:
            lines.append(f"{key:<18}{printable(desc['meta'][key])}")
    header = ("part", "kind", "fills", "tags", "templates", "features", "weights", "decoder", "temperature")
    rows = [(printable(name), printable(d["kind"]), printable(d["fills"]) or "-")
            + ((f"{len(d['tags']):,}", f"{len(d['templates']):,}", f"{d['features']:,}", f"{d['weights']:,}",
                printable(d["decoder"]), f"{d['temperature']:.4g}") if "tags" in d else ("-",) * 6)
            for name, d in described.items()]
    widths = [max(len(r[c]) for r in [header] + rows) for c in range(len(header))]
    align = "<<<>>>><>"                         # words left-aligned, numbers right-aligned
    lines.append("")
    for r in [header] + rows:
        lines.append("  ".join(f"{v:{a}{w}}" for v, a, w in zip(r, align, widths)).rstrip())
    return "\n".join(lines)
