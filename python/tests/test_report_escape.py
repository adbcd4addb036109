"""No string of a study reaches report.html as markup (issue 26, item 3).

A recorded study gets markup in every string field of study.json and
results.jsonl that its loader still accepts (scheme, kernel, label, host,
command, reasons, ...); the rendered page, parsed with html.parser, must
hold only the report's own elements and attributes. The template's blocks
are also rendered directly with crafted strings, ids included.
"""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from hympi_lab import analysis, content, render
from hympi_lab.errors import InputError

DATA = Path(__file__).parent / "data"
PAYLOADS = ("<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "' onmouseover='x")
PAYLOAD = "".join(PAYLOADS)

# The report's own vocabulary: anything else came from a record.
TAGS = {"html", "head", "meta", "title", "style", "body", "h1", "h2", "p", "a", "section", "table",
        "thead", "tbody", "tr", "th", "td", "figure", "img", "figcaption"}
ATTRS = {"lang", "charset", "class", "id", "href", "alt", "src"}
SAFE_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


class Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, Any]]) -> None:
        self.tags.append((tag, [(k, v or "") for k, v in attrs]))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, Any]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def assert_no_injected_markup(page: str, images: int) -> Elements:
    parsed = Elements()
    parsed.feed(page)
    parsed.close()
    tags = [t for t, _ in parsed.tags]
    assert set(tags) <= TAGS, set(tags) - TAGS
    assert "script" not in tags
    # every <img> is one of the report's figures: alt and an inline PNG, nothing else
    imgs = [a for t, a in parsed.tags if t == "img"]
    assert len(imgs) == images
    for attrs in imgs:
        assert [k for k, _ in attrs] == ["alt", "src"]
        assert dict(attrs)["src"].startswith("data:image/png;base64,")
    for tag, attrs in parsed.tags:
        for key, value in attrs:
            assert key in ATTRS and not key.startswith("on"), (tag, key)
            if key == "id":
                assert SAFE_ID.fullmatch(value), value
            if key == "href":
                assert value.startswith("#") and SAFE_ID.fullmatch(value[1:]), value
            if key == "class":
                assert value in ("verdict", "warn", "missing"), value
    return parsed


# --- the whole report, from a poisoned recorded study -------------------------------------

def string_paths(value: Any, path: tuple = ()) -> Iterator[tuple]:
    """Paths to every string leaf, list indices as '*' (one path per field)."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from string_paths(v, path + (k,))
    elif isinstance(value, list):
        for v in value:
            yield from string_paths(v, path + ("*",))
    elif isinstance(value, str):
        yield path


def poison(value: Any, path: tuple, change: Callable[[str], str]) -> Any:
    if not path:
        return change(value) if isinstance(value, str) else value
    head, rest = path[0], path[1:]
    if head == "*" and isinstance(value, list):
        return [poison(v, rest, change) for v in value]
    if isinstance(value, dict) and head in value:
        return dict(value, **{head: poison(value[head], rest, change)})
    return value


# Structure, not content: changing these only unlinks records from each other.
STRUCTURAL = {("record",), ("step",), ("status",), ("result", "kind")}


def write_study(d: Path, header: dict[str, Any], lines: list[dict[str, Any]]) -> None:
    (d / "study.json").write_text(json.dumps(header))
    (d / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def loads(d: Path) -> bool:
    try:
        analysis.load(d)
        return True
    except InputError:
        return False


def poisoned_study(tmp_path: Path, name: str) -> tuple[Path, list[str]]:
    """The fixture with PAYLOAD appended to every string field the loader
    still accepts (each field tried alone, then all together), and one run
    marked failed with PAYLOAD as its reason. Returns the directory and the
    fields poisoned."""
    d = tmp_path / name
    shutil.copytree(DATA / name, d)
    header = json.loads((d / "study.json").read_text())
    lines = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
    points = [r for r in lines if r["record"] == "point"]
    # A failed run keeps no result lines (the runner writes none for it).
    points[-1].update(status="failed", reason=PAYLOAD, exit_code=1, n_results=0)
    lines = [r for r in lines if r["record"] == "point" or r["point"] != points[-1]["point"]]
    assert (write_study(d, header, lines) or loads(d)), "the fixture with a failed run must load"
    accepted: list[str] = []
    header_paths = dict.fromkeys(string_paths(header))
    line_paths = dict.fromkeys(p for r in lines for p in string_paths(r) if p not in STRUCTURAL)
    for path in header_paths:
        trial = poison(header, path, lambda s: s + PAYLOAD)
        write_study(d, trial, lines)
        if loads(d):
            header, accepted = trial, accepted + ["study.json:" + ".".join(path)]
    for path in line_paths:
        trial = [poison(r, path, lambda s: s + PAYLOAD) for r in lines]
        write_study(d, header, trial)
        if loads(d):
            lines, accepted = trial, accepted + ["results.jsonl:" + ".".join(path)]
    write_study(d, header, lines)
    assert loads(d)
    return d, accepted


@pytest.mark.parametrize("name", ["study-2x1-depth"])
def test_markup_in_a_recorded_study_stays_text(tmp_path, name):
    d, fields = poisoned_study(tmp_path, name)
    # the fields the report shows are among those poisoned
    for field in ("study.json:machine.host", "results.jsonl:result.kernel", "results.jsonl:result.scheme",
                  "results.jsonl:context.mpi_library", "results.jsonl:context.hosts.*",
                  "results.jsonl:context.compiler", "results.jsonl:label", "results.jsonl:command"):
        assert field in fields, (field, fields)
    verdict = render.write_report(d)
    page = (d / "report.html").read_text()
    figures = len(list((d / "figures").glob("*.png")))
    parsed = assert_no_injected_markup(page, page.count("<img "))
    assert page.count("<img ") <= figures
    text = "".join(parsed.text)
    # shown, as text: the payload survives in the page's text, unparsed
    for payload in PAYLOADS:
        assert payload in text
    assert PAYLOAD in verdict or "<script>" in text
    # the failed run's reason and a poisoned kernel name made it to the page
    assert "run(s) failed" in text
    # figure files and ids come from fixed names or slugs, never a raw string
    for png in (d / "figures").iterdir():
        assert SAFE_ID.fullmatch(png.stem), png.name


# --- the template, fed crafted strings directly --------------------------------------------

def test_template_escapes_every_block_field(tmp_path):
    blocks: list[content.Block] = [
        content.Paragraph(PAYLOAD, "warn"),
        content.Paragraph(PAYLOAD, "verdict", "summary", ("recommendation", PAYLOAD)),
        content.Table([PAYLOAD, "b"], [[PAYLOAD, PAYLOAD]], "t"),
        content.Figure("fig-a", PAYLOAD, data="iVBORw0KGgo="),
        content.Figure("fig-b", "", note=PAYLOAD),
    ]
    sections = [render.RenderedSection("s", 1, PAYLOAD, blocks)]
    page = render.render_page(PAYLOAD, blocks[:1], sections)
    parsed = assert_no_injected_markup(page, 1)
    text = "".join(parsed.text)
    assert text.count(PAYLOAD) >= 8
    img = next(a for t, a in parsed.tags if t == "img")
    assert dict(img)["alt"] == PAYLOAD


def test_blocks_refuse_unsafe_ids_and_slug_makes_safe_ones(tmp_path):
    b = content.Blocks(tmp_path)
    for bad in (PAYLOAD, 'x" onmouseover="y', "", "1abc", "a b"):
        with pytest.raises(ValueError):
            content.safe_id(bad)
    with pytest.raises(ValueError):
        b.p("x", pid='a"b')
    with pytest.raises(ValueError):
        b.table(["x"], [], tid="<t>")
    with pytest.raises(ValueError):
        b.missing("../x", "why")
    taken: list[str] = []
    for i, label in enumerate(["multiple m1", PAYLOAD, PAYLOAD, "<>\"'", "pure MPI"]):
        fid = content.slug("fig-timeline-", label, i, taken)
        assert SAFE_ID.fullmatch(fid) and fid not in taken, fid
        taken.append(fid)
    assert taken[0] == "fig-timeline-multiple-m1" and taken[-1] == "fig-timeline-pure-MPI"
    # a figure's file name is its id
    b.figure("fig-x", lambda paths: Path(paths[0]).write_bytes(b"\x89PNG"), PAYLOAD)
    assert (tmp_path / "fig-x.png").is_file() and isinstance(b.items[-1], content.Figure)


def test_sections_are_numbered_by_position():
    assert render.SECTION_IDS[0] == "machine" and render.NUMBERS["depth"] == len(render.SECTIONS)
    assert render.NUMBERS["depth"] == analysis.DEPTH_SECTION
    assert len(set(render.SECTION_IDS)) == len(render.SECTIONS)
    assert all(SAFE_ID.fullmatch(sid) for sid in render.SECTION_IDS)


# Markup that, if it ran, would leave a mark in the page: a script that
# renames the page and handlers that set an attribute on the body.
DOM_PAYLOAD = ("<script>document.title='PWNED'</script>"
               "\"><img src=x onerror=\"document.body.setAttribute('data-pwned','1')\">"
               "' onmouseover='document.body.setAttribute(\"data-pwned\",\"2\")'"
               "<svg onload=\"document.body.setAttribute('data-pwned','3')\"></svg>")


def test_a_poisoned_report_runs_no_script_in_headless_chromium(tmp_path, monkeypatch):
    """The page as a browser builds it: Chromium loads the report of a study
    whose every string field carries markup; the DOM it ends with holds no
    element the payload would add and no trace of a script having run."""
    import os
    import subprocess
    import sys

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("HYMPI_REQUIRE_NATIVE") == "1":
            pytest.fail("chromium is not installed (scripts/install-deps.sh chromium)")
        pytest.skip("chromium is not installed")
    monkeypatch.setattr(sys.modules[__name__], "PAYLOAD", DOM_PAYLOAD)
    d, fields = poisoned_study(tmp_path, "study-2x1-depth")
    assert len(fields) > 20
    render.write_report(d)
    proc = subprocess.run(
        [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
         "--virtual-time-budget=2000", "--dump-dom", (d / "report.html").as_uri()],
        capture_output=True, text=True, timeout=120)
    dom = proc.stdout
    assert "<body" in dom, proc.stderr[-2000:]
    # (the title shows the poisoned host name as text; the script would make it "PWNED")
    assert re.search(r"<title>(.*?)</title>", dom, re.S).group(1).startswith("hympi study")
    assert "data-pwned" not in re.search(r"<body[^>]*>", dom).group(0)
    assert "<script" not in dom and "<svg" not in dom
    figures = len(list((d / "figures").glob("*.png")))
    assert dom.count("<img ") <= figures
    # ... and the payload is on the page, as text
    assert "&lt;script&gt;document.title='PWNED'&lt;/script&gt;" in dom
