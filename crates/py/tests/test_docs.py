"""Every ```python example of the README and the guides (docs/*.md) runs."""

import contextlib
import io
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)


def examples():
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for i, match in enumerate(FENCE.finditer(path.read_text(encoding="utf-8"))):
            yield pytest.param(match.group(1), id=f"{path.relative_to(ROOT)}#{i}")


def test_docs_have_python_examples():
    assert list(examples()), "no ```python example found under README.md or docs/"


@pytest.mark.parametrize("code", examples())
def test_example_runs(code):
    with contextlib.redirect_stdout(io.StringIO()):
        exec(compile(code, "<docs example>", "exec"), {"__name__": "__docs__"})
