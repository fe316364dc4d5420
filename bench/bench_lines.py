"""Line dedup on real text: sadedup's `lines` stage, and datatrove's line dedup beside it.

    python bench/bench_lines.py                                  # 256 MB of real and crawl text
    python bench/bench_lines.py --size 32MB --kinds real --no-datatrove    # a quick look
    python bench/bench_lines.py --write                          # also rewrites its section of RESULTS.md

The corpora are bench/corpora.py's `real` (this machine's changelogs, manual pages and
licences, one document per file) and `crawl` (the same text duplicated as a raw crawl is),
written once as --parts JSONL files in one folder (cached under --cache), which both tools
read, so both can read in parallel.

sadedup, each step its own command, timed and measured on its own: `ingest` of the folder,
then `lines` three times on the same work folder (keep="first" with drop_fraction 1.0, the
setting datatrove's rule matches; keep="first" with the default 0.8; keep="none"), then
`export`. Each `lines` is the whole command: its scan, count and keep-first tasks on a pool of
--workers processes, and writing every span to SQLite.

datatrove (pip install datatrove, in any Python: --datatrove-python, default the one running
this script if it has datatrove): its three-step SentenceDedup with the configuration that
makes it line dedup, `SentDedupConfig(n_sentences=1, split_sentences=False,
min_doc_words=0, min_num_sentences=0)`, every text normalization off
(`TextNormConfig(lowercase=False, norm_whitespace=False, remove_punctuation=False,
norm_unicode_diacritics=False, norm_numbers=False)`, which leaves `str.strip`), 64-bit xxhash;
signatures and the filter as --parts tasks on --workers processes
(LocalPipelineExecutor), the duplicate finder as --workers tasks (finder_workers). It reads
the same JSONL files and writes the kept documents as JSONL (what `ingest` + `lines` +
`export` do together). Its rule is keep-first with no drop rule (drop_fraction 1.0 is the
like-for-like sadedup run) and its keys differ only by NFC and by `str.splitlines`, which
also splits at \\r, \\x0b, \\x0c, \\x1c-\\x1e, \\x85, U+2028 and U+2029: the removed-line counts
printed side by side show how far that goes.

Wall time is each command's (interpreter start included); peak memory is the sum of RssAnon
over the command's whole process tree (workers included), polled from /proc every 50 ms
(bench/proctree.py); `others` is the load other processes put on the machine meanwhile, in
cores (this machine is shared: a number taken under load is slower than the code is).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "bench"))
from corpora import files_digest, generate, machine_files, parse_size  # noqa: E402
from proctree import descendants, mem_kb  # noqa: E402

CLK = os.sysconf("SC_CLK_TCK")
BEGIN, END = "<!-- lines:begin -->", "<!-- lines:end -->"

DATATROVE = r'''
import json, sys, time
from datatrove.executor import LocalPipelineExecutor
from datatrove.pipeline.readers import JsonlReader
from datatrove.pipeline.writers import JsonlWriter
from datatrove.pipeline.dedup import SentenceDedupSignature, SentenceFindDedups, SentenceDedupFilter
from datatrove.pipeline.dedup.sentence_dedup import SentDedupConfig
from datatrove.utils.text import TextNormConfig

src, work, parts, workers = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
norm = TextNormConfig(lowercase=False, norm_whitespace=False, remove_punctuation=False,
                      norm_unicode_diacritics=False, norm_numbers=False)
config = SentDedupConfig(n_sentences=1, split_sentences=False, min_doc_words=0, min_num_sentences=0,
                         norm_config=norm)
times = {}
def run(name, steps, tasks, w):
    t = time.perf_counter()
    LocalPipelineExecutor(pipeline=steps, tasks=tasks, workers=w, logging_dir=f"{work}/logs/{name}",
                          skip_completed=False).run()
    times[name] = round(time.perf_counter() - t, 3)
run("signatures", [JsonlReader(src), SentenceDedupSignature(output_folder=f"{work}/sigs", config=config,
                                                            finder_workers=workers)], parts, workers)
run("find", [SentenceFindDedups(data_folder=f"{work}/sigs", output_folder=f"{work}/dups", config=config)],
    workers, workers)
run("filter", [JsonlReader(src), SentenceDedupFilter(data_folder=f"{work}/dups", config=config),
               JsonlWriter(f"{work}/out")], parts, workers)
import glob, os
dups = sum(os.path.getsize(p) for p in glob.glob(f"{work}/dups/**/*", recursive=True) if os.path.isfile(p)) // 6
print(json.dumps({"seconds": times, "removed_lines": dups}))
'''


# ---- measurement

def _proc_table() -> dict[int, tuple[int, int, float]]:
    """pid -> (ppid, starttime, cpu seconds) for every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat", "rb") as f:
                s = f.read()
        except OSError:
            continue
        rest = s[s.rfind(b")") + 2:].split()
        out[int(d)] = (int(rest[1]), int(rest[19]), (int(rest[11]) + int(rest[12])) / CLK)
    return out


def _busy() -> float:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:9]]
    return (sum(v) - v[3] - v[4]) / CLK


def measure(cmd: list, cwd: Path | None = None) -> dict:
    """Runs cmd in its own process group: wall and CPU seconds, peak tree memory, stdout."""
    cmd = [str(c) for c in cmd]
    busy0, t0 = _busy(), time.perf_counter()
    p = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    peak, cpu_seen, done = [0], {}, threading.Event()

    def sample() -> None:
        while not done.is_set():
            table = _proc_table()
            kids: dict[int, list[int]] = {}
            for pid, (ppid, _, _) in table.items():
                kids.setdefault(ppid, []).append(pid)
            anon = 0
            for q in descendants(p.pid, kids):
                if q in table:
                    cpu_seen[(q, table[q][1])] = table[q][2]
                anon += mem_kb(q)[1]
            peak[0] = max(peak[0], anon)
            done.wait(0.05)

    out: list[bytes] = []
    err: list[bytes] = []
    readers = [threading.Thread(target=lambda: out.append(p.stdout.read()), daemon=True),
               threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True),
               threading.Thread(target=sample, daemon=True)]
    for t in readers:
        t.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    busy = _busy() - busy0
    done.set()
    for t in readers:
        t.join()
    cpu = max(ru.ru_utime + ru.ru_stime, sum(cpu_seen.values()))
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        raise SystemExit(f"bench_lines: {' '.join(cmd)} failed ({rc}):\n{b''.join(err).decode()[-2000:]}")
    return {"wall": round(wall, 2), "cpu": round(cpu, 2), "peak_mb": round(peak[0] / 1024, 1),
            "others": round(max(0.0, busy - cpu) / max(wall, 1e-9), 2), "stdout": b"".join(out).decode()}


# ---- corpora

def corpus(cache: Path, kind: str, size: int, parts: int) -> tuple[Path, dict]:
    """The corpus as `parts` JSONL files of consecutive documents, made once."""
    folder = cache / f"{kind}_{size}_{parts}p"
    meta = folder / "corpus.json"
    if meta.exists():
        return folder / "data", json.loads(meta.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    (folder / "data").mkdir(parents=True)
    docs = list(generate(size, kind, seed=0))
    per = -(-len(docs) // parts)
    nbytes = 0
    for k in range(parts):
        with open(folder / "data" / f"part_{k:02d}.jsonl", "w", encoding="utf-8") as f:
            for i in range(k * per, min(len(docs), (k + 1) * per)):
                f.write(json.dumps({"id": f"doc-{i:08d}", "text": docs[i]}, ensure_ascii=False) + "\n")
                nbytes += len(docs[i].encode("utf-8"))
    info = {"kind": kind, "documents": len(docs), "text_bytes": nbytes,
            "lines": sum(d.count("\n") + (bool(d) and not d.endswith("\n")) for d in docs),
            "files_digest": files_digest(machine_files())}
    meta.write_text(json.dumps(info))
    return folder / "data", info


# ---- the runs

def run_sadedup(data: Path, work: Path, out: Path, workers: int) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    res = {"ingest": measure([sys.executable, "-m", "sadedup.cli", "ingest", "--input", data, "--workdir", work,
                              "--set", "stages=lines", "--workers", workers, "-q"])}
    for name, sets in (("first_drop1", ["lines.keep=first", "lines.drop_fraction=1.0"]),
                       ("first", ["lines.keep=first", "lines.drop_fraction=0.8"]),
                       ("none", ["lines.keep=none", "lines.drop_fraction=0.8"])):
        m = measure([sys.executable, "-m", "sadedup.cli", "lines", work, "--format", "json", "-q",
                     *sum((["--set", s] for s in sets), [])])
        m["detail"] = json.loads(m.pop("stdout"))
        res[name] = m
    res["export"] = measure([sys.executable, "-m", "sadedup.cli", "export", work, "--output", out, "-q"])
    for m in res.values():
        m.pop("stdout", None)
    return res


def run_datatrove(python: str, data: Path, work: Path, parts: int, workers: int) -> dict:
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    m = measure([python, "-c", DATATROVE, data, work, parts, workers], cwd=work)
    m.update(json.loads(m.pop("stdout").strip().splitlines()[-1]))
    return m


def datatrove_python(given: str | None) -> str | None:
    for py in [given, os.environ.get("DATATROVE_PYTHON"), sys.executable]:
        if py and subprocess.run([py, "-c", "import datatrove"], capture_output=True).returncode == 0:
            return py
    return None


def version(python: str) -> str:
    return subprocess.run([python, "-c", "import importlib.metadata as m; print(m.version('datatrove'))"],
                          capture_output=True, text=True).stdout.strip() or "?"


def python_keys(cache: Path) -> dict:
    """How fast lines are keyed when Python's NFC has to make their keys (the kernel keys the
    others itself), on bench/corpora.py's multilingual `web` text (32 MB: CJK, Cyrillic, Greek,
    accented Latin), in this process: the whole text, then only its lines that need NFC."""
    import numpy as np

    from sadedup import native
    from sadedup.stages.lines import line_keys

    path = cache / "web32.txt"
    if not path.exists():
        path.write_text("\n".join(generate(parse_size("32MB"), "web", seed=0)), encoding="utf-8")
    text = np.fromfile(path, dtype=np.uint8)
    one = lambda a: (np.array([0]), np.array([len(a)]))  # noqa: E731
    t = time.perf_counter()
    _, line, slow = native.line_scan(text, *one(text), 0)
    scan = time.perf_counter() - t
    t = time.perf_counter()
    line_keys(text, *one(text), 0)
    both = time.perf_counter() - t
    only = np.frombuffer(native.gather_lines(text, slow) + b"\n", dtype=np.uint8)
    t = time.perf_counter()
    line_keys(only, *one(only), 0)
    nfc = time.perf_counter() - t
    return {"mb": round(len(text) / 1e6, 1), "lines": len(line), "slow": len(slow), "scan_mb_s": round(len(text) / 1e6 / scan),
            "keys_mb_s": round(len(text) / 1e6 / both), "nfc_mb": round(len(only) / 1e6, 1),
            "nfc_mb_s": round(len(only) / 1e6 / nfc)}


# ---- report

def table(results: dict) -> str:
    lines = []
    keys = results.pop("python_keys", None)
    for kind, r in results.items():
        c = r["corpus"]
        s = r["sadedup"]
        lines.append(f"**{kind}**: {c['documents']:,} documents, {c['text_bytes'] / 1e6:.0f} MB of text, "
                     f"{c['lines']:,} lines, in {r['parts']} JSONL files (files digest {c['files_digest']}).\n")
        lines.append("| run | wall s | CPU s | peak MB | others | lines removed | spans | docs dropped |")
        lines.append("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        lines.append(f"| sadedup ingest | {s['ingest']['wall']} | {s['ingest']['cpu']} | {s['ingest']['peak_mb']} | "
                     f"{s['ingest']['others']} | | | |")
        for name, label in (("first_drop1", "sadedup lines, keep=first, drop_fraction=1.0"),
                            ("first", "sadedup lines, keep=first (drop 0.8)"),
                            ("none", "sadedup lines, keep=none, min_docs=2")):
            m, d = s[name], s[name]["detail"]
            lines.append(f"| {label} | {m['wall']} | {m['cpu']} | {m['peak_mb']} | {m['others']} | "
                         f"{d['removed_lines']:,} | {d['spans']:,} | {d['dropped']:,} |")
        lines.append(f"| sadedup export | {s['export']['wall']} | {s['export']['cpu']} | {s['export']['peak_mb']} | "
                     f"{s['export']['others']} | | | |")
        e2e = sum(s[k]["wall"] for k in ("ingest", "first_drop1", "export"))
        lines.append(f"| sadedup ingest + lines (drop 1.0) + export | {e2e:.2f} | "
                     f"{sum(s[k]['cpu'] for k in ('ingest', 'first_drop1', 'export')):.2f} | "
                     f"{max(s[k]['peak_mb'] for k in ('ingest', 'first_drop1', 'export'))} | | | | |")
        if "datatrove" in r:
            d = r["datatrove"]
            steps = ", ".join(f"{k} {v} s" for k, v in d["seconds"].items())
            lines.append(f"| datatrove {r['datatrove_version']} line dedup ({steps}) | {d['wall']} | {d['cpu']} | "
                         f"{d['peak_mb']} | {d['others']} | {d['removed_lines']:,} | | |")
        if "datatrove" in r:
            d, mine = r["datatrove"], s["first_drop1"]
            e2e_cpu = sum(s[k]["cpu"] for k in ("ingest", "first_drop1", "export"))
            lines.append(f"\nLike for like (keep-first, no drop rule): the removed lines differ by "
                         f"{abs(mine['detail']['removed_lines'] - d['removed_lines']):,} of "
                         f"{d['removed_lines']:,} (keys that NFC or str.splitlines tell apart); `lines` took "
                         f"{d['cpu'] / max(mine['cpu'], 1e-9):.1f}x less CPU than datatrove's three steps "
                         f"({mine['cpu']} s against {d['cpu']} s) and {d['wall'] / max(mine['wall'], 1e-9):.1f}x less "
                         f"wall time; ingest + lines + export, text in to text out as datatrove's steps are, "
                         f"{d['cpu'] / max(e2e_cpu, 1e-9):.1f}x less CPU ({e2e_cpu:.1f} s).")
        st = s["first_drop1"]["detail"]["seconds"]
        lines.append(f"\nInside `lines` (keep=first, drop 1.0): "
                     + ", ".join(f"{k} {v} s" for k, v in st.items())
                     + f"; {s['first_drop1']['detail']['python_lines']:,} lines keyed in Python (NFC); the rest of "
                       "the command is start-up and writing the spans to SQLite.\n")
    if keys:
        results["python_keys"] = keys
        lines.append(f"Keys made in Python (one core, in process): on {keys['mb']} MB of multilingual `web` text "
                     f"({keys['lines']:,} lines, {keys['slow']:,} of them with characters NFC may change) the kernel "
                     f"alone scans {keys['scan_mb_s']} MB/s and the keys, Python's included, come at "
                     f"{keys['keys_mb_s']} MB/s; text made only of such lines ({keys['nfc_mb']} MB) is keyed at "
                     f"{keys['nfc_mb_s']} MB/s, the worst case.\n")
    return "\n".join(lines)


NOTES = """
Notes. This machine has 2 cores shared with other sessions: `others` says how many cores other
processes kept busy during each run (1.0 to 1.7 here), so wall times are inflated and CPU
seconds compare the tools better. datatrove ran in its own virtual environment
(`pip install datatrove spacy orjson regex tokenizers nltk "xxhash<4"`: datatrove 0.10.1 loads a
spaCy word tokenizer even when it splits on lines, and hashes `str`, which xxhash 4 refuses).
Where sadedup's time goes: the `lines` command's own phases (above) take about 5 s; the rest is
the interpreter and the worker pool starting and writing one `spans` row per removed run of
lines (about 3 million rows here) to SQLite, with their source: the cost of being able to ask
why every removed line went. Its peak memory is those spans, held until they are written; the
scan itself needs a chunk of text (up to 64 MB) and its lines per worker, and the keep-first
pass 24 bytes per repeated key. datatrove removes the lines; sadedup also records spans,
drops documents over `drop_fraction` (with the cascade) and keeps the rest of the text byte
for byte.
"""


def write_section(results: dict, argv: list[str], when: str = "") -> None:
    path = REPO / "bench" / "RESULTS.md"
    text = path.read_text() if path.exists() else ""
    body = (f"{BEGIN}\n## Line dedup: sadedup lines vs datatrove\n\n"
            f"`python bench/bench_lines.py {' '.join(argv)}` (bench/bench_lines.py says what each run is)"
            f"{when}.\n\n"
            + table(results) + "\n" + NOTES + f"{END}")
    if BEGIN in text:
        text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: body, text, flags=re.S)
    else:
        text = text.rstrip("\n") + "\n\n" + body + "\n"
    path.write_text(text)


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=parse_size, default=parse_size("256MB"))
    ap.add_argument("--kinds", default="real,crawl")
    ap.add_argument("--parts", type=int, default=8, help="JSONL files the corpus is written as")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache", type=Path, default=Path("/tmp/sadedup-bench-lines"))
    ap.add_argument("--datatrove-python", default=None, help="a Python with datatrove (default: DATATROVE_PYTHON, "
                                                             "or this one)")
    ap.add_argument("--no-datatrove", action="store_true")
    ap.add_argument("--write", action="store_true", help="rewrite the lines section of bench/RESULTS.md")
    ap.add_argument("--report-only", action="store_true", help="the tables again from the last results.json")
    a = ap.parse_args(argv)
    if a.report_only:
        results = json.loads((a.cache / "results.json").read_text())
        print(table(results))
        if a.write:
            write_section(results, [x for x in argv if x != "--report-only"])
        return
    dt = None if a.no_datatrove else datatrove_python(a.datatrove_python)
    if not a.no_datatrove and dt is None:
        print("bench_lines: no Python with datatrove found (pip install datatrove, or --datatrove-python); "
              "running sadedup alone", file=sys.stderr)
    results = {}
    for kind in [k.strip() for k in a.kinds.split(",") if k.strip()]:
        data, info = corpus(a.cache, kind, a.size, a.parts)
        print(f"{kind}: {info}", file=sys.stderr)
        r = {"corpus": info, "parts": a.parts,
             "sadedup": run_sadedup(data, a.cache / f"work_{kind}", a.cache / f"out_{kind}.jsonl", a.workers)}
        if dt:
            r["datatrove"] = run_datatrove(dt, data, a.cache / f"dt_{kind}", a.parts, a.workers)
            r["datatrove_version"] = version(dt)
        results[kind] = r
        print(json.dumps(r, indent=1), file=sys.stderr)
    results["python_keys"] = python_keys(a.cache)
    (a.cache / "results.json").write_text(json.dumps(results, indent=1))
    print(table(results))
    if a.write:
        write_section(results, argv)


if __name__ == "__main__":
    main()
