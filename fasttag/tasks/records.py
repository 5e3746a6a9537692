"""The records a task's ``tag_file`` hands to the writer: a generator over
the input file that closes it once the records are written, or when the
writing stops early.  Shared by the tasks and the pipeline.
"""
from __future__ import annotations


def closed_after(records, close):
    """``records``, then ``close()`` (also when the writing stops early)."""
    try:
        yield from records
    finally:
        close()
