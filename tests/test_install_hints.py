"""Install hints name the distribution, fasttag-nlp: ``fasttag`` on the
package index is an unrelated package, and ``pip install 'fasttag[dask]'``
would replace this one with it.

Greps the installed package's sources, README and every command's --help.
"""
import argparse
import re
from pathlib import Path

import fasttag
from fasttag.cli import build_parser

# 'fasttag[' not preceded by a name character or '-' (so 'fasttag-nlp[' passes)
WRONG = re.compile(r"(?<![-\w])fasttag\[")
PACKAGE = Path(fasttag.__file__).resolve().parent
README = Path(__file__).resolve().parents[1] / "README.md"


def _help_texts(parser, prefix=("fasttag",)):
    yield " ".join(prefix), parser.format_help()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _help_texts(sub, prefix + (name,))


def test_the_checker_catches_the_wrong_form():
    assert WRONG.search("pip install 'fasttag[dask]'")
    assert WRONG.search("(needs fasttag[plot])")
    assert not WRONG.search("pip install 'fasttag-nlp[dask]'")


def test_package_sources_name_fasttag_nlp():
    files = [p for p in PACKAGE.rglob("*") if p.suffix in (".py", ".pyx", ".pxd", ".md")]
    assert len(files) > 20
    bad = [f"{p.relative_to(PACKAGE)}:{i}" for p in files
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if WRONG.search(line)]
    assert not bad, bad


def test_readme_names_fasttag_nlp():
    if not README.is_file():
        import pytest
        pytest.skip("README.md is not beside the tests")
    text = README.read_text(encoding="utf-8")
    assert "fasttag-nlp[" in text
    assert not WRONG.search(text), WRONG.findall(text)


def test_every_help_text_names_fasttag_nlp():
    texts = dict(_help_texts(build_parser()))
    assert {"fasttag train pos", "fasttag tag", "fasttag eval"} <= set(texts)
    assert any("fasttag-nlp[dask]" in t for t in texts.values())
    bad = [name for name, text in texts.items() if WRONG.search(text)]
    assert not bad, bad
