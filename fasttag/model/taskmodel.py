"""What the model layer asks of a task model.

Distributed training (:mod:`fasttag.model.dask_training`) and inspection
(:mod:`fasttag.model.inspection`) work on the task models of
:mod:`fasttag.tasks`, a layer above them that they never import.  The
methods they call are declared here, once: a task model is anything with
these, and ``tests/test_layering.py`` refuses a call from a lower layer to
a private method of a higher one that no protocol here declares.
"""
from __future__ import annotations

from typing import Any, Callable, Protocol

__all__ = ["TaskModel"]


class TaskModel(Protocol):
    """A trained model of one task (:class:`fasttag.tasks.base.SequenceTask`)."""

    kind: str                   # its model file's kind
    model: Any                  # its compiled sequence model (:class:`fasttag.model.sequence.SequenceModel`)
    meta: dict                  # what it records of its training and data

    @property
    def temperature(self) -> float | None:
        """The marginals' calibrated temperature, or None."""

    def to_bytes(self) -> bytes:
        """Its model file's bytes."""

    @classmethod
    def from_bytes(cls, data: bytes) -> TaskModel:
        """The model of a model file's bytes, checked."""

    @classmethod
    def _read(cls, data, opts: dict, what: str) -> list:
        """The examples of ``data`` (a path or binary stream) read with the
        reading options ``opts``; ``what`` names the data in errors."""

    def _reading_options(self, opts: dict, given: dict) -> dict:
        """``opts`` with the reading options the model was trained with
        (format, columns) where ``given`` names none."""

    def _inputs(self, examples: list) -> list:
        """The compiled model's inputs of ``examples``."""

    def _encode(self, examples: list, training: bool = False) -> list:
        """``(input, context, gold tag ids)`` triples of ``examples``."""

    def _fold_tables(self, read_shards: Callable[[], list]) -> Any:
        """Distributed training: the jackknifed tables of the shards'
        features (``read_shards()``: their examples), or None."""

    def _use_fold_tables(self, tables: Any) -> None:
        """On a worker: encode the shard with ``tables`` (of :meth:`_fold_tables`)."""
