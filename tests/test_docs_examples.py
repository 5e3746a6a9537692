"""The examples of README.md and docs/*.md run, and print what they show.

Every fenced block of Python (```python) or shell (```sh, ```bash,
```console) in README.md and docs/*.md is an example, run here in the
order of its document, each document in a folder of its own, its Python
blocks in one namespace, unless a marker on the line before its fence
says otherwise:

    <!-- doc-test: skip (REASON) -->   not run: reported as skipped, with REASON
    <!-- doc-test: shared data -->     run in a folder where the corpora's file
                                       names are the real corpora of
                                       ../shared/data; skipped without them

A block in any other language than those and the plain ones (no
language, ```text, ...) fails :func:`test_every_block_is_run_or_marked`
until it is classified, and so does a shell line running anything but
``fasttag`` and a few harmless commands (``echo``, ``cat`` ...).  Run
with ``-rs`` to see each skipped block and why.

What a block shows is checked:

* Python with ``>>>`` prompts is a doctest (``ELLIPSIS``,
  ``NORMALIZE_WHITESPACE``); other Python runs as a script, and a
  ```text block right after it is what it prints.
* A ```console block is a transcript: each ``$ `` line is a command and
  the lines under it what it prints (its standard output, then its
  standard error).  A command showing ``fasttag: error: ...`` must exit
  with status 2; every other command must succeed.  A ```sh block's
  commands must succeed; a ```text block right after it is what they
  print on standard output.
* In shown output, ``...`` stands for any text (a line of its own: any
  lines), and a number before ``tokens/s`` (any ``WORD/s``) or ``s``
  (seconds) for any number: speeds vary.  Trailing blank lines and
  trailing spaces are not compared.

The file names the examples use (``train.conllu``,
``en_ewt-ud-train.conllu``, ``eng.train``, ``input.txt`` ...) are small
stand-ins made from ``data/`` (:data:`STAND_INS`): the examples run in
seconds, and their output is shown only where it does not depend on the
stand-ins (bundled models, fixed inputs) or in a ``shared data`` block.
A command line that already ran on the same input files (the same
command in another document, on the same stand-ins) is not run again:
its output and the files it wrote are those of its first run.

The other tests here keep names in the documents true: every dotted
``fasttag.x.y`` name resolves, the ``fasttag/`` rows of
docs/architecture.md name the modules their folder has, and the synopsis
of docs/cli.md names every command and every ``train`` task.
"""
import argparse
import contextlib
import doctest
import hashlib
import importlib
import io
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: documents whose dotted names are checked too
NAMED = DOCUMENTS + [ROOT / "BENCHMARKS.md", ROOT / "fasttag" / "models" / "MODELS.md"]

PYTHON = {"python", "py", "pycon"}
SHELL = {"sh", "bash", "shell", "console", "shell-session"}
#: languages of blocks that are not examples (diagrams, formats, file contents, output)
PLAIN = {"", "text", "json", "jsonl", "conllu", "tsv", "csv", "toml", "yaml", "ini"}
#: the commands a shell example may run besides fasttag
HARMLESS = {"fasttag", "echo", "printf", "cat", "head", "tail", "paste", "cut", "wc", "sort", "cmp", "diff"}

#: file names the examples use -> the file of data/ standing in for them
STAND_INS = {
    **dict.fromkeys(["train.conllu", "my_domain.conllu", "en_ewt-ud-train.conllu", "fr-train.conllu"],
                    "sample_ud.conllu"),
    **dict.fromkeys(["dev.conllu", "test.conllu", "en_ewt-ud-dev.conllu",
                     "en_ewt-ud-test.conllu", "fr-dev.conllu", "fr-test.conllu", "input.conllu", "gold.conllu",
                     "system.conllu", "treebank.conllu"], "sample.conllu"),
    **dict.fromkeys(["eng.train", "eng.testa", "eng.testb"], "sample_ner.conll"),     # CoNLL-2003
    "train.txt": "sample_chunk.conll",                                                # CoNLL-2000
    **dict.fromkeys(["pd_train.txt", "pd_dev.txt"], "sample_zh_train.txt"),           # People's Daily
}
#: raw English text: the sentences of data/sample_ud.conllu, one a line
RAW_EN = ["raw.txt", "raw1.txt", "raw2.txt", "big.txt", "article.txt"]
#: raw Chinese text: data/sample_zh_train.txt without its spaces
RAW_ZH = ["input.txt", "corpus.txt", "raw_zh.txt"]
#: the real corpora a ``shared data`` block finds under these names (paths in ../shared/data)
SHARED = {
    "en_ewt-ud-train.conllu": "en_ewt/en_ewt-ud-train.conllu",
    "en_ewt-ud-dev.conllu": "en_ewt/en_ewt-ud-dev.conllu",
    "en_ewt-ud-test.conllu": "en_ewt/en_ewt-ud-test.conllu",
    "eng.train": "conll2003/eng.train", "eng.testa": "conll2003/eng.testa", "eng.testb": "conll2003/eng.testb",
    "train.txt": "conll2000/train.txt", "test.txt": "conll2000/test.txt",
    "pd_train.txt": "zh_pd1998/train.txt", "pd_dev.txt": "zh_pd1998/dev.txt",
}

FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")
MARKER = re.compile(r"^\s*<!--\s*doc-test:\s*(.*?)\s*-->\s*$")
SKIP = re.compile(r"^skip \((.+)\)$")


@dataclass
class Block:
    doc: Path
    line: int             # the line of the opening fence, from 1
    lang: str
    text: str
    marker: str = None    # the doc-test marker before it
    output: "Block" = None    # the ```text block right after it
    end: int = 0          # the line after its closing fence, from 0

    @property
    def name(self):
        return f"{self.doc.relative_to(ROOT).as_posix()}:{self.line}"

    @property
    def kind(self):
        return "python" if self.lang in PYTHON else "shell" if self.lang in SHELL else None

    @property
    def skip(self):
        m = SKIP.match(self.marker or "")
        return m.group(1) if m else None

    @property
    def shared(self):
        return self.marker == "shared data"

    @property
    def doctest(self):
        return any(line.lstrip().startswith(">>>") for line in self.text.splitlines())


def parse(path):
    """The fenced blocks of a markdown file, and its markers that stand before no block ``(line, text)``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, stray = [], []
    marker = None         # (line, text) of the marker waiting for its block
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            mark = MARKER.match(lines[i])
            if mark:
                if marker:
                    stray.append(marker)
                marker = (i + 1, mark.group(1))
            elif lines[i].strip() and marker:
                stray.append(marker)
                marker = None
            i += 1
            continue
        fence, start = m.group(1), i
        i += 1
        while i < len(lines) and not (lines[i].startswith(fence) and not lines[i].strip("`").strip()):
            i += 1
        i += 1
        block = Block(path, start + 1, m.group(2).lower(), "\n".join(lines[start + 1:i - 1]) + "\n",
                      marker[1] if marker else None, end=i)
        marker = None
        previous = blocks[-1] if blocks else None
        if (block.lang == "text" and previous is not None and previous.kind and block.marker is None
                and not any(line.strip() for line in lines[previous.end:start])):
            previous.output = block
        blocks.append(block)
    if marker:
        stray.append(marker)
    return blocks, stray


BLOCKS = {path: parse(path) for path in DOCUMENTS if path.is_file()}
EXAMPLES = [b for blocks, _ in BLOCKS.values() for b in blocks if b.kind]


# ------------------------------------------------------------ shown output

#: what varies between runs in shown output: ``...``, a speed's number, a number of seconds
_VARYING = re.compile(r"\.\.\.|\d[\d,]*(?:\.\d+)?(?= ?[A-Za-z]+/s\b| ?s\b)")


def _line_pattern(line):
    out, at = [], 0
    for m in _VARYING.finditer(line):
        out.append(re.escape(line[at:m.start()]))
        out.append(r"[^\n]*?" if m.group() == "..." else r"[\d,.]+")
        at = m.end()
    out.append(re.escape(line[at:]))
    return "".join(out) + r"\n"


def _lines(text):
    lines = [line.rstrip() for line in text.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def output_matches(shown, actual):
    """Whether ``actual`` output is what ``shown`` shows (see the module's docstring)."""
    pattern = "".join(r"(?:[^\n]*\n)*?" if line.strip() == "..." else _line_pattern(line)
                      for line in _lines(shown))
    return re.fullmatch(pattern, "".join(line + "\n" for line in _lines(actual))) is not None


def _mismatch(where, shown, actual):
    return f"{where}: the output is not what the document shows.\n--- shown:\n{shown}\n--- printed:\n{actual}"


# ------------------------------------------------------------ shell commands

def commands(block):
    """``(command, shown output or None)`` of a shell block: a console
    transcript's ``$`` lines with the lines under them, or a script's lines."""
    out = []
    lines = block.text.splitlines()
    if block.lang == "console":
        for line in lines:
            if line.startswith("$ "):
                out.append([line[2:].strip(), []])
            elif out:
                out[-1][1].append(line)
            elif line.strip():
                raise ValueError(f"{block.name}: a console block starts with a '$ ' command line")
        return [(command, "\n".join(shown) + "\n") for command, shown in out]
    pending = ""
    for line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append((pending + line.strip(), None))
        pending = ""
    return out


def programs(command):
    """The programs a command line runs (the first word of each command of its pipes and lists)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    out, first = [], True
    for token in lexer:
        if token in ("|", "||", "&&", ";", "&", "(", ")"):
            first = True
        elif first:
            if not re.fullmatch(r"\w+=.*", token):    # VAR=value before a command
                out.append(token)
                first = False
    return out


def unrunnable(block):
    """Why the block cannot run here, or None."""
    if block.kind == "shell":
        try:
            cmds = commands(block)
        except ValueError as exc:
            return str(exc)
        if not cmds:
            return f"{block.name}: a shell block with no command"
        for command, _ in cmds:
            if "$(" in command or "`" in command:
                return f"{block.name}: {command!r} substitutes a command, which this test does not run"
            try:
                progs = programs(command)
            except ValueError as exc:
                return f"{block.name}: cannot read {command!r}: {exc}"
            others = [p for p in progs if p not in HARMLESS]
            if others:
                return f"{block.name}: {command!r} runs {others[0]!r}, which this test does not run"
            if "fasttag" not in progs:
                return f"{block.name}: {command!r} runs no fasttag command"
    if block.output is not None and block.doctest:
        return f"{block.name}: a ```text block after a '>>>' block: put its output under the prompts"
    return None


# ------------------------------------------------------------ running a document

class Document:
    """One document's examples, run in order in one folder and one namespace."""

    def __init__(self, blocks, folder, command, env, runs, pycache):
        self.blocks = blocks
        self.runs = runs
        self.folder = folder
        self.namespace = {"__name__": "__doc_example__"}
        self.done = set()
        folder.mkdir()
        _stand_ins(folder)
        bin_dir = folder / ".bin"
        bin_dir.mkdir()
        script = bin_dir / "fasttag"
        script.write_text("#!/bin/sh\nexec " + " ".join(shlex.quote(str(c)) for c in command) + ' "$@"\n')
        script.chmod(0o755)
        # the commands compile Python's modules once, into a folder of the test's own
        # (not in every process, nor beside the sources)
        self.env = dict(env, PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', os.defpath)}",
                        PYTHONPYCACHEPREFIX=str(pycache))
        self.env.pop("PYTHONDONTWRITEBYTECODE", None)
        self.real = None

    def where(self, block, shared_data):
        if not block.shared:
            return self.folder
        if self.real is None:
            self.real = self.folder / "shared-data"
            self.real.mkdir()
            for name, path in SHARED.items():
                if (shared_data / path).is_file():
                    _link(shared_data / path, self.real / name)
        return self.real

    def run(self, block, shared_data):
        """Run ``block`` after the blocks before it that have not run (a test run alone)."""
        for before in self.blocks[:self.blocks.index(block)]:
            if before.kind and not before.skip and id(before) not in self.done and (shared_data or not before.shared):
                with contextlib.suppress(Exception, pytest.skip.Exception, pytest.fail.Exception):
                    self._run(before, shared_data)
        self._run(block, shared_data)

    def _run(self, block, shared_data):
        self.done.add(id(block))
        folder = self.where(block, shared_data)
        if block.kind == "python":
            with _cwd(folder):
                (self._doctest if block.doctest else self._script)(block)
        else:
            self._shell(block, folder)

    def _doctest(self, block):
        test = doctest.DocTestParser().get_doctest(block.text, {}, block.name, str(block.doc), block.line)
        test.globs = self.namespace         # the document's namespace itself, not a copy
        runner = _Runner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        report = []
        runner.run(test, out=report.append, clear_globs=False)
        if runner.missing:
            pytest.skip(f"{block.name}: needs {runner.missing}")
        if runner.failures:
            pytest.fail("".join(report), pytrace=False)

    def _script(self, block):
        code = compile("\n" * block.line + block.text, str(block.doc), "exec")
        printed = io.StringIO()
        try:
            with contextlib.redirect_stdout(printed):
                exec(code, self.namespace)
        except ModuleNotFoundError as exc:
            if not (exc.name or "").startswith("fasttag"):
                pytest.skip(f"{block.name}: needs {exc.name}")
            raise
        if block.output is not None:
            assert output_matches(block.output.text, printed.getvalue()), \
                _mismatch(block.name, block.output.text, printed.getvalue())

    def _shell(self, block, folder):
        why = unrunnable(block)
        assert why is None, why
        printed = []
        for command, shown in commands(block):
            status, out, err = self.runs(command, folder, self.env)
            expected = 2 if shown is not None and shown.startswith("fasttag: error:") else 0
            assert status == expected, \
                f"{block.name}: `{command}` exited with status {status}, not {expected}:\n{out}{err}"
            if shown is not None:
                assert output_matches(shown, out + err), _mismatch(f"{block.name}: `{command}`", shown, out + err)
            printed.append(out)
        if block.output is not None:
            assert output_matches(block.output.text, "".join(printed)), \
                _mismatch(block.name, block.output.text, "".join(printed))


class Runs:
    """Runs command lines with bash, each once per set of input files: a
    line run again in a folder whose files it names hold the same bytes
    (another document's copy of a command, on the same stand-ins) gives
    the status and output of its first run and writes the files that run
    wrote, without running."""

    def __init__(self):
        self.done = {}

    def __call__(self, command, folder, env):
        words = shlex.split(command, comments=True)
        key = (tuple(words), tuple(sorted((word, hashlib.sha256((folder / word).read_bytes()).hexdigest())
                                          for word in set(words) if "/" not in word and (folder / word).is_file())))
        if key not in self.done:
            before = _files(folder)
            proc = subprocess.run(["bash", "-c", command], cwd=folder, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=300)
            wrote = {name: (folder / name).read_bytes() for name, stamp in _files(folder).items()
                     if before.get(name) != stamp}
            self.done[key] = (proc.returncode, proc.stdout.decode("utf-8", "replace"),
                              proc.stderr.decode("utf-8", "replace"), wrote)
        else:
            for name, data in self.done[key][3].items():
                (folder / name).write_bytes(data)
        return self.done[key][:3]


def _files(folder):
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()}


class _Runner(doctest.DocTestRunner):
    """A doctest runner that notes an optional dependency missing (the block is then skipped)."""
    missing = None

    def report_unexpected_exception(self, out, test, example, exc_info):
        exc = exc_info[1]
        if isinstance(exc, ModuleNotFoundError) and not (exc.name or "").startswith("fasttag"):
            self.missing = self.missing or exc.name
        super().report_unexpected_exception(out, test, example, exc_info)


@contextlib.contextmanager
def _cwd(folder):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def _link(source, name):
    try:
        name.symlink_to(source)
    except OSError:
        shutil.copyfile(source, name)


def _stand_ins(folder):
    for name, source in STAND_INS.items():
        shutil.copyfile(DATA / source, folder / name)
    ud = (DATA / "sample_ud.conllu").read_text(encoding="utf-8")
    raw_en = "".join(line[len("# text = "):] + "\n" for line in ud.splitlines() if line.startswith("# text = "))
    raw_zh = "".join(line.replace(" ", "") + "\n"
                     for line in (DATA / "sample_zh_train.txt").read_text(encoding="utf-8").splitlines())
    for names, text in ((RAW_EN, raw_en), (RAW_ZH, raw_zh)):
        for name in names:
            (folder / name).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def documents(tmp_path_factory, cli_command):
    """``document(path) -> Document``, made once per document."""
    if shutil.which("bash") is None:
        pytest.skip("the shell examples need bash")
    root = tmp_path_factory.mktemp("docs")
    command, env = cli_command
    made, runs = {}, Runs()

    def document(path):
        if path not in made:
            folder = root / path.relative_to(ROOT).as_posix().replace("/", "-")
            made[path] = Document(BLOCKS[path][0], folder, command, env, runs, root / ".pycache")
        return made[path]
    return document


@pytest.mark.parametrize("block", EXAMPLES, ids=[b.name for b in EXAMPLES])
def test_example(block, documents, request):
    if block.skip:
        pytest.skip(f"{block.name}: {block.skip}")
    shared_data = request.getfixturevalue("shared_data") if block.shared else None    # skips without it
    documents(block.doc).run(block, shared_data)


# ------------------------------------------------------------ the documents' own checks

def test_every_block_is_run_or_marked():
    """Each block is an example that runs, an example marked skipped with
    a reason, or plain text; each marker stands before a block."""
    if not BLOCKS:
        pytest.skip("README.md and docs/ are not beside the tests")
    problems, counts = [], []
    for path, (blocks, stray) in BLOCKS.items():
        name = path.relative_to(ROOT).as_posix()
        problems += [f"{name}:{line}: a doc-test marker before no block: {text!r}" for line, text in stray]
        for b in blocks:
            if b.marker is not None and not (b.skip or b.shared):
                problems.append(f"{b.name}: unknown marker {b.marker!r}: 'skip (REASON)' or 'shared data'")
            if b.marker is not None and not b.kind:
                problems.append(f"{b.name}: a doc-test marker before a ```{b.lang} block, which is not run anyway")
            if not b.kind and b.lang not in PLAIN:
                problems.append(f"{b.name}: a ```{b.lang} block: run it (a language of {sorted(PYTHON | SHELL)}) "
                                f"or make it plain ({sorted(PLAIN)})")
            if b.kind and not b.skip:
                why = unrunnable(b)
                if why:
                    problems.append(why + ": mark it <!-- doc-test: skip (REASON) --> or change it")
        run = sum(1 for b in blocks if b.kind and not b.skip)
        skipped = sum(1 for b in blocks if b.kind and b.skip)
        counts.append(f"{name}: {run} run, {skipped} skipped")
    assert not problems, "\n".join(problems + ["", *counts])
    assert EXAMPLES, "no examples found"


def _resolve(name):
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError as exc:
            if exc.name and not exc.name.startswith("fasttag"):
                pytest.skip(f"resolving {name} needs {exc.name}")
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ImportError(name)


#: dotted names that are no Python names: the registry names of spaCy's tokenizers
_NOT_PYTHON = re.compile(r"\.v\d+$")


def test_dotted_names_resolve():
    """Every ``fasttag.x.y`` in the documents (and in BENCHMARKS.md and
    MODELS.md) names a module or an attribute that exists."""
    name = re.compile(r"(?<![\w./-])fasttag(?:\.[A-Za-z_]\w*)+")
    missing = []
    for path in NAMED:
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for m in name.finditer(line):
                if _NOT_PYTHON.search(m.group()):
                    continue
                try:
                    _resolve(m.group())
                except (ImportError, AttributeError) as exc:
                    missing.append(f"{path.relative_to(ROOT).as_posix()}:{number}: {m.group()} ({exc})")
    assert not missing, "\n".join(missing)


def test_architecture_rows_name_their_folders_modules():
    """Each ``folder/`` row of the layer table in docs/architecture.md names
    every module of that folder (``x.py``, ``x.pyx``), and no other."""
    path = ROOT / "docs" / "architecture.md"
    if not path.is_file():
        pytest.skip("no docs/architecture.md")
    rows = re.findall(r"^\| `(\w+)/` \|(.*)\|\s*$", path.read_text(encoding="utf-8"), re.MULTILINE)
    assert rows, "no `folder/` rows in docs/architecture.md's table"
    problems = []
    for folder, text in rows:
        where = ROOT / "fasttag" / folder
        if not where.is_dir():
            problems.append(f"`{folder}/`: no folder fasttag/{folder}")
            continue
        named = set(re.findall(r"`(\w+\.pyx?)`", text))
        present = {p.name for p in where.iterdir() if p.suffix in (".py", ".pyx") and p.name != "__init__.py"}
        problems += [f"`{folder}/` does not name {m}" for m in sorted(present - named)]
        problems += [f"`{folder}/` names {m}, which fasttag/{folder} does not have" for m in sorted(named - present)]
    assert not problems, "\n".join(problems)


def test_cli_synopsis_names_every_command_and_task():
    """The synopsis at the top of docs/cli.md has a line for every
    command, and its ``train`` line names every task."""
    from fasttag.cli import build_parser

    path = ROOT / "docs" / "cli.md"
    if not path.is_file():
        pytest.skip("no docs/cli.md")
    synopsis = next(b for b in BLOCKS[path][0] if not b.kind).text

    def choices(parser):
        return next(a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    commands_ = choices(build_parser())
    shown = {line.split()[1] for line in synopsis.splitlines() if line.startswith("fasttag ")}
    assert sorted(set(commands_) - shown) == [], "commands missing from the synopsis"
    train = next(line for line in synopsis.splitlines() if line.startswith("fasttag train "))
    from fasttag.model import registry
    ours = {name for name, t in registry.train_commands().items() if t.cls.__module__.startswith("fasttag.")}
    assert ours and ours <= set(choices(commands_["train"]))        # (other test files declare tasks of their own)
    assert sorted(ours - set(train.split()[2].split("|"))) == [], train
