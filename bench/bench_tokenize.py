"""Tokenization throughput: sadedup's tokenize stage against the tokenizer library's own batch
encoding of the same text (issue 4: the stage may add at most 20%).

    python bench/bench_tokenize.py --size 32MB --repeat 3 [--write]

For each tokenizer kind (a byte-level BPE trained with `tokenizers`, a unigram model trained
with sentencepiece; both trained here on a sample of the corpus, nothing downloaded):

- library: the texts already in memory as Python strings, encoded in batches of the same
  size the stage uses, with the library's fastest batch call (tokenizers.encode_batch_fast,
  sentencepiece.encode(..., out_type="numpy", num_threads), or out_type=int before
  sentencepiece 0.2.1; `--sp-ids int` times that call instead) and the ids taken out of each
  result;
- sadedup: the `tokenize` stage on an ingested work folder: read the texts from the
  memory-mapped store, encode, and write the token shards (.npy) with their checksums.

Both use every core (the libraries' own threads). Medians of --repeat runs are reported, of
wall seconds and of this process's CPU seconds (every thread's: the machine may be shared).
"""
from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpora  # noqa: E402

from sadedup import pipeline  # noqa: E402
from sadedup.stages.base import Context  # noqa: E402
from sadedup.stages.tokenize import BATCH_BYTES, Tokenize  # noqa: E402
from sadedup.store import TextStore  # noqa: E402
from sadedup.executor import InlineExecutor  # noqa: E402
from sadedup.tokenizers import train  # noqa: E402


def library_seconds(tok, texts: list[str], sizes: list[int], threads: int, out_type="numpy") -> float:
    """The library's own batch encoding of the same texts, in the stage's batches."""
    t0 = time.perf_counter()
    i = 0
    while i < len(texts):
        j, acc = i, 0
        while j < len(texts) and (j == i or acc + sizes[j] <= BATCH_BYTES):
            acc += sizes[j]
            j += 1
        batch = texts[i:j]
        if hasattr(tok, "encode_batch_fast"):
            ids = [e.ids for e in tok.encode_batch_fast(batch, add_special_tokens=False)]
        else:
            try:  # int32 buffers (sentencepiece 0.2.1+), faster than a Python int per id
                ids = tok.encode(batch, out_type=out_type, num_threads=threads)
            except (ValueError, RuntimeError, TypeError):
                ids = tok.encode(batch, out_type=int, num_threads=threads)
        assert len(ids) == len(batch)
        i = j
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="32MB", type=corpora.parse_size)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--write", action="store_true", help="append the table to bench/RESULTS.md")
    ap.add_argument("--tokenizer", action="append", help="only these specs (default: train:bpe:32000 and "
                    "train:unigram:32000)")
    ap.add_argument("--sp-ids", default="numpy", choices=["numpy", "int"],
                    help="sentencepiece's library side: ids as int32 buffers (default) or Python ints")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="sadedup-tokbench-"))
    try:
        inp = tmp / "corpus.jsonl"
        corpora.write_jsonl(inp, corpora.generate(args.size, "web", seed=3))
        rows = []
        for spec in args.tokenizer or ("train:bpe:32000", "train:unigram:32000"):
            work = tmp / spec.replace(":", "_")
            pipeline.ingest([inp], work, overrides=["stages=substring", f"substring.tokenizer={spec}",
                                                    "substring.tokenizer_sample=8MB"])
            ws = pipeline.Workspace(work)
            ctx = Context(ws, InlineExecutor())
            stage = Tokenize()
            stage.run(ctx)  # trains the model once; the timed runs below reuse it
            key = stage.key(ctx)
            tok = stage.tokenizer(ctx, key)
            store = TextStore(work)
            ids = range(len(store.offsets) - 1)
            texts = store.texts(ids)
            sizes = [len(t.encode()) for t in texts]
            mb = sum(sizes) / 1e6
            lib_tok = getattr(tok, "tok", None) or tok.sp
            lib, ours, lib_cpu, ours_cpu = [], [], [], []
            for _ in range(args.repeat):
                c0 = time.process_time()  # this process's threads: the libraries' and the stage's
                lib.append(library_seconds(lib_tok, texts, sizes, getattr(tok, "threads", 0),
                                           "numpy" if args.sp_ids == "numpy" else int))
                lib_cpu.append(time.process_time() - c0)
                shutil.rmtree(stage.folder(ctx, key))
                with ws.engine.begin() as c:
                    c.exec_driver_sql("DELETE FROM stages WHERE stage = 'tokenize'")
                t0, c0 = time.perf_counter(), time.process_time()
                stage.run(ctx)
                ours.append(time.perf_counter() - t0)
                ours_cpu.append(time.process_time() - c0)
            lm, om = statistics.median(lib), statistics.median(ours)
            lc, oc = statistics.median(lib_cpu), statistics.median(ours_cpu)
            rows.append((spec, mb, lm, om, lc, oc))
            print(json.dumps({"tokenizer": spec, "MB": round(mb, 1), "library_s": round(lm, 3),
                              "sadedup_s": round(om, 3), "library_MBps": round(mb / lm, 2),
                              "sadedup_MBps": round(mb / om, 2), "overhead": f"{om / lm - 1:+.1%}",
                              "library_cpu_s": round(lc, 3), "sadedup_cpu_s": round(oc, 3),
                              "cpu_overhead": f"{oc / lc - 1:+.1%}", "runs": {"library": lib, "sadedup": ours,
                                                                          "library_cpu": lib_cpu,
                                                                          "sadedup_cpu": ours_cpu}}))
        table = ["| tokenizer | text (MB) | library batch encode (s, MB/s) | sadedup tokenize stage (s, MB/s) | "
                 "stage overhead | CPU: library / stage (s) | CPU overhead |", "|---|---:|---:|---:|---:|---:|---:|"]
        for spec, mb, lm, om, lc, oc in rows:
            table.append(f"| {spec} | {mb:.1f} | {lm:.2f} ({mb / lm:.1f}) | {om:.2f} ({mb / om:.1f}) | "
                         f"{om / lm - 1:+.1%} | {lc:.2f} / {oc:.2f} | {oc / lc - 1:+.1%} |")
        print("\n".join(table))
        if args.write:
            section = (f"<!-- tokenize:start -->\n## Tokenization throughput (issue 4)\n\n`python bench/bench_tokenize.py "
                       f"--size {args.size // 10**6}MB --repeat {args.repeat} --write` (medians; target: the stage adds at "
                       f"most 20% to the library's own batch encoding)\n\n" + "\n".join(table) + "\n<!-- tokenize:end -->")
            results = (HERE / "RESULTS.md").read_text()
            if "<!-- tokenize:start -->" in results:
                head, rest = results.split("<!-- tokenize:start -->", 1)
                results = head + section + rest.split("<!-- tokenize:end -->", 1)[1]
            else:
                results = results.rstrip("\n") + "\n\n" + section + "\n"
            (HERE / "RESULTS.md").write_text(results)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
