"""Every ```python block of README.md and migration_guide/*.md runs.

Blocks of one page run in order in one namespace (a page reads like one session: a later
block may use names an earlier one defined), from the repository root, with the legacy
import names (``tbe``, ``te``, ``topi``) importable and the default chip selected. A block
that is deliberately not runnable is marked by an HTML comment ``<!-- norun -->`` on the
line right above its fence (use sparingly: prefer ```text for listings and output).

Output the pages show in ```text blocks is checked against what the tools print now where a block
claims to be program output (the README's hazard, pto_sync.md's error messages, the
tik-compare-fixpipe report, a tik-migrate listing row), and every command-line option written after
a tool's name must be one its ``--help`` lists.
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


def _text_blocks(page: str) -> list:
    """The contents of the ```text fences of ``page``, in order."""
    with open(os.path.join(ROOT, page), encoding="utf-8") as f:
        return re.findall(r"^```text\n(.*?)^```", f.read(), re.S | re.M)


def _squash(text: str) -> str:
    return re.sub(r"\s+", "", text)


#: pto_sync.md "Error messages": the statements of each example kernel by line of kernel.py (the
#: messages name those lines), after a common set-up on lines 1-5
_SYNC_SETUP = {
    1: 'm = Machine("A2A3")',
    2: 'l1a, l1b = m.ptr("l1", "f16", 0x0), m.ptr("l1", "f16", 0x200)',
    3: 'l0a, l0b, l0c = m.ptr("l0a", "f16", 0), m.ptr("l0b", "f16", 0), m.ptr("l0c", "f32", 0)',
    4: 'ga, gc = m.gm_alloc((16, 16), "f16", name="a"), m.gm_alloc((16, 16), "f32", name="c")',
    5: 'm.write(l1a, np.ones((16, 16), np.float16)); m.write(l1b, np.ones((16, 16), np.float16))',
}
_SYNC_KERNELS = [
    {8: 'pto.mte_l1_l0a(l1a, l0a, 16, 16)', 9: 'pto.mte_l1_l0b(l1b, l0b, 16, 16)',
     10: 'pto.set_flag("MTE1", "CUBE", 0); pto.wait_flag("MTE1", "CUBE", 0)',
     11: 'pto.mad(l0a, l0b, l0c, 16, 16, 16)', 12: 'pto.mte_l0c_gm(l0c, gc, 16, 16, 16, 16, 0, 0)'},
    {16: 'pto.mte_l1_l0a(l1a, l0a, 16, 16)', 17: 'pto.mte_gm_l1(ga, l1a, 256, nburst=(1, 256, 256))'},
    {18: 'pto.set_flag("V", "MTE2", 0)', 19: 'pto.wait_flag("MTE2", "V", 0)'},
    {18: 'pto.set_flag("V", "MTE2", 0)', 20: 'pto.set_flag("V", "MTE2", 0)'},
]


def test_pto_sync_error_blocks_are_what_the_checkers_print(doc_env):
    import numpy as np
    from pto_core import Machine, pto
    from pto_core.errors import PtoError
    blocks = [b for b in _text_blocks("migration_guide/pto_sync.md") if re.match(r"\w+Error: kernel\.py", b)]
    assert len(blocks) == len(_SYNC_KERNELS)
    for shown, body in zip(blocks, _SYNC_KERNELS):
        lines = {**_SYNC_SETUP, **body}
        src = "\n".join(lines.get(i, "") for i in range(1, max(lines) + 1)) + "\n"
        with pytest.raises(PtoError) as info:
            exec(compile(src, "kernel.py", "exec"), {"Machine": Machine, "pto": pto, "np": np})
        got = f"{type(info.value).__name__}: {info.value}"
        assert _squash(got) == _squash(shown), got
    report = next(b for b in _text_blocks("migration_guide/pto_sync.md") if b.startswith("[('sync'"))
    ns = {"Machine": Machine, "pto": pto}
    exec(compile("machine = Machine('A2A3')\n" + "\n" * 16 + 'pto.set_flag("V", "MTE2", 0)\n', "kernel.py", "exec"), ns)
    got = repr(ns["machine"].end_kernel())
    assert _squash(got) == _squash(report), got


def test_fixpipe_compare_report_block_is_what_the_tool_prints(doc_env):
    from tbe_compat.compare import compare_script, format_comparisons
    shown = next(b for b in _text_blocks("migration_guide/fixpipe_compare.md")
                 if b.startswith("$ tik-compare-fixpipe examples/tik_conv2d_fixpipe.py\n"))
    res = compare_script("examples/tik_conv2d_fixpipe.py")
    got = format_comparisons(res, "table").replace(f"script: {os.path.join(ROOT, 'examples')}{os.sep}",
                                                   "script: .../examples/")
    assert shown.split("\n", 1)[1].rstrip("\n") == got.rstrip("\n"), got


def test_worked_migration_listing_row_is_what_tik_migrate_prints(doc_env, capsys):
    from tbe_compat.migrate import main
    shown = next(b for b in _text_blocks("migration_guide/worked_migration.md") if "tik.vec_add" in b)
    assert main(["examples/migrate_vector_add.py", "--kernel", "scaled_add_step0", "--width", "64"]) == 0
    out = capsys.readouterr().out
    assert shown in out, out


def test_worked_migration_python_rows_are_what_tik_migrate_prints(doc_env, capsys):
    from tbe_compat.migrate import main
    shown = next(b for b in _text_blocks("migration_guide/worked_migration.md") if "pto.ub.vadd(xa.pto_ptr()" in b)
    assert main(["examples/migrate_vector_add.py", "--kernel", "scaled_add_step0", "--format", "python"]) == 0
    out = capsys.readouterr().out
    assert shown in out, out


_TOOLS = ("tik-run", "tik-migrate", "tik-compare-fixpipe", "pto-run")


def _tool_options(tool: str, capsys) -> set:
    from pto_core.cli import pto_run_main
    from tbe_compat.cli import tik_compare_fixpipe_main, tik_migrate_main, tik_run_main
    main = {"tik-run": tik_run_main, "tik-migrate": tik_migrate_main,
            "tik-compare-fixpipe": tik_compare_fixpipe_main, "pto-run": pto_run_main}[tool]
    with pytest.raises(SystemExit):
        main(["--help"])
    return set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", capsys.readouterr().out))


def test_every_tool_option_the_docs_show_exists(capsys):
    """An option written after a tool's name (`tik-migrate ... --check`, in text blocks and inline
    code) is one the tool's --help lists."""
    options = {t: _tool_options(t, capsys) for t in _TOOLS}
    tool_re = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, _TOOLS)) + r")\b")
    unknown, seen = [], 0
    for page in doc_pages():
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            lines = f.read().split("\n")
        for n, line in enumerate(lines, 1):
            for span in re.findall(r"`([^`]+)`", line) or [line]:
                m = tool_re.search(span)
                if not m:
                    continue
                cmd = span[m.end():].split("#")[0]
                for opt in re.findall(r"(?<![\w-])(--[a-z][\w-]*|-[a-zA-Z]\b)", cmd):
                    seen += 1
                    if opt not in options[m.group(1)]:
                        unknown.append(f"{page}:{n}: {m.group(1)} {opt}")
    assert seen > 20 and not unknown, unknown
