"""Every ```python block of README.md and migration_guide/*.md runs.

Blocks of one page run in order in one namespace (a page reads like one session: a later
block may use names an earlier one defined), from the repository root, with the legacy
import names (``tbe``, ``te``, ``topi``) importable and the default chip selected. A block
that is deliberately not runnable is marked by an HTML comment ``<!-- norun -->`` on the
line right above its fence (use sparingly: prefer ```text for listings and output).
"""
import os
import re

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NORUN = "<!-- norun -->"
_FENCE = re.compile(r"^(\s*)```(\S*)\s*$")


def doc_pages() -> list:
    """README.md and every migration_guide page (sorted), relative to the repository root."""
    guide = os.path.join(ROOT, "migration_guide")
    pages = ["README.md"] + sorted(os.path.join("migration_guide", f) for f in os.listdir(guide) if f.endswith(".md"))
    return pages


def python_blocks(text: str) -> list:
    """``[(first line number, code, runnable), ...]`` of the ```python fences of a Markdown text."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = m.group(1), m.group(2)
        j = i + 1
        while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
            j += 1
        if lang == "python":
            prev = next((lines[k].strip() for k in range(i - 1, -1, -1) if lines[k].strip()), "")
            body = [ln[len(indent):] if ln.startswith(indent) else ln.lstrip() for ln in lines[i + 1:j]]
            out.append((i + 2, "\n".join(body) + "\n", prev != NORUN))
        i = j + 1
    return out


def _cases():
    cases = []
    for page in doc_pages():
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            blocks = python_blocks(f.read())
        for k, (line, _, runnable) in enumerate(blocks):
            if runnable:
                cases.append(pytest.param(page, k, id=f"{page}:{line}"))
    return cases


_SESSIONS: dict = {}


def _session(page: str, upto: int) -> dict:
    """The namespace of ``page`` after running its runnable blocks before block ``upto``."""
    ns, done = _SESSIONS.get(page, (None, -1))
    if ns is None or done >= upto:
        ns, done = {"__name__": "__doc_page__"}, -1
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        blocks = python_blocks(f.read())
    for k in range(done + 1, upto):
        line, code, runnable = blocks[k]
        if runnable:
            _run(page, line, code, ns)
        _SESSIONS[page] = (ns, k)
    return ns


def _run(page, line, code, ns):
    exec(compile("\n" * (line - 1) + code, os.path.join(ROOT, page), "exec"), ns)


@pytest.fixture
def doc_env(monkeypatch):
    import tbe_compat.aliases
    from tbe_compat import platform
    tbe_compat.aliases.install()
    platform.reset_platform()
    monkeypatch.chdir(ROOT)
    yield
    platform.reset_platform()


@pytest.mark.parametrize("page,index", _cases())
def test_doc_block_runs(doc_env, page, index):
    ns = _session(page, index)
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        line, code, _ = python_blocks(f.read())[index]
    _run(page, line, code, ns)
    _SESSIONS[page] = (ns, index)


def test_block_extraction_honours_the_norun_marker_and_other_languages():
    text = ("intro\n```python\nx = 1\n```\n\n<!-- norun -->\n\n```python\nraise SystemExit\n```\n"
            "```text\nnot code\n```\n  ```python\n  y = 2\n  ```\n")
    blocks = python_blocks(text)
    assert [(b[1], b[2]) for b in blocks] == [("x = 1\n", True), ("raise SystemExit\n", False), ("y = 2\n", True)]
    assert blocks[0][0] == 3


def test_every_page_is_linked_from_the_index():
    with open(os.path.join(ROOT, "migration_guide", "index.md"), encoding="utf-8") as f:
        index = f.read()
    missing = [p for p in doc_pages() if p.startswith("migration_guide") and not p.endswith("index.md")
               and f"({os.path.basename(p)})" not in index]
    assert not missing, f"pages not linked from migration_guide/index.md: {missing}"


def test_readme_hazard_message_is_what_the_checker_prints(doc_env):
    """README shows the error its matmul block raises without the CUBE -> FIXP flag pair; the text must be
    the checker's (line breaks aside), so a reworded message does not leave the README behind."""
    from pto_core.errors import HazardError
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as f:
        text = f.read()
    code = next(c for _, c, _ in python_blocks(text) if "pto.mad(" in c)
    without = re.sub(r'^pto\.set_flag\("CUBE", "FIXP", 0\).*$', "", code, count=1, flags=re.M)
    assert without != code
    shown = re.search(r"```text\n(HazardError: .*?)```", text, re.S).group(1)
    with pytest.raises(HazardError) as info:
        exec(compile(without, "readme.py", "exec"), {"__name__": "readme"})
    got = f"HazardError: {info.value}"
    assert re.sub(r"\s+", "", got) == re.sub(r"\s+", "", shown), got     # README wraps the message anywhere
