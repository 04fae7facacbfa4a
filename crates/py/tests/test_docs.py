"""Every ```python example of the README and the guides (docs/*.md) runs.

The examples are doctests (`>>>` prompts with the output under each), run
by pytest's doctest on the pages `scripts/test-python` names after
`--doctest-glob='*.md'`. These tests keep that honest: a ```python block
not in doctest form would run nowhere, and neither would a page with
doctests that the script does not name.
"""

import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
SCRIPT = ROOT / "scripts" / "test-python"


def pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def blocks():
    for path in pages():
        for i, match in enumerate(FENCE.finditer(path.read_text(encoding="utf-8"))):
            yield path, i, match.group(1)


def doctest_pages_in_script():
    """The pages after `--doctest-glob='*.md'` in scripts/test-python."""
    text = SCRIPT.read_text(encoding="utf-8").replace("\\\n", " ")
    command = re.search(r"--doctest-glob='\*\.md'([^|\n]*)", text)
    assert command, f"{SCRIPT} runs no --doctest-glob='*.md'"
    # The script runs pytest from target/py-test-work: `../../docs/x.md`.
    words = [w for w in command.group(1).split() if w.endswith(".md")]
    return {(ROOT / re.sub(r"^(\.\./)+", "", w)).resolve() for w in words}


def test_docs_have_python_examples():
    assert list(blocks()), "no ```python example found under README.md or docs/"


@pytest.mark.parametrize("path,i,code", [pytest.param(*b, id=f"{b[0].relative_to(ROOT)}#{b[1]}") for b in blocks()])
def test_example_is_a_doctest(path, i, code):
    first = next((line for line in code.splitlines() if line.strip()), "")
    assert first.startswith(">>> "), (
        f"{path.relative_to(ROOT)}: ```python block {i} is not in doctest form (`>>> ` "
        "prompts, the output under each, a blank line before the closing fence): "
        "it would not run"
    )
    # doctest reads the output up to a blank line, so without one the
    # closing fence would be expected output.
    assert code.endswith("\n\n"), (
        f"{path.relative_to(ROOT)}: ```python block {i} needs a blank line before its closing fence"
    )


def test_pages_with_doctests_are_run():
    with_doctests = {path.resolve() for path, _, _ in blocks()}
    listed = doctest_pages_in_script()
    missing = sorted(str(p.relative_to(ROOT)) for p in with_doctests - listed)
    assert not missing, f"add {missing} after --doctest-glob='*.md' in {SCRIPT.relative_to(ROOT)}"
    gone = sorted(str(p) for p in listed if not p.exists())
    assert not gone, f"{SCRIPT.relative_to(ROOT)} names pages that do not exist: {gone}"
