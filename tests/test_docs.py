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

Every named choice of the code (the rules above `SPEED_SWITCHES`) is named in some migration_guide page,
and every relative link and ``#anchor`` of README.md and the guide resolves.
"""
import ast
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


# --- every named semantic choice of the code is in the guide -------------------------------------------------
#
# A *named choice* is a module-level UPPER_CASE constant of pto_core/ or tbe_compat/ that selects a behaviour
# where sources disagree or are silent (style.md: "make it a NAMED constant/choice in one place ... and record
# it in the matching migration_guide/ page"). The rule that finds them (`named_choices`):
#   1. a module-level ``NAME = True`` / ``NAME = False`` (a behaviour switch);
#   2. a module-level ``NAME = ...`` whose documentation -- the ``#:`` comment right above it or the string
#      right below it -- says "named choice" (mode strings, op / chip sets, tables that switch a rule), unless
#      that text names another choice (then rule 3 takes that name: ``MASK_ROW_ALIGN`` implements MASK_LAYOUT);
#   3. a name written in the code's comments or docstrings right after "named choice" (``Named choice
#      RMW_SPANS:``, ``named choice `CMPMASK_B8_BITS```, ``**ATOMIC_MAXMIN_SIGNED_ZERO**``) or right before
#      "(named choice": choices whose name is not a constant (MASK_LAYOUT) are named this way.
# Each must appear, as a whole word, in some migration_guide/ page.
#
#: Speed switches and internal toggles: booleans that pick between two implementations of the *same*
#: behaviour (same bytes, written flags, reports; tests switch them to compare both). They are documented
#: in their ``#:`` comment (and pto_core/ARCHITECTURE.md where they shape the design), not necessarily in the
#: guide. Everything else rule 1 finds is a semantic choice.
SPEED_SWITCHES = frozenset({
    "FAST_PATHS", "DENSE_FAST_PATH", "CHECK_BY_DOT", "SCALAR_STRUCT", "MAD_F16_PLAN",     # fast kernels
    "LAZY_BUFFERS", "INLINE_ON_CHIP_SPANS", "RMW_SPANS", "IMG2COL_DENSE_DST",              # memory access
    "ASSERT_BIND", "MAD_BIND", "IMG2COL_BIND", "MTE_BIND", "MTE_L1_L0_BIND", "FLAG_BIND",  # compiled binds
    "VECTOR_BIND", "REDUCE_BIND",
    "RECORD_AT_ONCE", "BATCH_RUN_RECORDS", "CHANGED_RUNS", "SMALL_MAP_PATHS", "TILE_SHADOWS",  # checkers
})
_CONST = re.compile(r"[A-Z][A-Z0-9_]*")
_NAMED_AFTER = re.compile(r"(?i:named choices?):?\s*[`*\"']*([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b")
_NAMED_BEFORE = re.compile(r"\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)[`*\"']*:?\s*\((?i:a |the )?(?i:named choice)")


def _module_choices(src: str, where: str) -> dict:
    """``{name: where:line}`` of the named choices rules 1-3 find in one module's source."""
    found = {}
    for m in list(_NAMED_AFTER.finditer(src)) + list(_NAMED_BEFORE.finditer(src)):
        found.setdefault(m.group(1), f"{where}:{src.count(chr(10), 0, m.start()) + 1}")
    lines = src.split("\n")
    body = ast.parse(src).body
    for i, node in enumerate(body):
        if not isinstance(node, (ast.Assign, ast.AnnAssign)) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name) and _CONST.fullmatch(t.id)]
        if not names:
            continue
        k, doc = node.lineno - 2, []
        while k >= 0 and lines[k].lstrip().startswith("#:"):
            doc.append(lines[k])
            k -= 1
        nxt = body[i + 1] if i + 1 < len(body) else None
        if isinstance(nxt, ast.Expr) and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str):
            doc.append(nxt.value.value)
        doc = "\n".join(doc)
        is_bool = isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool)
        says_choice = (re.search(r"named choice", doc, re.I) and not _NAMED_AFTER.search(doc)
                       and not _NAMED_BEFORE.search(doc))
        if is_bool or says_choice:
            for n in names:
                found.setdefault(n, f"{where}:{node.lineno}")
    return found


def named_choices() -> dict:
    """``{name: "file:line"}`` of every named choice in pto_core/ and tbe_compat/ (rules above)."""
    found = {}
    for top in ("pto_core", "tbe_compat"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if f.endswith(".py"):
                    path = os.path.join(dirpath, f)
                    with open(path, encoding="utf-8") as fh:
                        src = fh.read()
                    for name, where in _module_choices(src, os.path.relpath(path, ROOT)).items():
                        found.setdefault(name, where)
    return found


def _guide_text() -> str:
    guide = os.path.join(ROOT, "migration_guide")
    parts = []
    for f in sorted(os.listdir(guide)):
        if f.endswith(".md"):
            with open(os.path.join(guide, f), encoding="utf-8") as fh:
                parts.append(fh.read())
    return "\n".join(parts)


def test_choice_rules_find_switches_documented_choices_and_named_mentions():
    src = ('#: Named choice: a documented rule.\nMODE = "even"\n'
           'FLAG_ON = False\n'
           'LIMIT = 4\n"""A plain limit."""\n'
           '#: Named choice OTHER_NAME: spelled out.\nPAIRS = (1, 2)\n'
           '#: Bits (named choice, see the module doc).\nMASK_ROW = 8\n'
           '#: MASK_LAYOUT (named choice): its row.\nMASK_ROW_ALIGN = 8\n'
           'def f():\n    """MASK_LAYOUT (named choice): bytes are bits; see **ATOMIC_RULE** (named choice)."""\n'
           'def g():\n    """Named choice exact_then_round: a lower-case phrase is not a name."""\n')
    got = _module_choices(src, "m.py")
    assert sorted(got) == ["ATOMIC_RULE", "FLAG_ON", "MASK_LAYOUT", "MASK_ROW", "MODE", "OTHER_NAME"], got
    assert got["MODE"] == "m.py:2" and got["OTHER_NAME"] == "m.py:6"


def test_every_named_choice_is_in_the_migration_guide():
    """A named choice (see the rules above `SPEED_SWITCHES`) that no migration_guide page names is a
    semantic choice a kernel author cannot find: add a row naming it and its source to the page of its
    subject (numerics.md, tik_vector.md, pto_cube.md, ...)."""
    choices = named_choices()
    assert len(choices) > 120, len(choices)                  # the rules still find the code's choices
    stale = sorted(SPEED_SWITCHES - set(choices))
    assert not stale, f"SPEED_SWITCHES names no boolean switch of the code any more: {stale}"
    guide = _guide_text()
    missing = [f"{name} ({where})" for name, where in sorted(choices.items()) if name not in SPEED_SWITCHES
               and not re.search(rf"(?<![A-Za-z0-9_]){name}(?![A-Za-z0-9_])", guide)]
    assert not missing, "named choices no migration_guide page mentions:\n" + "\n".join(missing)


def _slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", re.sub(r"<[^>]+>", "", heading.strip()).lower()).replace(" ", "-")


def _anchors(text: str) -> set:
    """The anchors of a Markdown text: its headings' slugs (``-1``, ``-2`` for repeats) and ``<a id=...>``."""
    seen, out = {}, set()
    for _, line in _prose_lines(text):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        slug = _slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    out.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return out


def _prose_lines(text: str):
    """``(line number, line)`` of a Markdown text outside its ``` fences."""
    fenced = False
    for n, line in enumerate(text.split("\n"), 1):
        if re.match(r"^\s*```", line):
            fenced = not fenced
        elif not fenced:
            yield n, line


def test_heading_anchors_are_githubs():
    text = "# Top\n## Named choice: vsel mode 0 (`bits`)\n```text\n# not a heading\n```\n## Top\n<a id=\"x-y\"></a>\n"
    assert _anchors(text) == {"top", "named-choice-vsel-mode-0-bits", "top-1", "x-y"}


def test_guide_links_and_anchors_resolve():
    """Every relative link ``[...](page.md)`` / ``(page.md#anchor)`` / ``(#anchor)`` of README.md and the
    guide names an existing file and, with an anchor, a heading of it (GitHub's heading slugs)."""
    broken, seen = [], 0
    for page in doc_pages():
        with open(os.path.join(ROOT, page), encoding="utf-8") as f:
            text = f.read()
        for line, prose in _prose_lines(text):
            for target in re.findall(r"\[[^\[\]`]*\]\(([^)\s]+)\)", prose):
                if re.match(r"[a-z]+:", target):
                    continue
                seen += 1
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(ROOT, os.path.dirname(page), path)) if path else os.path.join(ROOT, page)
                if not os.path.exists(full):
                    broken.append(f"{page}:{line}: {target} (no such file)")
                elif anchor and full.endswith(".md"):
                    with open(full, encoding="utf-8") as f:
                        if anchor not in _anchors(f.read()):
                            broken.append(f"{page}:{line}: {target} (no such heading)")
    assert seen > 50 and not broken, "\n".join(broken)
