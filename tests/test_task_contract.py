"""The task contract: a task overrides only the hooks the base class names.

Every method of :class:`fasttag.tasks.base.SequenceTask` that is not a
hook (training, prediction, evaluation, tag_file, reports, storage) is
the same for every task: a task that overrode one would have its own
path beside the shared one."""
import pytest

from fasttag.tasks.base import DECLARED, HOOKS, SequenceTask
from fasttag.tasks.featuredicts import FeatureTagger
from fasttag.tasks.lemma import Lemmatizer
from fasttag.tasks.morph import Morphologizer
from fasttag.tasks.pos import Tagger
from fasttag.tasks.seg import Segmenter
from fasttag.tasks.spans import SpanTagger
from fasttag.tasks.tok import Tokenizer

TASKS = [Tagger, Segmenter, SpanTagger, Tokenizer, FeatureTagger, Lemmatizer, Morphologizer]

#: What Python puts in every class's namespace.
IMPLICIT = {"__module__", "__doc__", "__qualname__", "__dict__", "__weakref__", "__annotations__",
            "__firstlineno__", "__static_attributes__"}



@pytest.mark.parametrize("task", TASKS, ids=lambda t: t.__name__)
def test_a_task_overrides_only_hooks(task):
    shared = set(vars(SequenceTask)) - IMPLICIT
    overridden = {name for name in vars(task) if name in shared}
    extra = overridden - set(HOOKS) - set(DECLARED)
    assert not extra, f"{task.__name__} overrides shared methods {sorted(extra)}: add a hook or remove them"


def test_every_hook_is_declared_by_the_base_class():
    missing = [name for name in HOOKS if name not in vars(SequenceTask)]
    assert not missing, f"hooks without a definition in SequenceTask: {missing}"


def test_the_shared_surface_is_the_base_classs():
    # one tag_file, one report, one evaluate: every task answers with the base's
    for task in TASKS:
        for name in ("tag_file", "report", "evaluate", "_predict"):
            assert getattr(task, name) is getattr(SequenceTask, name), (task.__name__, name)


def test_the_base_class_calls_only_what_it_defines():
    """Every ``self.x``/``cls.x`` of the base class is its own method, a
    declaration or an attribute it sets: a method it only hoped a task had
    (``self.tag_sents``) is an undeclared hook."""
    import ast
    import inspect

    from fasttag.tasks import base
    tree = ast.parse(inspect.getsource(base.SequenceTask))
    own = {n for klass in SequenceTask.__mro__ for n in vars(klass)} | set(DECLARED) | set(dir(type))
    assigned = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Name)
                and node.value.id in ("self", "cls")}
    assigned |= {key.value for node in ast.walk(tree) if isinstance(node, ast.Subscript)
                 and isinstance(node.ctx, ast.Store) and isinstance(node.value, ast.Attribute)
                 and node.value.attr == "__dict__" for key in [node.slice] if isinstance(key, ast.Constant)}
    used = {(node.attr, node.lineno) for node in ast.walk(tree) if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")}
    unknown = sorted((line, name) for name, line in used if name not in own | assigned)
    assert "model" in assigned and "_predict" in own
    assert not unknown, f"the base class uses what it does not define: {unknown}"


# ---------------------------------------------------------------- errors in the caller's terms

def test_tag_file_errors_name_python_arguments(tmp_path):
    import io

    import fasttag
    from fasttag.errors import InputError
    path = tmp_path / "in.txt"
    path.write_text("the cat sat\n", encoding="utf-8")
    tagger, ner = fasttag.load("en"), fasttag.load("en-ner")
    cases = [lambda: tagger.tag_file(str(path), io.StringIO(), format="text", nbest=2),
             lambda: tagger.tag_file(str(path), io.StringIO(), format="text", column="xpos"),
             lambda: ner.tag_file(str(path), io.StringIO(), format="text", nbest=2)]
    for case in cases:
        with pytest.raises(InputError) as caught:
            case()
        message = str(caught.value)
        assert "--" not in message and "option " in message, message


def test_the_command_line_names_its_flags_for_those_errors(run_cli, tmp_path):
    conll = tmp_path / "in.conll"
    conll.write_text("EU NNP B-ORG\nrejects VBZ O\n", encoding="utf-8")
    r = run_cli("tag", "-m", "en-ner", "--format", "conll", "--json", "--nbest", "2", conll)
    err = r.stderr.decode()
    assert r.returncode == 2 and "--nbest" in err and "option " not in err and len(err.splitlines()) == 1, err


# ---------------------------------------------------------------- layers

def test_text_imports_nothing_of_tasks():
    """text/ is a lower layer than tasks/ (the raw-text path once went
    text -> tasks -> text, an import cycle)."""
    import ast
    from pathlib import Path

    import fasttag.text
    for path in Path(fasttag.text.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else [(node.module or "")]
                upward = node.level >= 2 and (node.module or "").split(".")[0] in ("tasks", "store", "cli")
                absolute = node.level == 0 and (node.module or "").startswith(("fasttag.tasks", "fasttag.store"))
                assert not (upward or absolute), f"{path.name} imports {'.' * node.level}{names[0]}"
