"""Training and tagging on a Dask cluster (the optional extra
``fasttag-nlp[dask]``: ``pip install 'fasttag-nlp[dask]'``).

Training: ``Tagger.train(path, client=Client(...))`` or ``fasttag train
... --dask``, one shard per worker, each reading its byte range of a file
every worker can read (docs/training.md, :mod:`fasttag.model.dask_training`).

Tagging: :func:`tag` tags a collection on the cluster and :func:`tag_bag`
maps a ``dask.bag`` through the model, carried to the workers as its bytes.
"""
import threading
import uuid

from .model import training
from .model.dask_training import DaskShards, byte_ranges, n_workers, require_dask

__all__ = ["byte_ranges", "fit", "n_workers", "require_dask", "tag", "tag_bag"]

_WORKER_LOCK = threading.Lock()


def fit(task_model, path, opts, client, dev=None, evaluate=None, progress=None, init=False):
    """Train ``task_model`` in place on the file ``path``, one shard per
    worker of ``client``, with the resolved options ``opts``.  Returns the
    per-epoch statistics."""
    settings = training.Settings.of(opts)
    return training.fit(task_model.model, None, dev, evaluate=evaluate, progress=progress, init=init,
                        backend=DaskShards(task_model, path, opts, settings, client), settings=settings)


# ---------------------------------------------------------------- tagging

_MODELS = {}                # on a worker: model token -> loaded model


def _model_on_worker(token, model_bytes):
    with _WORKER_LOCK:
        model = _MODELS.get(token)
    if model is None:
        from .store import loads
        model = loads(model_bytes)
        with _WORKER_LOCK:
            _MODELS.clear()                 # one model at a time per worker
            _MODELS[token] = model
    return model


def _tag_partition(items, token, model_bytes, method):
    model = _model_on_worker(token, model_bytes)
    items = list(items)
    if method is None:
        method = "segment_lines" if hasattr(model, "segment_lines") else "tag_sents"
    return list(getattr(model, method)(items))


def tag_bag(model, bag, method=None):
    """A ``dask.bag`` of ``model``'s outputs for the items of ``bag``, in
    order: token lists (``tag_sents``) or, for a segmenter, lines
    (``segment_lines``); ``method`` names another batch method.  The model
    travels to the workers as its file bytes, loaded once per worker."""
    require_dask()
    import dask
    import dask.bag as db
    from .tasks.base import SequenceTask
    if not isinstance(model, SequenceTask):
        raise TypeError(f"tag_bag() takes a fasttag model (fasttag.load), not {type(model).__name__}")
    if not isinstance(bag, db.Bag):
        raise TypeError(f"tag_bag() takes a dask.bag.Bag (dask.bag.from_sequence(items)), not "
                        f"{type(bag).__name__}; fasttag.distributed.tag takes a list")
    if method is not None and not callable(getattr(model, method, None)):
        raise ValueError(f"a {type(model).__name__} has no method {method!r}")
    token = uuid.uuid4().hex
    data = dask.delayed(model.to_bytes(), pure=True)
    return bag.map_partitions(_tag_partition, token, data, method)


def tag(model, items, client, npartitions=None, method=None):
    """``model``'s outputs for ``items`` (a list), computed on ``client``'s
    cluster in ``npartitions`` parts (default: two per worker); equal to
    tagging them locally."""
    require_dask()
    import dask.bag as db
    items = list(items)
    if not items:
        return []
    if npartitions is not None and (isinstance(npartitions, bool) or not isinstance(npartitions, int)
                                    or npartitions < 1):
        raise ValueError(f"npartitions must be a positive int or None, not {npartitions!r}")
    parts = npartitions or 2 * n_workers(client)
    bag = db.from_sequence(items, npartitions=min(parts, len(items)))
    return client.compute(tag_bag(model, bag, method)).result()
