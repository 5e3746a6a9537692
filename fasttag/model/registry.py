"""What fasttag can train and load, as the classes themselves declare it
(:func:`model_kind`, :func:`task`).

The store, the option table and the command line read these tables, so a
task defined anywhere needs no edit of theirs.  It imports only the bottom
layer: the declarations reach it, never the other way.
"""
from dataclasses import dataclass, field

from ..display import quote
from ..errors import ModelFormatError

#: model-file kind -> the class that writes and reads it
KINDS = {}
#: option-table task name -> :class:`Task`, in declaration order
TASKS = {}
#: what every task takes: the shared training options
EVERY_TASK = ("training",)


@dataclass(frozen=True)
class Task:
    """One declared task."""
    name: str               # its name in the option table (and ``fasttag train NAME``)
    cls: type               # the model class that trains it
    title: str              # what messages call its models ("POS tagger")
    help: str = None        # the ``fasttag train`` help line; None: no subcommand
    options: frozenset = frozenset(EVERY_TASK)   # the option groups and names it takes
    defaults: dict = field(default_factory=dict)  # its own defaults, over the table's
    keywords: dict = field(default_factory=dict)  # what ``cls.train`` needs to train it
    shown_defaults: dict = field(default_factory=dict)  # help texts of defaults that are not one value
    refuses: frozenset = frozenset()        # shared options it does not take (a learning rule it lacks)


def task(name, *, title=None, help=None, options=(), defaults=None, shown_defaults=None, refuses=(), **keywords):
    """Class decorator declaring the task ``name`` trained by the class.

    ``options``: the groups or names of the option table's options it takes
    beyond the shared training options (:mod:`fasttag.model.options`);
    any other option is refused for it.  ``defaults``: its own defaults of
    those options.  ``help``: the help line of its ``fasttag train``
    subcommand (None: trained from Python only).  ``keywords``: what the
    class's ``train`` needs to train this task (``task="ner"``); without
    them ``name`` is the class's own task (its ``task`` attribute).
    ``shown_defaults``: what ``--help`` says of a default that is not one
    value (a pipeline's, part by part).  ``refuses``: names of shared
    options it does not take."""
    def declare(cls):
        entry = Task(name, cls, title or name, help, frozenset(EVERY_TASK) | frozenset(options),
                     dict(defaults or {}), dict(keywords), dict(shown_defaults or {}), frozenset(refuses))
        _add(TASKS, name, entry, entry.cls, "task")
        if not keywords:
            cls.task = name
        return cls
    return declare


def model_kind(kind):
    """Class decorator: the class writes and reads model files of ``kind``
    (``Stored`` applies it to a class whose body sets ``kind``)."""
    def declare(cls):
        _add(KINDS, kind, cls, cls, "model kind")
        return cls
    return declare


def _add(table, key, value, cls, what):
    """A second declaration of ``key`` by another class is an error; the
    same class declared again (a module reloaded) replaces the first."""
    old = table.get(key)
    old_cls = old.cls if isinstance(old, Task) else old
    if old is not None and _name(old_cls) != _name(cls):
        raise ValueError(f"{what} {key!r} is declared twice: by {_name(old_cls)} and {_name(cls)}")
    table[key] = value


def _name(cls):
    return f"{cls.__module__}.{cls.__qualname__}"


def model_class(kind):
    """The class that reads model files of ``kind``."""
    try:
        return KINDS[kind]
    except (KeyError, TypeError):
        raise ModelFormatError(f"unknown fasttag model kind {quote(kind)}") from None


def train_commands():
    """The tasks with a ``fasttag train`` subcommand, by name."""
    return {name: t for name, t in TASKS.items() if t.help is not None}
