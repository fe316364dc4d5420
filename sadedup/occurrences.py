"""Count and locate: where a text occurs in the corpus, answered from the stored suffix arrays.

TEXT is tokenized alone with the run's tokenizer into m tokens P. In each shard the suffixes
that start with P are one range of its suffix array, found by two binary searches over the
memory-mapped tokens and suffix array (native/occurrences.c): O(m log n) token reads per
shard, no scan of the text. A shard's documents are concatenated without separators, so
some suffixes of that range run on past their document's end; they are dropped (one binary
search of the document offsets per entry of the range, also native). What is left are the
occurrences: start positions where P lies inside one document. They overlap ("aa" occurs
twice in "aaa"), and since a document never spans shards, neither does an occurrence.

Which suffix arrays: with `substring.prefilter = false` the build stage's arrays cover every
token of a shard and are read as they are. With the prefilter they cover only the candidate
text, so full-text suffix arrays are built once per shard, as tasks on the executor like
build's (a shard at a time per worker, so within the memory budget the shards were sized
for): <tokenize folder>/index/shard_00000/sa.npy, each renamed into place when whole and
recorded with its size and checksum in the `stages` table (stage `index`, one record per
shard and one for the whole), under a key made of the tokenize stage's key and each shard's
checksum. They are reused until the tokenized shards change. `count` and `locate` build them
themselves when they are missing (saying so on stderr): the first query on a prefiltered
folder costs one suffix sort per shard, the next ones milliseconds.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import graph, native
from .errors import SadedupError
from .progress import say
from .stages.base import Context, ShardJob, Stage, chain
from .stages.tokenize import folder_of, plan_of, run_tokenizer, shard_dirs
from .store import TextStore
from .tokenizers import ByteTokenizer, ShardChars, Tokenizer, char_spans
from .workspace import Workspace, load_npy, task_sums

PathLike = str | os.PathLike[str]

INDEX_FILES = ("sa.npy",)
# suffix-array entries filtered per call when positions are wanted: bounds locate's memory
# for a text that occurs millions of times (the count alone needs no buffer)
CHUNK = 1 << 20
DEFAULT_LIMIT = 10


# ---- the full-text suffix arrays of a prefiltered folder: `sadedup index`

def index_folder(ws: Workspace) -> Path:
    """Beside the shards they index, so a new tokenization (a new folder) never meets them."""
    return folder_of(ws) / "index"


def index_dirs(ws: Workspace) -> list[Path]:
    folder = index_folder(ws)
    return [folder / s.name for s in shard_dirs(ws)]


def index_shard(shard_dir: str, out_dir: str) -> dict[str, Any]:
    """Task: the suffix array of one shard's whole token stream."""
    from .stages.build import save_suffix_array

    sdir, odir = Path(shard_dir), Path(out_dir)
    odir.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    n = len(save_suffix_array(load_npy(sdir / "tokens.npy"), odir / "sa.npy"))
    return {"tokens": n, "sa_seconds": round(time.perf_counter() - t0, 3),
            **task_sums([odir / f for f in INDEX_FILES])}


@dataclass(frozen=True)
class IndexShard:
    shard_dir: str
    out_dir: str

    def __call__(self) -> dict[str, Any]:
        return index_shard(self.shard_dir, self.out_dir)


class Index(Stage):
    """Not a node of the stage graph: it decides nothing and no stage reads it, so a run never
    waits for it; it reads the tokenized shards alone."""

    name = "index"
    records = ("index",)

    def upstream(self, ctx: Context) -> list[str]:
        return ["tokenize"]

    def done(self, ctx: Context, key: str | None = None) -> bool:
        key = key or self.key(ctx)
        return ctx.ws.is_done(self.name, key) and self.whole(ctx, key)

    def jobs(self, ctx: Context, key: str) -> list[ShardJob]:
        ws = ctx.ws
        return [ShardJob(k, chain(key, k, ws.checksum("tokenize", k)), [o / f for f in INDEX_FILES],
                         IndexShard(str(s), str(o)))
                for k, (s, o) in enumerate(zip(shard_dirs(ws), index_dirs(ws)))]

    def whole(self, ctx: Context, key: str) -> bool:
        return all(ctx.ws.is_done(self.name, j.key, shard=j.shard, files=j.files) for j in self.jobs(ctx, key))

    def summary(self, d: dict[str, Any]) -> str:
        return (f"index: full-text suffix arrays for {d['shards']} shard(s), {d['tokens']} tokens"
                + (f" ({d['built']} built, {d['reused']} reused)" if d["reused"] else ""))

    def work(self, ctx: Context, key: str) -> dict[str, Any]:
        jobs = self.jobs(ctx, key)
        built = self.map_shards(ctx, self.name, "full-text suffix arrays", jobs)
        tokens = sum(ctx.ws.stage_detail(self.name, j.shard).get("tokens", 0) for j in jobs)
        return {"shards": len(jobs), "built": len(built), "reused": len(jobs) - len(built), "tokens": tokens,
                "folder": str(index_folder(ctx.ws).relative_to(ctx.ws.root))}


def _substring_state(ws: Workspace, command: str) -> dict[str, dict[str, Any]]:
    """The folder's stages by name, with their state (as `status` gives them); refuses a folder
    whose tokenized shards are missing or no longer those of its workflow."""
    from .pipeline import first_not_done, stage_command, standing

    wf = ws.workflow
    if not graph.enabled("tokenize", wf):
        raise SadedupError(f"{command}: {ws.root} has no suffix arrays to search: its workflow runs no substring "
                           f"stage (stages={','.join(wf.stages)})")
    states = {s["stage"]: s for s in standing(ws, verify=False)}
    t = states["tokenize"]
    if t["state"] != "done":
        live = ws.writer()
        if live is not None:  # a run is bringing it current: advising a stage command would be refused
            raise SadedupError(f"{command}: a sadedup run{live} is working in {ws.root} and has not finished the "
                               f"substring stage yet (tokenize: {t['why']}); ask again when it has")
        try:  # the inputs changed: advising `run` would be refused for them (it needs --restart)
            ws.check_inputs()
        except SadedupError as e:
            raise SadedupError(f"{command}: the substring stage of {ws.root} read other inputs: {e}") from None
        how = stage_command(ws, (first_not_done(ws, "tokenize", states) or t)["stage"])
        what = "has not run" if t["state"] == "pending" else f"is {t['state']}"
        raise SadedupError(f"{command}: the substring stage {what} in {ws.root} (tokenize: {t['why']}), so there are "
                           f"no suffix arrays to search: run `{how}` first")
    return states


def _build_covers_all(ws: Workspace, states: dict[str, dict[str, Any]]) -> bool:
    """The build stage's own arrays cover every token (prefilter off) and are current."""
    return not ws.workflow.substring.prefilter and states.get("build", {}).get("state") == "done"


def build_index(workdir: PathLike, executor: str | None = None) -> dict[str, Any]:
    """`sadedup index`: builds the full-text suffix arrays count and locate need, once; returns
    the detail recorded for it (`source` "build" when the build stage's arrays already cover
    all the text, and nothing is built)."""
    from .pipeline import _plain_errors

    return _plain_errors(_build_index)(workdir, executor)


def _build_index(workdir: PathLike, executor: str | None = None) -> dict[str, Any]:
    from .pipeline import _session

    ws = Workspace(workdir)
    ws.lock()
    try:
        states = _substring_state(ws, "index")
    except BaseException:
        ws.unlock()
        raise
    if _build_covers_all(ws, states):
        try:
            n = len(shard_dirs(ws))
        finally:
            ws.unlock()  # after its last read: a read after it connected again, in WAL mode, unsettled
        detail = {"shards": n, "built": 0, "reused": n, "source": "build", "skipped": True}
        say(index_summary(detail))
        return detail
    # the executor is the run's, with the run's workers: the shards were sized for that many at once
    with _session(ws, "index", executor) as ctx:
        return Index().run(ctx) | {"source": "index"}


# ---- queries

@dataclass
class _Shard:
    tokens: np.ndarray   # memory-mapped
    sa: np.ndarray       # memory-mapped
    offsets: np.ndarray  # int64, the documents' token bounds (ndocs+1)
    doc_ids: np.ndarray  # int64, the documents in the order the substring stage visits them
    folder: Path


class Occurrences:
    """A work folder's suffix arrays opened for queries: `count` and `locate` any number of
    texts without opening the folder again (the module functions open it for one).

    `build`: build the full-text arrays when the stored ones cover only the candidate text
    (else that is a one-line error naming `sadedup index`). `command` names the caller in
    error messages."""

    def __init__(self, workdir: PathLike, build: bool = True, executor: str | None = None,
                 command: str = "count") -> None:
        self.command = command
        ws = Workspace(workdir, readonly=True)
        states = _substring_state(ws, command)
        if _build_covers_all(ws, states):
            dirs, sa_dirs = shard_dirs(ws), shard_dirs(ws)
        else:
            ctx = Context(ws)
            ws.verify = False  # sizes only: a query must not read every array back
            try:
                ready = Index().done(ctx)
            finally:
                ws.verify = True
            if not ready:
                why = ("cover only the candidate text (substring.prefilter)" if ws.workflow.substring.prefilter
                       else f"are not current (build: {states.get('build', {}).get('why') or 'not run'})")
                if not build:
                    raise SadedupError(f"{command}: the suffix arrays of {ws.root} {why}: run `sadedup index "
                                       f"{ws.root}` once first")
                say(f"{command}: the suffix arrays of {ws.root} {why}; building full-text ones once, as "
                    f"`sadedup index {ws.root}` does")
                build_index(workdir, executor)
                ws = Workspace(workdir, readonly=True)
            dirs, sa_dirs = shard_dirs(ws), index_dirs(ws)
        self.ws = ws
        self.tok: Tokenizer = run_tokenizer(Context(ws))
        self.store = TextStore(ws.root)
        self.shards = []
        for d, s in zip(dirs, sa_dirs):
            tokens, sa = load_npy(d / "tokens.npy"), load_npy(s / "sa.npy")
            if len(sa) != len(tokens):
                raise SadedupError(f"{command}: {s / 'sa.npy'} does not match {d / 'tokens.npy'} "
                                   f"({len(sa)} entries for {len(tokens)} tokens); run `sadedup index {ws.root}`")
            self.shards.append(_Shard(tokens, sa, load_npy(d / "offsets.npy"), load_npy(d / "docs.npy"), d))
        self.dtype = np.dtype(plan_of(ws)["dtype"])
        self._chars: dict[int, ShardChars | None] = {}

    def tokens(self, text: str) -> np.ndarray:
        """TEXT's tokens, tokenized alone with the run's tokenizer (no special tokens)."""
        cmd = self.command
        if not isinstance(text, str):
            raise SadedupError(f"{cmd}: TEXT must be a string, not {type(text).__name__}")
        if text == "":
            raise SadedupError(f"{cmd}: TEXT is empty; give the text to search for")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise SadedupError(f"{cmd}: TEXT is not valid Unicode ({e.reason} at character {e.start})") from None
        ids = self.tok.encode([text])[0]
        if len(ids) == 0:
            raise SadedupError(f"{cmd}: TEXT {_clip(text)} gives no tokens with the run's tokenizer {self.tok.spec}; "
                               f"there is nothing to search for")
        return np.ascontiguousarray(ids, dtype=self.dtype)

    def _ranges(self, pattern: np.ndarray):
        for k, s in enumerate(self.shards):
            if len(pattern) <= len(s.tokens):  # a longer text cannot start anywhere in the shard
                lo, hi = native.sa_range(s.tokens, s.sa, pattern)
                if hi > lo:
                    yield k, s, lo, hi

    def _in_documents(self, s: _Shard, lo: int, hi: int, m: int, out: np.ndarray | None = None) -> int:
        if m == 1 and out is None:  # one token cannot straddle a document end: the range is the count
            return hi - lo
        try:
            return native.in_documents(s.sa, lo, hi, s.offsets, m, out)
        except ValueError as e:
            raise SadedupError(f"{self.command}: the suffix array of {s.folder} is damaged ({e}); run "
                               f"`sadedup index {self.ws.root}` or `sadedup build {self.ws.root}` again") from None

    def count(self, text: str) -> int:
        """Occurrences of TEXT's tokens inside one document, overlapping ones included."""
        pattern = self.tokens(text)
        return sum(self._in_documents(s, lo, hi, len(pattern)) for _, s, lo, hi in self._ranges(pattern))

    def locate(self, text: str, limit: int | None = DEFAULT_LIMIT) -> dict[str, Any]:
        """{"count": N, "occurrences": [...]}: every occurrence counted, the first `limit` of
        them (all with None or 0) listed in the order the substring stage visits documents
        (input order, or input.priority), then by position: doc_id, ext_id and the character
        offsets of the matched tokens in the original text."""
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise SadedupError(f"{self.command}: limit must be a whole number >= 0 (0: every occurrence), not {limit!r}")
        want = None if not limit else limit
        pattern = self.tokens(text)
        m = len(pattern)
        total = 0
        picked: list[tuple[int, np.ndarray]] = []
        have = 0
        for k, s, lo, hi in self._ranges(pattern):
            if want is not None and have >= want:  # earlier shards come first: count only
                total += self._in_documents(s, lo, hi, m)
                continue
            kept = np.zeros(0, np.int64)
            buf = np.empty(min(CHUNK, hi - lo), np.int64)
            for a in range(lo, hi, CHUNK):
                b = min(a + CHUNK, hi)
                c = self._in_documents(s, a, b, m, buf)
                total += c
                kept = np.concatenate((kept, buf[:c]))
                if want is not None and len(kept) > want - have:
                    kept = np.partition(kept, want - have - 1)[:want - have]
            kept.sort()
            picked.append((k, kept))
            have += len(kept)
        return {"count": total, "occurrences": self._describe(picked, m)}

    def _describe(self, picked: list[tuple[int, np.ndarray]], m: int) -> list[dict[str, Any]]:
        rows: list[tuple[int, int, int]] = []
        for k, pos in picked:
            if not len(pos):
                continue
            s = self.shards[k]
            offsets = np.asarray(s.offsets, dtype=np.int64)
            doc = np.searchsorted(offsets, pos, side="right") - 1
            ts = pos - offsets[doc]
            cs, ce = char_spans(self.tok, self.store.texts, s.tokens, offsets, np.asarray(s.doc_ids), doc, ts, ts + m,
                                chars=self._shard_chars(k))
            rows += zip(np.asarray(s.doc_ids)[doc].tolist(), cs.tolist(), ce.tolist())
        ext = self._ext_ids(sorted({d for d, _, _ in rows}))
        return [{"doc_id": d, "ext_id": ext.get(d), "char_start": a, "char_end": b} for d, a, b in rows]

    def _shard_chars(self, k: int) -> ShardChars | None:
        """A subword tokenizer's character bounds kept beside shard k's tokens, so a listed
        document is not encoded again (None: bytes, or shards tokenized without them)."""
        if k not in self._chars:
            s = self.shards[k]
            self._chars[k] = None if isinstance(self.tok, ByteTokenizer) else \
                ShardChars.load(s.folder, np.asarray(s.offsets, dtype=np.int64))
        return self._chars[k]

    def _ext_ids(self, doc_ids: list[int]) -> dict[int, Any]:
        out: dict[int, Any] = {}
        with self.ws.engine.connect() as c:
            for at in range(0, len(doc_ids), 500):
                chunk = doc_ids[at:at + 500]
                marks = ",".join("?" * len(chunk))
                out.update(c.exec_driver_sql(f"SELECT doc_id, ext_id FROM documents WHERE doc_id IN ({marks})",
                                             tuple(chunk)).fetchall())
        return out


def index_summary(detail: dict[str, Any]) -> str:
    """The one line `sadedup index` says of what it did."""
    if detail.get("source") == "build":
        return ("index: the build stage's suffix arrays cover all the text (substring.prefilter = false); "
                "nothing to build")
    line = Index().summary(detail)
    return f"{line} (done before, nothing redone)" if detail.get("skipped") else line


def context(workdir: PathLike, doc_id: int, char_start: int, char_end: int, width: int = 30) -> tuple[str, str, str]:
    """Up to `width` characters before an occurrence, the occurrence, and up to `width` after."""
    text = TextStore(Path(workdir)).text(int(doc_id))
    return text[max(0, char_start - width):char_start], text[char_start:char_end], text[char_end:char_end + width]


def _clip(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n // 2] + "..." + text[-n // 2:])


def count(workdir: PathLike, text: str, executor: str | None = None) -> int:
    """Occurrences of `text` in the documents the substring stage tokenized (see the module
    docstring); builds the full-text suffix arrays first when the folder has none."""
    return Occurrences(workdir, executor=executor, command="count").count(text)


def locate(workdir: PathLike, text: str, limit: int | None = DEFAULT_LIMIT,
           executor: str | None = None) -> dict[str, Any]:
    """The count and the first `limit` occurrences of `text` (see Occurrences.locate)."""
    return Occurrences(workdir, executor=executor, command="locate").locate(text, limit)
