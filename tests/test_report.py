"""`sadedup report`: its numbers are the database's, the page is one self-contained file that
escapes the corpus, the span sections follow `spans.method`, the sample is reproducible."""
from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import time
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from helpers import db_rows, held_at, read_jsonl
from nearcopies import Writer, jaccard, planted_corpus, write_jsonl

import sadedup
from sadedup import audit_html

# a passage that would fetch, run and reorder if it reached the page unescaped
INJECT = ('<script>alert("x")</script><img src="http://example.invalid/x.png" onerror="alert(1)">'
          '<a href="https://example.invalid/">link</a> <style>@import url(//example.invalid/a.css);</style> '
          '\u202etxet desrever\u202c and a bell \u0007 in the middle of plain words that go on for a while')


def cli(cwd: Path, *args, check: bool = True) -> subprocess.CompletedProcess:
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", *map(str, args)], capture_output=True, text=True,
                       cwd=cwd, env={**os.environ, "CI": "1"}, timeout=600)
    if check and p.returncode != 0:
        raise AssertionError(f"sadedup {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}")
    return p


NAMESPACES = {"xmlns": "http://www.w3.org/2000/svg", "xmlns:xlink": "http://www.w3.org/1999/xlink"}


class Markup(HTMLParser):
    """The page's tags, declarations and every attribute value that holds an address."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags, self.decls, self.pis, self.addresses = [], [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))
        for k, v in attrs:
            if v and re.search(r"://|^\s*//|^\s*(https?|ftp|file|data|javascript|blob|wss?):", v, re.I):
                self.addresses.append((k, v))

    handle_startendtag = handle_starttag

    def handle_decl(self, decl):
        self.decls.append(decl)

    def handle_pi(self, data):
        self.pis.append(data)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> tuple[Path, Path, list[str]]:
    """One default run (exact, minhash, substring) over two files: planted near-copies, and
    documents that share the injected passage (a repeated passage and an exact-duplicate
    cluster of four, the largest, so the page must show it)."""
    root = tmp_path_factory.mktemp("report")
    a = planted_corpus(7, 24, words=(40, 160)).docs
    w = Writer(11)
    b = [f"{w.document(30)} {INJECT} {w.document(30)}" for _ in range(6)] + [INJECT + " " + w.document(12)] * 4
    write_jsonl(root / "a.jsonl", a)
    write_jsonl(root / "b.jsonl", b)
    sadedup.run([root / "a.jsonl", root / "b.jsonl"], root / "out.jsonl", root / "w", overrides=["run.workers=1"],
                executor="inline", quiet=True)
    return root, root / "w", a + b


@pytest.fixture(scope="module")
def data(work) -> dict:
    root, w, _ = work
    return json.loads(cli(root, "report", w, "--format", "json").stdout)


def sql(w: Path, query: str, args: tuple = ()) -> list[tuple]:
    return db_rows(w, query, args)


def test_json_numbers_equal_the_database(work, data):
    root, w, docs = work
    d = data["documents"]
    assert d["input"] == len(docs) == sql(w, "SELECT count(*) FROM documents")[0][0]
    assert d["kept"] == sql(w, "SELECT count(*) FROM documents WHERE status = 'kept'")[0][0]
    assert d["dropped"] == dict(sql(w, "SELECT reason, count(*) FROM documents WHERE status = 'dropped' GROUP BY 1"))
    assert set(d["dropped"]) == {"exact_duplicate", "near_duplicate", "substring_coverage"}
    assert d["cut"] == sql(w, "SELECT count(DISTINCT doc_id) FROM spans JOIN documents USING (doc_id) "
                              "WHERE status = 'kept'")[0][0] > 0
    c = data["chars"]
    assert c["input"] == sum(len(t) for t in docs) == sql(w, "SELECT sum(n_chars) FROM documents")[0][0]
    assert c["output"] == sum(len(r["text"]) for r in read_jsonl(root / "out.jsonl"))  # what the output holds
    m = data["minhash"]
    detail = json.loads(sql(w, "SELECT detail FROM stages WHERE stage = 'minhash' AND shard = -1")[0][0])
    assert (m["bands"], m["rows"], m["num_perm"]) == (14, 8, 112)
    n = detail["documents"]
    assert m["candidate_pairs"] == detail["candidate_pairs"] > 0
    assert m["candidate_pair_share"] == pytest.approx(detail["candidate_pairs"] / (n * (n - 1) / 2))
    assert m["clusters"] == sql(w, "SELECT count(*) FROM clusters WHERE method = 'minhash'")[0][0]
    assert m["dropped"] == d["dropped"]["near_duplicate"]
    # the stages chain: each one's output is the next one's input, and the last one's is the output
    s = data["stages"]
    assert [x["method"] for x in s] == ["exact", "minhash", "substring"]
    assert s[0]["documents_in"] == d["input"] and s[-1]["documents_out"] == d["kept"]
    assert all(x["documents_out"] == y["documents_in"] and x["chars_out"] == y["chars_in"] for x, y in zip(s, s[1:]))
    assert s[-1]["chars_out"] == c["output"]
    assert data["tokens"]["removed"] == sql(w, "SELECT sum(CASE WHEN reason = 'substring_coverage' THEN n_tokens "
                                               "ELSE removed_tokens END) FROM documents WHERE status = 'kept' OR "
                                               "reason = 'substring_coverage'")[0][0]
    for method, cl in data["clusters"].items():
        assert cl["sizes"] == [list(r) for r in sql(w, "SELECT size, count(*) FROM clusters WHERE method = ? "
                                                       "GROUP BY size ORDER BY size", (method,))]
    sp = data["spans"]["substring"]
    assert (sp["spans"], sp["documents"]) == sql(w, "SELECT count(*), count(DISTINCT doc_id) FROM spans")[0]
    assert sum(n for _, n in sp["length_bins"]) == sp["spans"] and sum(n for _, n in sp["coverage_bins"]) == sp["documents"]
    assert sp["dropped"] == d["dropped"]["substring_coverage"]
    top = sp["top_passages"][0]
    assert INJECT[:40] in top["source"]["text"] and top["count"] >= 3  # the planted passage is the most repeated
    by = {x["source"]: x for x in data["by_source"]}
    assert sorted(by) == sorted(str((root / f).resolve()) for f in ("a.jsonl", "b.jsonl"))
    for source, n, kept in sql(w, "SELECT source, count(*), sum(status = 'kept') FROM documents GROUP BY source"):
        assert (by[source]["documents"], by[source]["kept"]) == (n, kept)
    assert sum(x["chars_out"] for x in by.values()) == c["output"]
    # resources: a row per stage that ran, with its time and the bytes of its files
    res = {x["stage"]: x for x in data["resources"]["stages"]}
    assert res["build"]["disk_bytes"] > 0 and res["minhash"]["seconds"] > 0
    assert data["datasheet"]["inputs"][0]["path"].endswith("a.jsonl")


def test_measured_points_are_exact_jaccard_against_signatures(work, data):
    _, w, docs = work
    meas = data["minhash"]["measured"]
    assert meas["pairs"] == min(400, data["minhash"]["candidate_pairs"])
    for a, b, j, agree in meas["points"]:
        assert j == pytest.approx(jaccard(docs[a], docs[b]), abs=1e-6)
        assert abs(agree * 112 - round(agree * 112)) < 1e-4  # a share of the 112 signature rows
    assert sum(x["pairs"] for x in meas["bins"]) == meas["pairs"]
    for x in meas["bins"]:
        assert x["agreement_low"] <= x["agreement"] <= x["agreement_high"]
        assert x["jaccard_from"] <= x["mean_jaccard"] <= x["jaccard_to"]
    # agreement is an unbiased estimate of the Jaccard: its error is about what theory says
    assert meas["rms_error"] < 2.5 * meas["expected_rms_error"] + 0.01
    at = meas["at_threshold"]
    assert at["verified"] == sum(1 for *_, g in meas["points"] if g >= 0.8)  # estimate: the stage's own similarity
    # the threshold sweep holds the run's own decision
    run = [r for r in data["minhash"]["sweep"] if r["value"] == 0.8][0]
    assert run["dropped"] == data["documents"]["dropped"]["near_duplicate"]


def test_the_page_is_self_contained_and_escapes_the_corpus(work):
    root, w, _ = work
    out = root / "report.html"
    p = cli(root, "report", w, "-o", out)
    assert p.stdout.startswith(f"report: {out} (") and p.returncode == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    # nothing that could fetch: no script, no external link, image, frame, style sheet or import
    assert not re.search(r"""\b(src|href|action|poster|data)\s*=\s*["']?\s*(https?:|//|file:)""", page, re.I)
    assert not re.search(r"<(script|link|iframe|object|embed|img|base|image|foreignObject)\b", page, re.I)
    styles = re.findall(r"<style\b[^>]*>(.*?)</style>", page, re.S | re.I)  # the plots' own too
    assert len(styles) == 1 and "url(" not in styles[0] and "@import" not in styles[0]
    assert re.findall(r'="[^"]*url\((?!#)', page) == []  # attributes refer to the page itself only (clip paths)
    assert all(h.startswith("#") for h in re.findall(r'href="([^"]*)"', page))
    assert "Content-Security-Policy" in page
    # in the markup (not the escaped text), an address appears only as the SVG and XLink
    # namespace names, which name a vocabulary and are never fetched
    markup = Markup()
    markup.feed(page)
    markup.close()
    assert markup.decls == ["DOCTYPE html"] and not markup.pis  # no SVG DOCTYPE with its DTD address
    assert set(markup.addresses) == set(NAMESPACES.items()), markup.addresses
    assert "<metadata" not in page and "matplotlib.org" not in page
    ids = [v for _, attrs in markup.tags for k, v in attrs if k == "id"]
    assert len(ids) == len(set(ids))  # the plots' clip paths and markers do not collide
    refs = {v[1:] for _, attrs in markup.tags for k, v in attrs if k in ("href", "xlink:href")}
    refs |= {m for _, attrs in markup.tags for _, v in attrs for m in re.findall(r"url\(#([^)]+)\)", v or "")}
    assert refs <= set(ids)  # and every reference finds its target on the page
    # the planted passage is on the page, escaped, with its controls shown as marks
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "\u27e8U+202E\u27e9txet desrever" in page and "\u0007" not in page and "\u202e" not in page
    # every section that has data, plots and the review sample
    for sid in ("summary", "stages", "minhash", "clusters", "spans-substring", "review", "sources", "resources",
                "datasheet"):
        assert f'<section id="{sid}">' in page, sid
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') >= 8 and 'class="pair"' in page
    # the same bytes from another process: the plots' ids come from a fixed salt, no date
    assert page == audit_html.render(sadedup.report(w))


def test_the_same_seed_gives_the_same_report(work):
    _, w, _ = work
    a, b = sadedup.report(w, seed=3), sadedup.report(w, seed=3)
    assert json.dumps(a) == json.dumps(b) and audit_html.render(a) == audit_html.render(b)
    c = sadedup.report(w, seed=4)
    assert c["sample"] != a["sample"] and c["documents"] == a["documents"]
    picked = a["sample"]["clusters"]["minhash"]
    assert len(picked) == 6 and len({x["cluster_id"] for x in picked}) == 6
    for x in picked:  # kept beside dropped, as the database says
        kept = sql(w, "SELECT kept_doc_id FROM clusters WHERE cluster_id = ?", (x["cluster_id"],))[0][0]
        assert x["kept"]["doc_id"] == kept and all(m["doc_id"] != kept for m in x["dropped"])
    for s in a["sample"]["spans"]["substring"]:
        doc, cs, ce, src, ss, se = sql(w, "SELECT doc_id, char_start, char_end, src_doc_id, src_char_start, "
                                          "src_char_end FROM spans WHERE span_id = ?", (s["span_id"],))[0]
        assert (s["removed"]["doc_id"], s["removed"]["start"], s["removed"]["end"]) == (doc, cs, ce)
        assert (s["source"]["doc_id"], s["source"]["start"], s["source"]["end"]) == (src, ss, se)


def test_span_sections_follow_the_methods_in_the_database(work, tmp_path):
    """Spans of any method get their section, and eval_items its verdicts, with no change to
    the report: here written into a copy of the database as other span stages would."""
    _, w, _ = work
    w2 = tmp_path / "w"
    shutil.copytree(w, w2)
    con = sqlite3.connect(w2 / "sadedup.db")
    with con:
        top = con.execute("SELECT max(span_id) FROM spans").fetchone()[0]
        kept = [r[0] for r in con.execute("SELECT doc_id FROM documents WHERE status = 'kept' ORDER BY doc_id LIMIT 3")]
        con.executemany("INSERT INTO spans (span_id, method, doc_id, char_start, char_end, src_doc_id, src_char_start, "
                        "src_char_end) VALUES (?, 'lines', ?, 0, 5, ?, 0, 5)",
                        [(top + 1 + i, d, kept[0]) for i, d in enumerate(kept[1:])])
        con.executemany("INSERT INTO eval_items VALUES (?, ?, ?, 'question', ?, ?, ?, ?, ?)",
                        [(0, "eval/a.jsonl", 1, 10, 9, 0.9, "contaminated", 2),
                         (1, "eval/a.jsonl", 2, 10, 2, 0.2, "partial", 1),
                         (2, "eval/b.jsonl", 1, 10, 0, 0.0, "clean", 0)])
        con.execute("INSERT INTO spans (span_id, method, doc_id, char_start, char_end, src_item_id) "
                    "VALUES (?, 'decontaminate', ?, 2, 9, 0)", (top + 10, kept[2]))
    con.close()
    d = sadedup.report(w2)
    assert set(d["spans"]) == {"substring", "lines", "decontaminate"}
    assert d["spans"]["lines"]["spans"] == 2 and d["spans"]["lines"]["covered_chars"] == 10
    assert d["spans"]["decontaminate"]["top_passages"][0]["eval_item"]["eval_file"] == "eval/a.jsonl"
    sets = {e["eval_file"]: e for e in d["decontamination"]["eval_sets"]}
    assert sets["eval/a.jsonl"]["verdicts"] == {"contaminated": 1, "partial": 1} and sets["eval/b.jsonl"]["items"] == 1
    # the union of every method's spans is what the output loses
    assert d["chars"]["output"] < sadedup.report(w)["chars"]["output"]
    page = audit_html.render(d)
    assert '<section id="spans-lines">' in page and '<section id="decontamination">' in page


def test_a_report_with_a_sweep_and_of_a_partial_folder(work, tmp_path):
    root, w, _ = work
    d = sadedup.report(w, min_lengths="150", minhash_thresholds=[0.7])
    assert d["sweep"]["min_length"] == sadedup.sweep(w, min_lengths=[150])["min_length"]
    assert [r["value"] for r in d["minhash"]["sweep"]] == [0.7, 0.8]
    assert '<section id="sweep">' in audit_html.render(d)
    # a folder where only ingest ran: counts, and no section for what did not run
    sadedup.ingest(root / "a.jsonl", tmp_path / "i", quiet=True)
    p = sadedup.report(tmp_path / "i", tmp_path / "i.html")
    assert p["documents"]["kept"] == p["documents"]["input"] > 0 and p["minhash"] is None and p["spans"] == {}
    page = (tmp_path / "i.html").read_text()
    assert '<section id="minhash">' not in page
    # and it says, on the page, in the json and on the command line, that these are not the run's numbers
    assert [s["stage"] for s in p["unfinished"]][:2] == ["exact", "minhash"] and p["unfinished"][-1]["stage"] == "export"
    assert {s["state"] for s in p["unfinished"]} == {"pending"}
    assert "This work folder is not finished" in page and "minhash (pending: not run yet)" in page
    line = cli(tmp_path, "report", "i", "-o", "i2.html").stdout
    assert "unfinished: exact, minhash," in line and "see `sadedup status i`" in line
    assert d["unfinished"] == [] and "not finished" not in audit_html.render(d)
    # a finished folder with one stage rerun under another setting: what came after it is stale
    shutil.copytree(w, tmp_path / "w2")
    cli(tmp_path, "exact", "w2", "--set", "exact.lowercase=true")
    q = sadedup.report(tmp_path / "w2")
    assert "minhash" in [s["stage"] for s in q["unfinished"] if s["state"] == "stale"]
    assert q["unfinished"][-1]["stage"] == "export"
    with pytest.raises(sadedup.SadedupError, match="inside the work folder"):
        sadedup.report(w, w / "r.html")


def test_the_page_is_never_written_over_an_input_or_the_output(work):
    """`report -o a.jsonl` wrote the HTML page over the corpus (and the next run then refused
    the changed input, the corpus lost); over the folder's output, its export: one line now."""
    root, w, _ = work
    mine = {n: (root / n).read_bytes() for n in ("a.jsonl", "out.jsonl")}
    for name, said in (("a.jsonl", "is one of the inputs"), ("out.jsonl", "is the work folder's output")):
        p = cli(root, "report", w, "-o", name, check=False)
        assert p.returncode == 2 and p.stderr.strip().splitlines() == [f"sadedup: error: report {name} {said}; "
                                                                       f"write it elsewhere"], p.stderr
    assert {n: (root / n).read_bytes() for n in mine} == mine


def _png_pixels(path: Path) -> tuple[int, int, bytes]:
    """Width, height and the raw (filtered) scanlines of a PNG: enough to tell a blank page."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at, idat, w, h = 8, b"", 0, 0
    while at < len(data):
        n, kind = struct.unpack(">I4s", data[at:at + 8])
        body = data[at + 8:at + 8 + n]
        if kind == b"IHDR":
            w, h = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        at += 12 + n
    return w, h, zlib.decompress(idat)


APT_TIMEOUT = 900  # seconds for apt-get update and install together (chromium is ~100 MB)


def ensure_chromium() -> tuple[str | None, str]:
    """Debian's chromium: its path, installed with apt-get first when it is missing and this
    process can install it (root, apt-get on PATH); else None and why not."""
    found = shutil.which("chromium")
    if found:
        return found, ""
    apt = shutil.which("apt-get")
    if apt is None:
        return None, "chromium is not installed and there is no apt-get to install it"
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return None, "chromium is not installed and installing it needs root (apt-get install chromium)"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    deadline = time.monotonic() + APT_TIMEOUT
    for args in (["update", "-qq"], ["install", "-y", "-qq", "-o", "DPkg::Lock::Timeout=300", "chromium"]):
        try:
            p = subprocess.run([apt, *args], env=env, capture_output=True, text=True, check=False,
                               timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return None, f"apt-get update and install chromium took over {APT_TIMEOUT} s"
        if p.returncode != 0:
            return None, f"apt-get {' '.join(args)} failed ({p.returncode}): {(p.stderr or p.stdout).strip()[-400:]}"
    found = shutil.which("chromium")
    return (found, "") if found else (None, "apt-get install chromium left no chromium on PATH")


@pytest.fixture(scope="session")
def chromium() -> str:
    """The test set-up's chromium: installed when missing; the test is skipped, with the reason,
    only where it cannot be (not root, no apt-get, the install failed)."""
    path, why = ensure_chromium()
    if path is None:
        pytest.skip(f"needs Debian's chromium: {why}")
    return path


def test_the_set_up_installs_chromium_when_missing(tmp_path, monkeypatch):
    """ensure_chromium's install path, against a stand-in apt-get that installs a stand-in
    chromium (the machine's own chromium is neither used nor touched)."""
    bin_, log = tmp_path / "bin", tmp_path / "apt.log"
    bin_.mkdir()
    apt = bin_ / "apt-get"
    apt.write_text(f'#!/bin/sh\necho "$DEBIAN_FRONTEND $*" >> "{log}"\n'
                   f'[ "$1" = install ] && printf "#!/bin/sh\\n" > "{bin_}/chromium" && /bin/chmod +x "{bin_}/chromium"\n'
                   f'exit 0\n')
    apt.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_))
    monkeypatch.setattr(os, "geteuid", lambda: 1000, raising=False)
    assert ensure_chromium() == (None, "chromium is not installed and installing it needs root (apt-get install chromium)")
    assert not log.exists()
    monkeypatch.setattr(os, "geteuid", lambda: 0, raising=False)
    assert ensure_chromium() == (str(bin_ / "chromium"), "")
    assert log.read_text().splitlines() == ["noninteractive update -qq",
                                            "noninteractive install -y -qq -o DPkg::Lock::Timeout=300 chromium"]
    assert ensure_chromium() == (str(bin_ / "chromium"), "") and len(log.read_text().splitlines()) == 2  # found now
    (bin_ / "chromium").unlink()
    apt.write_text('#!/bin/sh\necho "E: Unable to locate package chromium" >&2\nexit 100\n')
    path, why = ensure_chromium()
    assert path is None and why.startswith("apt-get update -qq failed (100): E: Unable to locate")
    apt.unlink()
    assert ensure_chromium() == (None, "chromium is not installed and there is no apt-get to install it")


def test_a_headless_browser_renders_the_page(work, tmp_path, chromium):
    root, w, _ = work
    out = tmp_path / "r.html"
    sadedup.report(w, out)
    shot = tmp_path / "shot.png"
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--window-size=1280,1600", f"--screenshot={shot}", out.as_uri()], capture_output=True, timeout=120)
    width, height, raw = _png_pixels(shot)
    assert (width, height) == (1280, 1600)
    assert len(set(raw)) > 64 and len(zlib.compress(raw)) > 20000  # text and plots, not one colour


def test_two_reports_to_one_file_one_is_refused_the_other_whole(work, tmp_path):
    """Reports of two folders to one page wrote one `page.partial` at once: the first held
    in its write (SIGSTOP at report.write) while the second wrote and renamed it, then the
    first wrote on over the renamed page and failed with "No such file or directory:
    ...partial", leaving the two mixed. Now the second is refused in one line naming the
    first's pid, and the page is the first's, whole."""
    _, w, _ = work
    other = tmp_path / "w2"
    shutil.copytree(w, other)
    page, alone = tmp_path / "r.html", tmp_path / "alone.html"
    cli(tmp_path, "report", w, "-o", alone, "--seed", "1")
    with held_at(["report", w, "-o", page, "--seed", "1"], "report.write", cwd=tmp_path) as first:
        second = cli(tmp_path, "report", other, "-o", page, "--seed", "2", check=False)
    assert first.returncode == 0, first.err
    assert second.returncode == 2 and second.stderr.strip().splitlines() == [
        f"sadedup: error: report {page} is being written by another sadedup run (pid {first.pid}); wait for it or "
        f"write elsewhere"], second.stderr
    assert page.read_bytes() == alone.read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["alone.html", "r.html", "w2"]
