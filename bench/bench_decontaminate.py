"""Decontamination: sadedup's `decontaminate` stage against datatrove's n-gram decontamination
on the same corpus and the same 10,000 eval items.

    python bench/corpora.py --size 256MB --kind real -o /tmp/real256.jsonl
    python -m venv /tmp/dt-venv && /tmp/dt-venv/bin/pip install datatrove regex spacy xxhash
    python bench/bench_decontaminate.py --corpus /tmp/real256.jsonl --datatrove-python /tmp/dt-venv/bin/python \
        --repeat 3 [--write]

The eval set is made from the corpus (deterministic for --seed): 10,000 items of 40 to 150
words, a third of them passages copied verbatim from documents, a tenth such passages with one
word replaced, a fifth passages with their words shuffled and the rest passages with every
sixth word replaced (no 13 words of them in a row are in the corpus).

- sadedup: the corpus ingested once (not timed; it is shared by every stage), then the
  `decontaminate` command timed, --repeat times per worker count, each time against a fresh
  copy of the eval file (another path: the stage and its chunks are redone from scratch).
  Reported: the command's wall time (interpreter start included) and the stage's own time.
- datatrove (0.10, in its own virtual environment; it has no way to read an eval set but
  lighteval's hub tasks, so its indexer's own `compute_hashes` makes the index from our items
  and the file is written as its `run` writes it); then `NGramsDecontFilter.filter` over every
  document, in as many processes as sadedup has workers (LocalPipelineExecutor's tasks=N over a
  corpus in N files). Documents are read into memory first, not timed. Two configurations:
  `default` (what a user gets: spaCy word tokens of text lower-cased, numbers, punctuation and
  diacritics normalized) and `aligned` (the same words as sadedup: a WordTokenizer of `\\w+`
  matches over the text lower-cased only), whose verdicts must equal sadedup's.

Verdicts compared per document: datatrove drops a document at its first n-gram found in the
index; sadedup cuts it when it has at least one span. With `aligned` the two definitions are
the same but for str.lower against str.casefold, which cannot differ here (every eval item is
a copy of corpus text, so each word is spelled the same on both sides).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SECTION_BEGIN, SECTION_END = "<!-- decontaminate:begin -->", "<!-- decontaminate:end -->"
N = 13
WORD = re.compile(r"\w+")


# ---- the eval set


def make_eval(corpus: Path, out: Path, items: int, seed: int) -> dict[str, int]:
    """Eval items cut from the corpus's documents (see the module's docstring)."""
    rng = random.Random(seed)
    docs = []
    with open(corpus, encoding="utf-8") as f:
        for line in f:
            t = json.loads(line)["text"]
            if len(t) > 2000:
                docs.append(t)
    kinds = {"verbatim": items * 3 // 10, "one_word_edited": items // 10, "shuffled": items // 5}
    kinds["perturbed"] = items - sum(kinds.values())
    plan = [k for k, n in kinds.items() for _ in range(n)]
    rng.shuffle(plan)
    with open(out, "w", encoding="utf-8") as f:
        for i, kind in enumerate(plan):
            while True:
                text = rng.choice(docs)
                ms = list(WORD.finditer(text))
                if len(ms) >= 200:
                    break
            k = rng.randint(40, 150)
            a = rng.randrange(len(ms) - k)
            if kind == "verbatim":
                item = text[ms[a].start():ms[a + k - 1].end()]
            else:
                words = [m.group() for m in ms[a:a + k]]
                if kind == "one_word_edited":
                    words[k // 2] = f"zq{rng.randrange(10**9)}"
                elif kind == "shuffled":
                    rng.shuffle(words)
                else:
                    for j in range(0, k, 6):
                        words[j] = f"zq{rng.randrange(10**9)}"
                item = " ".join(words)
            f.write(json.dumps({"id": i, "kind": kind, "text": item}, ensure_ascii=False) + "\n")
    return kinds


# ---- datatrove's side (run with the datatrove interpreter: --datatrove-side)


def datatrove_side(args: argparse.Namespace) -> None:
    import multiprocessing as mp

    from types import SimpleNamespace

    import numpy as np
    from datatrove.pipeline.decont.n_grams import NGramsDecontIndexer
    from datatrove.utils.hashing import create_hash_func
    from datatrove.utils.word_tokenizers import load_word_tokenizer

    cfg, lang = _dt_config(args.dt_config)
    texts = [json.loads(line)["text"] for line in open(args.eval, encoding="utf-8")]
    index = Path(args.dt_index)
    shutil.rmtree(index, ignore_errors=True)
    index.mkdir(parents=True)
    t0 = time.perf_counter()
    # the indexer's own compute_hashes, on an object with what it reads: constructing the step
    # requires lighteval, which reads eval sets from the hub only
    indexer = SimpleNamespace(tokenizer=load_word_tokenizer(lang), config=cfg,
                              hash_func=create_hash_func(cfg.hash_config))
    hashes: set[int] = set()
    for t in texts:  # NGramsDecontIndexer.run with documents (text = label, no query)
        hashes.update(NGramsDecontIndexer.compute_hashes(indexer, t, None))
    np.array(list(hashes), dtype=cfg.hash_config.np_descr).tofile(index / "eval.index.hashes")
    t_index = time.perf_counter() - t0
    docs = [json.loads(line)["text"] for line in open(args.corpus, encoding="utf-8")]
    parts = args.workers
    bounds = [len(docs) * p // parts for p in range(parts + 1)]
    t0 = time.perf_counter()
    if parts == 1:
        flagged = _dt_filter((args.dt_config, str(index), docs, 0))
    else:
        with mp.get_context("fork").Pool(parts) as pool:
            res = pool.map(_dt_filter, [(args.dt_config, str(index), docs[bounds[p]:bounds[p + 1]], bounds[p])
                                        for p in range(parts)])
        flagged = sorted(x for r in res for x in r)
    t_filter = time.perf_counter() - t0
    json.dump({"index_seconds": t_index, "filter_seconds": t_filter, "index_ngrams": len(hashes),
               "flagged": flagged}, open(args.dt_out, "w"))


def _dt_config(name: str):
    from datatrove.pipeline.decont.n_grams import NGramsDecontConfig
    from datatrove.utils.text import TextNormConfig
    from datatrove.utils.word_tokenizers import WordTokenizer

    if name == "default":
        return NGramsDecontConfig(n_grams=N, find_query_ngrams=False), "en"

    class Words(WordTokenizer):
        """sadedup's words: Python's \\w+ matches."""

        def __init__(self) -> None:
            super().__init__("en")

        def word_tokenize(self, text: str) -> list[str]:
            return WORD.findall(text)

        def sent_tokenize(self, text: str) -> list[str]:
            return [text]

        def span_tokenize(self, text: str) -> list[tuple[int, int]]:
            return [m.span() for m in WORD.finditer(text)]

    norm = TextNormConfig(lowercase=True, norm_whitespace=False, remove_punctuation=False,
                          norm_unicode_diacritics=False, norm_numbers=False)
    return NGramsDecontConfig(n_grams=N, find_query_ngrams=False, norm_config=norm), Words()


def _dt_filter(job) -> list[int]:
    from datatrove.data import Document
    from datatrove.pipeline.decont.n_grams import NGramsDecontFilter

    name, index, docs, base = job
    cfg, lang = _dt_config(name)
    filt = NGramsDecontFilter(index, config=cfg, language=lang)
    out = []
    for i, t in enumerate(docs):
        r = filt.filter(Document(text=t, id=str(base + i)))
        if r is not True:
            out.append(base + i)
    return out


# ---- sadedup's side


def sadedup(cmd: list[str], cwd: Path) -> dict:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "sadedup.cli", "-q", *map(str, cmd)], cwd=cwd, capture_output=True,
                       text=True)
    wall = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"sadedup {' '.join(map(str, cmd))} failed: {p.stderr.strip()[-600:]}")
    return {"wall": wall, "stdout": p.stdout}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--items", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workers", default="1,2", help="sadedup worker counts, comma-separated")
    ap.add_argument("--dt-workers", type=int, default=2, help="datatrove processes")
    ap.add_argument("--datatrove-python", type=Path, help="an interpreter with datatrove, regex, spacy and xxhash")
    ap.add_argument("--dt-configs", default="default,aligned")
    ap.add_argument("--tmp", type=Path, default=Path(tempfile.gettempdir()) / "bench-decontaminate")
    ap.add_argument("--write", action="store_true", help="update the section of bench/RESULTS.md")
    # datatrove's side, run by this script with the datatrove interpreter
    ap.add_argument("--datatrove-side", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--eval", help=argparse.SUPPRESS)
    ap.add_argument("--dt-config", help=argparse.SUPPRESS)
    ap.add_argument("--dt-index", help=argparse.SUPPRESS)
    ap.add_argument("--dt-out", help=argparse.SUPPRESS)
    ap.add_argument("--workers-n", type=int, dest="workers_n", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.datatrove_side:
        args.workers = args.workers_n
        datatrove_side(args)
        return

    tmp = args.tmp
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    corpus = args.corpus.resolve()
    kinds = make_eval(corpus, tmp / "eval.jsonl", args.items, args.seed)
    corpus_mb = corpus.stat().st_size / 1e6
    print(f"eval set: {args.items} items {kinds}; corpus {corpus} ({corpus_mb:.0f} MB)", file=sys.stderr)

    # sadedup: ingest once, then the stage timed
    work = tmp / "work"
    sets = ["--set", "stages=decontaminate", "--set", f"decontaminate.eval={tmp / 'eval.jsonl'}"]
    most = max(map(int, args.workers.split(",")))
    sadedup(["ingest", "--input", corpus, "--workdir", work, *sets, "--workers", str(most)], tmp)
    runs: dict[int, list[dict]] = {}
    k = 0
    for w in map(int, args.workers.split(",")):
        for _ in range(args.repeat):
            k += 1
            ev = tmp / f"eval_{k}.jsonl"  # a fresh path: the stage and all its chunks run again
            shutil.copy(tmp / "eval.jsonl", ev)
            # run.workers is part of ingest's key (it cuts the input into pieces): one worker is
            # the inline executor, on the folder ingested with two
            how = ["--executor", "inline"] if w == 1 else ["--workers", str(w)]
            r = sadedup(["decontaminate", work, "--set", f"decontaminate.eval={ev}", *how, "--format", "json"], tmp)
            detail = json.loads(r["stdout"])
            runs.setdefault(w, []).append({"wall": r["wall"], "stage": detail["seconds"], "detail": detail})
            print(f"sadedup workers={w}: {r['wall']:.2f} s wall, stage {detail['seconds']:.2f} s", file=sys.stderr)
    import sqlite3

    con = sqlite3.connect(work / "sadedup.db")
    cut = sorted(d for (d,) in con.execute("SELECT DISTINCT doc_id FROM spans WHERE method = 'decontaminate'"))
    n_docs = con.execute("SELECT count(*) FROM documents").fetchone()[0]
    errors = con.execute("SELECT count(*) FROM input_errors").fetchone()[0]
    verdicts = dict(con.execute("SELECT verdict, count(*) FROM eval_items GROUP BY verdict"))
    by_kind: dict[str, dict[str, int]] = {}
    kind_of = [json.loads(line)["kind"] for line in open(tmp / "eval.jsonl", encoding="utf-8")]
    for item, verdict in con.execute("SELECT item_id, verdict FROM eval_items"):
        by_kind.setdefault(kind_of[item], {}).setdefault(verdict, 0)
        by_kind[kind_of[item]][verdict] += 1
    con.close()
    assert errors == 0, "every corpus row is a document: doc_id is the row"

    # datatrove
    dt: dict[str, dict] = {}
    if args.datatrove_python:
        for name in args.dt_configs.split(","):
            out = tmp / f"dt_{name}.json"
            t0 = time.perf_counter()
            p = subprocess.run([str(args.datatrove_python), __file__, "--datatrove-side", "--corpus", str(corpus),
                                "--eval", str(tmp / "eval.jsonl"), "--dt-config", name, "--dt-index",
                                str(tmp / f"dt_index_{name}"), "--dt-out", str(out), "--workers-n",
                                str(args.dt_workers)], capture_output=True, text=True)
            if p.returncode:
                raise SystemExit(f"datatrove {name} failed: {p.stderr.strip()[-2000:]}")
            res = json.load(open(out))
            flagged = set(res.pop("flagged"))
            res["wall"] = time.perf_counter() - t0
            res["flagged"] = len(flagged)
            res["both"] = len(flagged & set(cut))
            res["only_datatrove"] = len(flagged - set(cut))
            res["only_sadedup"] = len(set(cut) - flagged)
            dt[name] = res
            print(f"datatrove {name}: index {res['index_seconds']:.1f} s, filter {res['filter_seconds']:.1f} s; "
                  f"flagged {len(flagged)}, sadedup cut {len(cut)}, only datatrove {res['only_datatrove']}, "
                  f"only sadedup {res['only_sadedup']}", file=sys.stderr)

    summary = {"corpus": str(corpus), "corpus_mb": round(corpus_mb, 1), "documents": n_docs, "items": args.items,
               "kinds": kinds, "verdicts": verdicts, "by_kind": by_kind, "docs_cut": len(cut),
               "eval_ngrams": runs[max(runs)][0]["detail"]["eval_ngrams"],
               "sadedup": {w: {"wall_median": statistics.median(r["wall"] for r in rs),
                               "stage_median": statistics.median(r["stage"] for r in rs),
                               "walls": [round(r["wall"], 2) for r in rs]} for w, rs in runs.items()},
               "datatrove": dt, "dt_workers": args.dt_workers, "cores": os.cpu_count(),
               "load_before": os.getloadavg()}
    print(json.dumps(summary, indent=1))
    if args.write:
        write_results(summary)


def write_results(s: dict) -> None:
    """Replaces this benchmark's section of bench/RESULTS.md with the run's numbers."""
    sd = s["sadedup"]
    w = max(sd)
    lines = [SECTION_BEGIN, "", "## Decontamination: sadedup vs datatrove (issue 14)", "",
             f"`python bench/bench_decontaminate.py --corpus real256.jsonl --datatrove-python /tmp/dt-venv/bin/python "
             f"--repeat 3 --write` on {s['corpus_mb']:.0f} MB of this machine's changelogs, manual pages and licences "
             f"(`bench/corpora.py --size 256MB --kind real`, {s['documents']} documents) against {s['items']} eval "
             f"items made from it ({', '.join(f'{n} {k}' for k, n in s['kinds'].items())}; "
             f"{s['eval_ngrams']} distinct 13-grams), {s['cores']} cores shared with other work.", "",
             "| tool | workers | seconds (median) | vs sadedup |", "| --- | --- | --- | --- |"]
    for k in sorted(sd):
        lines.append(f"| sadedup `decontaminate` (command wall; stage alone {sd[k]['stage_median']:.1f} s) | {k} | "
                     f"{sd[k]['wall_median']:.1f} | 1.0x at {k} |")
    for name, r in s["datatrove"].items():
        t = r["index_seconds"] + r["filter_seconds"]
        lines.append(f"| datatrove `NGramsDecontFilter`, {name} (index {r['index_seconds']:.1f} s + filter "
                     f"{r['filter_seconds']:.1f} s; documents already in memory) | {s.get('dt_workers', 2)} | "
                     f"{t:.1f} | {t / sd[w]['wall_median']:.1f}x slower |")
    lines += ["", f"sadedup cut {s['docs_cut']} documents; eval verdicts {s['verdicts']}; by kind {s['by_kind']}.", ""]
    for name, r in s["datatrove"].items():
        lines.append(f"- datatrove {name}: flagged {r['flagged']} documents, {r['both']} of them cut by sadedup too, "
                     f"{r['only_datatrove']} flagged by datatrove alone, {r['only_sadedup']} cut by sadedup alone.")
    lines += ["", SECTION_END]
    path = HERE / "RESULTS.md"
    text = path.read_text() if path.exists() else ""
    if SECTION_BEGIN in text:
        a, b = text.index(SECTION_BEGIN), text.index(SECTION_END) + len(SECTION_END)
        text = text[:a] + "\n".join(lines) + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n"
    path.write_text(text)


if __name__ == "__main__":
    main()
