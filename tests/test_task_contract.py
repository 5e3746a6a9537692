"""The task contract: a task overrides only the hooks the base class names.

Every method of :class:`fasttag.tasks.base.SequenceTask` that is not a
hook (training, prediction, evaluation, tag_file, reports, storage) is
the same for every task: a task that overrode one would have its own
path beside the shared one."""
import pytest

from fasttag.tasks.base import DECLARED, HOOKS, SequenceTask
from fasttag.tasks.featuredicts import FeatureTagger
from fasttag.tasks.pos import Tagger
from fasttag.tasks.seg import Segmenter
from fasttag.tasks.spans import SpanTagger
from fasttag.tasks.tok import Tokenizer

TASKS = [Tagger, Segmenter, SpanTagger, Tokenizer, FeatureTagger]

#: What Python puts in every class's namespace.
IMPLICIT = {"__module__", "__doc__", "__qualname__", "__dict__", "__weakref__", "__annotations__",
            "__firstlineno__", "__static_attributes__"}

ALLOWED = {
    Segmenter: {"train"},       # removed by the training loop's rework
}


@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.__name__)
def test_a_task_overrides_only_hooks(task):
    shared = set(vars(SequenceTask)) - IMPLICIT
    overridden = {name for name in vars(task) if name in shared}
    extra = overridden - set(HOOKS) - set(DECLARED) - ALLOWED.get(task, set())
    assert not extra, f"{task.__name__} overrides shared methods {sorted(extra)}: add a hook or remove them"


def test_every_hook_is_declared_by_the_base_class():
    missing = [name for name in HOOKS if name not in vars(SequenceTask)]
    assert not missing, f"hooks without a definition in SequenceTask: {missing}"


def test_the_shared_surface_is_the_base_classs():
    # one tag_file, one report, one evaluate: every task answers with the base's
    for task in TASKS:
        for name in ("tag_file", "report", "evaluate", "_predict"):
            assert getattr(task, name) is getattr(SequenceTask, name), (task.__name__, name)
