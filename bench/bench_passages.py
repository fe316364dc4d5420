"""The passages stage: accuracy on planted edited passages, time and memory on real text.

    python bench/bench_passages.py                     # both parts, print the tables
    python bench/bench_passages.py --write             # also rewrite the passages section of bench/RESULTS.md
    python bench/bench_passages.py --size 64MB --edited-size 16MB --skip-planted

1. Planted passages (tests/test_passages.py's generator, the issue's acceptance corpus): 100
   passages of 400 words of English-like prose, each inserted into 3 distinct documents of
   their own prose (before and after it), the first copy in document order verbatim, the
   other two with each word replaced with probability 5%. `sadedup run --set stages=passages`
   at the default settings and at the settings for edited copies (tests/test_passages.py
   EDITED); from the spans in the database: the share of the edited copies' characters cut
   (recall), the share of the cut characters that lie in planted copies (precision), and the
   characters cut from first copies (must be 0).
2. Real text (bench/corpora.py --kind real: this machine's changelogs, manual pages and licence
   files, nothing downloaded): the corpus is ingested once, then `sadedup passages WORKDIR`
   alone is measured: wall and CPU seconds, peak memory of the process tree (workers
   included; anonymous memory, and resident memory, which also counts the memory-mapped texts),
   with the stage's own phase timings and counts. Defaults with `verify` estimate and exact, and
   the settings for edited copies on a smaller corpus (their chunks are 26 times as many).

The corpora are cached next to --corpus-dir and made again only when missing.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
sys.path.insert(0, str(REPO / "tests"))

import corpora  # noqa: E402
from bench_substring import measure  # noqa: E402

SECTION_BEGIN, SECTION_END = "<!-- passages:begin -->", "<!-- passages:end -->"
ENV = {**os.environ, "CI": "1"}


def sadedup(*args: str) -> list[str]:
    return [sys.executable, "-m", "sadedup.cli", *map(str, args)]


def sets(items: list[str]) -> list[str]:
    return [x for s in items for x in ("--set", s)]


def planted_part(work: Path, workers: int) -> list[dict]:
    import test_passages as tp
    from helpers import db_rows

    planted = tp.planted_passages(21)
    inp = tp.write_jsonl(work / "planted.jsonl", planted.texts)
    rows = []
    for name, extra in [("defaults", []), ("edited", tp.EDITED), ("edited, verify=exact",
                                                                   tp.EDITED + ["passages.verify=exact"])]:
        w = work / f"planted-{len(rows)}"
        shutil.rmtree(w, ignore_errors=True)
        m = measure(sadedup("run", "--input", inp, "--output", work / f"planted-{len(rows)}.jsonl", "--workdir", w,
                            "--workers", workers, "--set", "stages=passages", *sets(extra)), env=ENV)
        assert m["rc"] == 0, m["stderr_tail"]
        cov = tp.coverage(planted, w)
        detail = json.loads(db_rows(w, "SELECT detail FROM stages WHERE stage = 'passages' AND shard = -1")[0][0])
        rows.append({"settings": name, "sets": extra, **cov, "wall": m["wall"], "detail": detail,
                     "docs": len(planted.texts), "chars": sum(map(len, planted.texts))})
        print(f"planted {name}: recall {cov['recall']:.4f} precision {cov['precision']:.4f} "
              f"first copies cut {cov['first_cut']} ({m['wall']:.1f} s)", file=sys.stderr)
    return rows


def real_corpus(path: Path, size: int) -> None:
    if path.exists():
        return
    subprocess.run([sys.executable, str(REPO / "bench" / "corpora.py"), "--size", str(size), "--kind", "real",
                    "-o", str(path)], check=True)


def real_part(work: Path, size: int, edited_size: int, workers: int, corpus_dir: Path) -> list[dict]:
    import test_passages as tp

    rows = []
    for label, nbytes, runs in [(f"{size // 10**6} MB", size, [("defaults", []),
                                                             ("defaults, verify=exact", ["passages.verify=exact"])]),
                                (f"{edited_size // 10**6} MB", edited_size, [("edited", tp.EDITED)])]:
        corpus = corpus_dir / f"real{nbytes // 10**6}.jsonl"
        real_corpus(corpus, nbytes)
        w = work / f"real{nbytes // 10**6}"
        shutil.rmtree(w, ignore_errors=True)
        ing = measure(sadedup("ingest", "--input", corpus, "--workdir", w, "--set", "stages=passages",
                              "--workers", workers), env=ENV)
        assert ing["rc"] == 0, ing["stderr_tail"]
        for name, extra in runs:
            out = work / "detail.json"
            with open(out, "w") as f:
                m = measure(sadedup("passages", w, "--workers", workers, "--format", "json", *sets(extra)), env=ENV,
                            stdout=f)
            assert m["rc"] == 0, m["stderr_tail"]
            detail = json.loads(out.read_text())
            rows.append({"corpus": label, "settings": name, "sets": extra, "measure": m, "detail": detail,
                         "ingest_wall": ing["wall"]})
            print(f"real {label} {name}: {m['wall']:.1f} s wall, {m['cpu']:.1f} s CPU, peak anon "
                  f"{m['peak_anon_mb']:.0f} MB, rss {m['peak_rss_mb']:.0f} MB, {detail['chunks']} chunks, "
                  f"{detail['candidate_pairs']} candidate pairs; others' cores {m['others_cores']}", file=sys.stderr)
    return rows


def measured_on() -> dict:
    """The commit the measured tree is on, and whether sadedup's own files differ from it."""
    def git(*a: str) -> str:
        try:
            return subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""
    dirty = bool(git("status", "--porcelain", "--", "sadedup", "native"))
    return {"commit": git("rev-parse", "--short", "HEAD") or "unknown", "dirty": dirty,
            "date": time.strftime("%Y-%m-%d")}


def report(planted: list[dict], real: list[dict], workers: int, measured: dict) -> str:
    L = [SECTION_BEGIN, "## Passages stage (issue 16)", ""]
    L.append(f"`python bench/bench_passages.py --write` ({measured['date']}, the working tree on sadedup commit "
             f"{measured['commit']}{', uncommitted changes included' if measured['dirty'] else ''}; "
             f"{os.cpu_count()} CPUs shared with other work, `--workers {workers}`).")
    if planted:
        p0 = planted[0]
        L += ["", "### Planted edited passages (the acceptance corpus)", "",
              f"{p0['docs']} documents, {p0['chars'] / 1e6:.2f} M characters: 100 passages of 400 words, each in 3 "
              "distinct documents, the first copy in document order verbatim, the later two with 5% of their words "
              "replaced. Targets: at least 90% of the edited copies' characters cut, at least 90% of the cut "
              "characters in planted copies, no character of a first copy cut.", "",
              "| settings | edited copies cut (recall) | cut in planted copies (precision) | first-copy chars cut | "
              "chunks | candidate pairs | verified | run s |",
              "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in planted:
            d = r["detail"]
            L.append(f"| {r['settings']} | {r['recall']:.4f} | {r['precision']:.4f} | {r['first_cut']} | "
                     f"{d['chunks']} | {d['candidate_pairs']} | {d['verified_pairs']} | {r['wall']:.1f} |")
        L += ["", "Settings for edited copies: `" + " ".join(planted[1]["sets"]) + "`.", "",
              "The defaults (256 words every 128, 5-grams, 0.8) do not find these copies, by design of the "
              "measure rather than by a fault of the search: a 5%-edited copy keeps about 0.95^5 = 77% of its "
              "word 5-grams, a Jaccard near 0.63 even for chunks that line up, and a copy that starts between two "
              "chunk starts is compared with chunks shifted by up to 64 words. Small chunks at a small stride, "
              "bigrams and a threshold of 0.6 (with a banding whose S-curve reaches it) do."]
    if real:
        L += ["", "### Real text", "",
              "bench/corpora.py `--kind real` (changelogs, manual pages, licence files of this machine, one "
              "document per file, cut at 64 KB; its own duplication: changelogs shipped by several packages, "
              "licences, manual pages in several languages). Ingested once; measured is `sadedup passages "
              "WORKDIR` alone, on every document (no exact or MinHash stage before it). Peak memory is summed "
              "over the process tree (driver and workers): anonymous memory, and resident memory, which also "
              "counts the memory-mapped texts.", "",
              "| corpus | settings | wall s | CPU s | MB/s (wall) | peak anon MB | peak RSS MB | chunks | "
              "candidate pairs | verified | chunks cut | documents cut / dropped | others' cores |",
              "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in real:
            m, d = r["measure"], r["detail"]
            L.append(f"| {r['corpus']} | {r['settings']} | {m['wall']:.1f} | {m['cpu']:.1f} | "
                     f"{d['bytes'] / 1e6 / m['wall']:.1f} | {m['peak_anon_mb']:.0f} | {m['peak_rss_mb']:.0f} | "
                     f"{d['chunks']} | {d['candidate_pairs']} | {d['verified_pairs']} | "
                     f"{d['near_duplicate_chunks']} | {d['cut']} / {d['dropped']} | {m['others_cores']} |")
        L += ["", "The stage's own phases (seconds, from its record):", ""]
        for r in real:
            s = r["detail"]["seconds"]
            L.append(f"- {r['corpus']}, {r['settings']}: " + ", ".join(f"{k} {v:.2f}" for k, v in s.items()))
        L += ["", "*Others' cores*: CPU the rest of the machine used during the run, in cores (other sessions "
              "share these 2 cores; wall times are slower by about that share, CPU seconds are the stage's own).",
              "",
              "Reading: at the defaults the stage costs about 27 MB of text per CPU second, most of it the "
              "signatures (the native kernel alone, words to chunk signatures, runs at about 42 MB/s on one core "
              "on this text, the speed of the document MinHash kernel, since each shingle is hashed once however "
              "the chunks overlap). Peak anonymous memory includes about 60 MB per process started (the driver "
              "and two workers); the rest is the driver's candidate and verified pairs (about 24 bytes a "
              "candidate pair) and one band's hashes per task, while signatures, band hashes and the chunk "
              "table stay in memory-mapped files. Memory therefore follows the number of candidate pairs, not "
              "the corpus: the settings for edited copies on real text, which is full of near-copies (man pages "
              "in several languages share their markup), give 26 times the chunks and 11.5 M candidate pairs "
              "on 32 MB. Banding dominates there, since every chunk also collides with its overlapping neighbours "
              "(27 M such band pairs, dropped in the band tasks). No peer tool has a passage-level MinHash to "
              "compare with (datatrove's MinHash works on whole documents)."]
    L.append(SECTION_END)
    return "\n".join(L) + "\n"


def write_section(text: str) -> None:
    path = REPO / "bench" / "RESULTS.md"
    old = path.read_text()
    if SECTION_BEGIN in old:
        a = old.index(SECTION_BEGIN)
        b = old.index(SECTION_END) + len(SECTION_END) + 1
        new = old[:a] + text + old[b:]
    else:
        new = old.rstrip("\n") + "\n\n" + text
    path.write_text(new)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=corpora.parse_size, default=corpora.parse_size("256MB"))
    ap.add_argument("--edited-size", type=corpora.parse_size, default=corpora.parse_size("32MB"),
                    help="real text for the settings for edited copies")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--corpus-dir", type=Path, default=Path(tempfile.gettempdir()) / "sadedup-bench")
    ap.add_argument("--skip-planted", action="store_true")
    ap.add_argument("--skip-real", action="store_true")
    ap.add_argument("--write", action="store_true", help="rewrite the passages section of bench/RESULTS.md")
    ap.add_argument("--report-only", action="store_true", help="the tables again from the last results.json")
    a = ap.parse_args()
    a.corpus_dir.mkdir(parents=True, exist_ok=True)
    work = a.corpus_dir / "passages-work"
    work.mkdir(exist_ok=True)
    if a.report_only:
        last = json.loads((work / "results.json").read_text())
        planted, real, measured = last["planted"], last["real"], last["measured"]
    else:
        measured = measured_on()
        planted = [] if a.skip_planted else planted_part(work, a.workers)
        real = [] if a.skip_real else real_part(work, a.size, a.edited_size, a.workers, a.corpus_dir)
        (work / "results.json").write_text(json.dumps({"planted": planted, "real": real, "measured": measured},
                                                      indent=1, default=str))
    text = report(planted, real, a.workers, measured)
    print(text)
    if a.write:
        write_section(text)


if __name__ == "__main__":
    main()
