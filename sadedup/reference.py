"""Dedup against a reference: finished work folders (`--reference DIR`, `run.reference`) whose
kept documents come before every document of this run, are never dropped, cut or rewritten,
and whose artifacts are read where they are, never recomputed or written.

What a reference offers (this module is the one place that reads a reference's folder):

- exact: the normalized-text hashes of the documents its exact stage kept (exact/hashes.npy):
  every hash it saw, so a new document whose hash is there is an exact duplicate of the
  reference's copy, as in one combined run over the reference's inputs and then the new ones.
- minhash: the signatures and band hashes of every document its minhash stage saw, banded,
  verified and clustered with this run's, the reference's documents ranked first whatever the
  keep rule: a new document goes exactly when one combined run would drop it, into a cluster
  kept by a reference document when that is the one it joins; a reference document is never
  dropped (what the clustering would say of it is not this run's decision).
- substring: its token shards, winnowing anchors and sorted windows (what its repeats stage
  read). A window of a new document that occurs in a kept reference document must count as an
  earlier surviving occurrence. Every such window's anchor hash is carried by an anchor of
  both runs, so (1) the candidates stage counts the reference's anchor hashes with this run's
  (a hash of this run that the reference carries is repeated); (2) the repeats stage's merge
  looks each of this run's distinct windows up, as it reaches them, in each reference shard's
  sorted windows (read in its folder: its candidate text holds every window whose anchor hash
  it repeats) and keeps
  the reference's windows found, one per distinct window that occurs in this run too: they are
  not merged but counted on the window of this run they equal, whose group id they take; the
  little text around the reference's anchors whose hash only this run repeats is sorted here
  (extra text) and merged with this run's shards; group ids then span both; (3) the remove stage
  marks, before its keep-first pass, every group seen in a kept reference document with that
  first occurrence (from the reference's own lists of each group's first two occurrences, its
  firsts.npy), so a new window of the group is a duplicate whose source is in the reference,
  and the reference's windows are never cut; keep = "none" marks the group's first occurrence
  in any reference document its substring stage saw.

Reference positions are numbered after this run's tokens: reference i's shards follow
reference i-1's, in the reference's document order, so the first occurrence is the smallest.

Each stage that reads a reference carries the reference's stage keys and checksums in its
stamps (`stamps`), so a reference that changed makes it stale ("reference DIR changed since
it ran"). A reference must be finished (every stage of its workflow done, export included),
and made with the settings its artifacts depend on equal to this run's; otherwise the run is
refused in one line naming the difference.
"""
from __future__ import annotations

import fcntl
import json
import os
import sqlite3
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import db, native
from .errors import SadedupError
from .locations import is_url
from .progress import say
from .workspace import file_bytes, files_checksum, flock_or_holder, load_npy, save_npy, task_sums

if TYPE_CHECKING:
    from .config import Workflow
    from .stages.base import Context, Stage
    from .workspace import Workspace

# the workflow entries whose decisions take a reference into account
METHODS = ("exact", "minhash", "substring")
# span stages whose keep-first rule across documents does not read a reference (yet)
NOT_READ = ("lines", "passages")
# per stage of this run: the stages of a reference it reads (their key and checksum are its stamps)
READS: dict[str, tuple[str, ...]] = {
    "exact": ("exact",),
    "minhash": ("minhash",),
    "candidates": ("tokenize", "candidates"),
    "repeats": ("tokenize", "candidates", "repeats"),
    "remove": ("tokenize", "remove"),
}
# settings the stored signatures and band hashes depend on
SIGNATURE_KEYS = ("ngram", "shingle", "num_perm", "bands", "rows", "seed", "lowercase")
_loading: set[Path] = set()  # references being opened, to refuse a cycle instead of recursing


def _immutable_engine(root: Path):
    """A connection to a reference's database that can create no file and write nothing: the
    reference is finished and locked against writers while it is read (`Reference.lock`)."""
    from sqlalchemy import create_engine

    return db.quiet_pool_interrupts(create_engine("sqlite://", creator=lambda: db.open_readonly(root, immutable=True)))


@dataclass
class Stream:
    """One sorted window stream of a reference shard for the cross-shard merge: the tokens its
    windows index (`built`/tokens.npy), its windows in suffix order (`windows`/wpos.npy, and
    wl.npy but for a reduced stream, which is not merged),
    the folder of this run its group ids go to (`write`/run_gid.npy), the folder its sorted text
    comes from (`source`: starts.npy, offsets.npy of its regions when `regions`, else positions
    are the shard's), and how it was made:

    - made: the extra text, made and sorted in this run's folder;
    - reduced: the reference's own windows, one per distinct window that occurs in this run
      too (found by the merge's lookup, MergePart): a group's other windows in the same stream add nothing to the
      merge, and their first occurrences come from the reference's own lists (`source`/gid.npy,
      firsts.npy);
    - neither: the reference's own windows as they are (a reference made before it kept
      firsts.npy)."""
    shard: "RefShard"
    built: Path
    windows: Path
    write: Path
    regions: bool
    made: bool
    source: Path
    reduced: bool = False


@dataclass
class RefShard:
    """One token shard of a reference and where this run keeps what it made from it."""
    j: int                     # index over every reference's shards, in order
    ref: "Reference"
    k: int                     # the shard in the reference
    shard_dir: Path            # the reference's shard (tokens, docs, offsets): read only
    sorted_dir: Path           # the reference's windows over it (L<L>/shard_k): read only
    candidate: bool            # those windows are over candidate text (its prefilter was on)
    anchors_dir: Path          # its anchors: the reference's own, or made in this run's folder
    own_anchors: bool
    out: Path                  # this run's folder for this shard
    base: int                  # first position of the shard among all references' tokens
    tokens: int

    def offsets(self) -> np.ndarray:
        return np.load(self.shard_dir / "offsets.npy").astype(np.int64)

    def docs(self) -> np.ndarray:
        return np.load(self.shard_dir / "docs.npy")

    def streams(self) -> list[Stream]:
        """Its windows as the reference sorted them, and, over candidate text, the extra text
        made here: the text around its anchors that are repeated only once this run's count."""
        built = self.sorted_dir if self.candidate else self.shard_dir
        if all((self.sorted_dir / f).exists() for f in ("firsts.npy", "gid.npy")):
            own = Stream(self, built, self.out, self.out, self.candidate, False, self.sorted_dir, True)
        else:
            own = Stream(self, built, self.sorted_dir, self.out, self.candidate, False, self.sorted_dir)
        if not self.candidate:
            return [own]
        extra = self.out / "extra"
        return [own, Stream(self, extra, extra, extra, True, True, extra)]


@dataclass
class Reference:
    ref_id: int
    root: Path
    ws: "Workspace"
    run_id: int | None
    rows: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    _lock_fd: int | None = None

    @property
    def wf(self) -> "Workflow":
        return self.ws.workflow

    def stamp(self, stages: tuple[str, ...]) -> list:
        return [f"reference {self.root}", [[s, *self.rows.get(s, (None, None))] for s in stages]]

    def query(self, sql: str, args: tuple = ()) -> list[tuple]:
        con = db.open_readonly(self.root, immutable=True)
        try:
            return con.execute(sql, args).fetchall()
        finally:
            con.close()

    def doc_ids(self, where: str) -> np.ndarray:
        con = db.open_readonly(self.root, immutable=True)
        try:
            rows = con.execute(f"SELECT doc_id FROM documents WHERE {where} ORDER BY doc_id")
            return np.fromiter((r[0] for r in rows), dtype=np.int64)
        finally:
            con.close()

    def n_docs(self) -> int:
        return int(self.query("SELECT coalesce(max(doc_id), -1) + 1 FROM documents")[0][0])

    # ---- a reader's lock: no sadedup run may write the reference while this run reads it
    def lock(self) -> None:
        if self._lock_fd is None:
            self._lock_fd = _read_lock(self.root, str(self.root))

    def close(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        if self.ws._engine is not None:
            self.ws._engine.dispose()

    # ---- exact
    def exact_hashes(self, lowercase: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(doc_ids, hi, lo): the documents the reference's exact stage kept and their hashes,
        one per distinct normalized text it saw. Read from exact/hashes.npy when it is there
        and intact; a folder whose exact stage kept no hashes (made by an older sadedup) has
        them made here, from its texts, with a note."""
        from .stages.exact import hash_documents, open_texts, text_chunks

        folder = self.root / "exact"
        files = [folder / "docs.npy", folder / "hashes.npy"]
        kept = self.doc_ids("reason IS NULL OR reason != 'exact_duplicate'")
        recorded = self.ws.stage_detail("exact").get("hashes")
        if recorded is not None and all(p.exists() for p in files) and list(files_checksum(files)) == recorded:
            ids, h = np.load(files[0]), np.load(files[1])
            at = np.searchsorted(ids, kept)
            if len(kept) and (at.max() >= len(ids) or not np.array_equal(ids[at], kept)):
                raise SadedupError(f"reference {self.root}: exact/docs.npy does not list the documents its exact stage "
                                   f"decided on; rerun its exact stage")
            return kept, h[at, 0].copy(), h[at, 1].copy()
        say(f"reference {self.root}: its exact stage kept no document hashes (an older sadedup made it); hashing "
            f"its {len(kept)} kept documents here")
        texts, offsets = open_texts(self.root)
        h = np.zeros((len(kept), 2), dtype=np.uint64)
        for i, j in text_chunks(offsets, kept, 64 << 20):
            h[i:j] = hash_documents(texts, offsets, kept[i:j], lowercase)
        return kept, h[:, 0].copy(), h[:, 1].copy()

    # ---- minhash
    def signature_chunks(self) -> tuple[list[Path], np.ndarray, np.ndarray]:
        """The reference's minhash chunks: their folders, the doc_id of every row (in order:
        every document its minhash stage decided on) and the shingles per row."""
        d = self.ws.stage_detail("minhash")
        folder = self.root / d.get("folder", "-")
        if not (folder / "docs.npy").exists():
            raise SadedupError(f"reference {self.root}: its minhash signatures are missing ({folder}); rerun its "
                               f"minhash stage")
        dirs = [folder / f"chunk_{k:05d}" for k in range(int(d.get("chunks", 0)))]
        from .stages.minhash import CHUNK_FILES

        # every chunk file the banding and verification read (its done check does not look)
        missing = next((c / f for c in dirs for f in CHUNK_FILES if not (c / f).is_file()), None)
        if missing is not None:
            raise SadedupError(f"reference {self.root}: its minhash signatures are missing ({missing}); rerun its "
                               f"minhash stage")
        docs = np.load(folder / "docs.npy")
        nsh = np.concatenate([np.load(c / "nsh.npy") for c in dirs] + [np.zeros(0, np.int64)])
        if len(nsh) != len(docs):
            raise SadedupError(f"reference {self.root}: its minhash chunks do not cover {folder / 'docs.npy'}; rerun "
                               f"its minhash stage")
        return dirs, docs, nsh

    # ---- substring
    def shard_dirs(self) -> list[Path]:
        from .stages.tokenize import shard_dirs

        return shard_dirs(self.ws)

    def anchors_dir(self, k: int, L: int) -> Path | None:
        """Shard k's anchors as the reference's current candidates stage made them for windows
        of L tokens (None: it kept none, substring.prefilter was off there)."""
        from .stages.candidates import ANCHOR_FILES, window_dirs
        from . import graph

        if not graph.enabled("candidates", self.wf) or self.wf.substring.window != L or "candidates" not in self.rows:
            return None
        d = window_dirs(self.ws, L)[k]
        return d if all((d / f).exists() for f in ANCHOR_FILES) else None

    def checksum(self, record: str, shard: int = -1) -> str | None:
        return self.ws.checksum(record, shard)

    def kept_mask(self) -> np.ndarray:
        """Per doc_id of the reference: kept (its windows count as earlier surviving text)."""
        mask = np.zeros(self.n_docs(), dtype=bool)
        mask[self.doc_ids("status = 'kept'")] = True
        return mask

    def tokenizer(self):
        from .stages.base import Context
        from .stages.tokenize import run_tokenizer

        return run_tokenizer(Context(self.ws))


# ---- what a finished folder's decisions read

# the stage whose stamps name the references a method's decisions (clusters, spans) read
DECIDED_BY = {"exact": "exact", "minhash": "minhash", "substring": "remove"}


def unread(root: Path, con: sqlite3.Connection, methods: tuple[str, ...] = tuple(DECIDED_BY)) -> dict[int, str]:
    """Per reference (ref_id of `refs`) that is not, as its folder is now, what the decisions
    of `methods` read: why, in one sentence. The stage that made them recorded in its stamps
    the references it read, in order, with their stage keys and checksums. A reference rerun
    since (other inputs number its documents otherwise), moved or deleted, or a `refs` table
    rewritten by a command that named other references (a stage command with --set
    run.reference) differs, and the doc_ids these decisions name there are other documents
    (explain and report would show another text)."""
    read = []  # (stage, done, [(reference folder, [[stage, key, checksum], ...]), ...] in ref_id order)
    for stage in dict.fromkeys(DECIDED_BY[m] for m in methods):
        row = con.execute("SELECT status, detail FROM stages WHERE stage = ? AND shard = -1", (stage,)).fetchone()
        if row is None:
            continue  # it never ran (or not in this workflow): no decisions of it name a reference
        try:
            stamps = json.loads(row[1] or "{}").get("stamps") or []
        except (ValueError, AttributeError):
            stamps = []
        named = [(st[0][len("reference "):], st[1]) for st in stamps
                 if isinstance(st, list) and len(st) == 2 and isinstance(st[0], str) and st[0].startswith("reference ")]
        read.append((stage, row[0] == "done", named))
    out: dict[int, str] = {}
    for ref_id, workdir in con.execute("SELECT ref_id, workdir FROM refs ORDER BY ref_id"):
        name = f"reference {ref_id} ({workdir})"
        other = next((st for st, done, named in read
                      if not done or ref_id >= len(named) or named[ref_id][0] != str(workdir)), None)
        if other is not None:
            out[ref_id] = (f"{name} is not the one this folder's {other} decisions read (its references changed since; "
                           f"`sadedup run --workdir {root}` redoes them)")
            continue
        folder = Path(workdir)
        if not folder.is_dir():
            out[ref_id] = f"{name} is not there (moved or deleted)"
            continue
        try:
            probe = _read_lock(folder, name[len("reference "):])
        except SadedupError as e:
            out[ref_id] = str(e)
            continue
        try:
            if not (folder / db.DB_NAME).is_file():
                out[ref_id] = f"{name} is not there (moved or deleted)"
                continue
            theirs = db.open_readonly(folder, immutable=True)
            try:
                now = {s: [k, c] for s, k, c in theirs.execute(
                    "SELECT stage, key, checksum FROM stages WHERE shard = -1 AND status = 'done'")}
            finally:
                theirs.close()
        except sqlite3.Error:
            now = {}
        finally:
            if probe is not None:
                os.close(probe)
        if not now or any(now.get(s) != [k, c] for _, _, named in read for s, k, c in named[ref_id][1]):
            out[ref_id] = (f"{name} changed since this folder's decisions read it (`sadedup run --workdir {root}` "
                           f"redoes them)")
    return out


# ---- opening the references of a workflow

def anchor(wf: "Workflow", base: Path | None = None) -> "Workflow":
    """The workflow with its references as absolute paths (relative ones from `base`, the
    folder the command runs in), as the work folder records them."""
    if not wf.run.reference:
        return wf
    base = Path(base or Path.cwd())
    paths = tuple(p if is_url(p) else str((base / Path(p).expanduser()).resolve()) for p in wf.run.reference)
    return replace(wf, run=replace(wf.run, reference=paths))


def _refuse_workflow(wf: "Workflow") -> None:
    """What this run's own workflow must be for its references to be read."""
    for s in NOT_READ:
        if s in wf.stages:
            raise SadedupError(f"--reference: the {s} stage does not read a reference yet (its keep-first rule would "
                               f"not see the reference's documents); leave {s} out of stages or run without --reference")
    if "substring" in wf.stages:
        from .tokenizers import parse_spec

        if not wf.substring.prefilter:
            raise SadedupError("--reference needs substring.prefilter = true (the reference's text is matched through "
                               "the winnowing anchors the prefilter computes)")
        if parse_spec(wf.substring.tokenizer)[0] == "train":
            raise SadedupError(f"--reference: substring.tokenizer = {wf.substring.tokenizer} would train a tokenizer on "
                               f"this run's corpus, whose tokens are not the reference's; give the reference's model "
                               f"file instead (--set substring.tokenizer=hf:PATH or sp:PATH)")


def _tokenizer_identity(ws: "Workspace | None", wf: "Workflow") -> str:
    """What a folder's tokens depend on: bytes, or the digest of the model file (the one a
    `train:` spec trained, in that folder)."""
    from .tokenizers import _file_digest, model_digest, parse_spec

    kind, _ = parse_spec(wf.substring.tokenizer)
    if kind == "bytes":
        return "bytes"
    if kind in ("hf", "sp"):
        return f"{kind} model {model_digest(wf.substring.tokenizer)}"
    from .stages.base import Context
    from .stages.tokenize import Tokenize

    row = ws.stage_row("tokenize")
    folder = Tokenize().trained_path(Context(ws), row.key) if row is not None else None
    found = sorted(folder.glob("*.json")) + sorted(folder.glob("*.model")) if folder and folder.exists() else []
    if not found:
        return f"{wf.substring.tokenizer} (not trained)"
    return f"{'hf' if found[0].suffix == '.json' else 'sp'} model {_file_digest(found[0])}"


def _differences(ref: Reference, wf: "Workflow") -> list[str]:
    """The settings that make the reference's artifacts unusable for this workflow, as
    `key X there, Y here`; a stage this run reads from it that it did not run comes first."""
    theirs = ref.wf
    for m in METHODS:
        if m in wf.stages and m not in theirs.stages:
            raise SadedupError(f"reference {ref.root} did not run the {m} stage, which this run's workflow lists (its "
                               f"stages: {', '.join(theirs.stages)}); run it there or leave {m} out here")
    out: list[str] = []

    def differ(key: str, a: Any, b: Any) -> None:
        if a != b:
            out.append(f"{key} = {a} there, {b} here")

    if "exact" in wf.stages:
        differ("exact.lowercase", theirs.exact.lowercase, wf.exact.lowercase)
    if "minhash" in wf.stages:
        for k in SIGNATURE_KEYS:
            differ(f"minhash.{k}", getattr(theirs.minhash, k), getattr(wf.minhash, k))
    if "substring" in wf.stages:
        differ("substring.min_length", theirs.substring.window, wf.substring.window)
        here = _tokenizer_identity(None, wf)  # not a trained one: _refuse_workflow said so
        there = _tokenizer_identity(ref.ws, theirs)
        if here != there:
            out.append(f"substring.tokenizer = {theirs.substring.tokenizer} ({there}) there, "
                       f"{wf.substring.tokenizer} ({here}) here")
    return out


def _recorded_references(root: Path) -> tuple[str, ...]:
    """The references a work folder's recorded workflow names (none when it cannot be read:
    opening the folder as a reference says why)."""
    try:
        return tuple(json.loads((root / "state.json").read_text())["workflow"]["run"].get("reference") or ())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return ()


def _path_back(root: Path, here: Path) -> list[Path] | None:
    """The chain of recorded references from `root` to `here` (both included), if any."""
    seen, stack = {root}, [[root]]
    while stack:
        chain = stack.pop()
        for p in _recorded_references(chain[-1]):
            if is_url(p):
                continue
            q = Path(p).resolve()
            if q == here:
                return [*chain, q]
            if q not in seen:
                seen.add(q)
                stack.append([*chain, q])
    return None


def _open_one(ref_id: int, path: str, wf: "Workflow", here: Path | None) -> Reference:
    root = Path(path)
    if is_url(path) or not root.is_dir():
        what = "a file, not a folder" if not is_url(path) and root.exists() else "no such folder"
        raise SadedupError(f"reference {path}: {what} (a reference is a finished sadedup work folder)")
    # read under a shared lock: a run writing the reference (a --restart empties it) is said,
    # not read halfway (a status then said "no such table" or "not a sadedup work folder")
    probe = _read_lock(root, path)
    try:
        return _open_locked(ref_id, path, root, wf, here)
    finally:
        if probe is not None:
            os.close(probe)


def _read_lock(root: Path, path: str) -> int | None:
    """A shared lock on a folder's .lock for as long as the returned fd is open (None: the
    folder was never locked, so never written by a run); refused while a run writes it."""
    lock = root / ".lock"
    if not lock.exists():
        return None
    fd = os.open(lock, os.O_RDONLY)
    held = flock_or_holder(fd, fcntl.LOCK_SH)
    if held is not None:
        raise SadedupError(f"reference {path} is in use by another sadedup run{held}; wait for it")
    return fd


def _check_database(root: Path, path: str) -> None:
    """A reference's database is read as it is, never brought up to date (nothing there is
    written): one of another schema version, damaged or no database at all is refused in one
    line (it was an internal error on the first query that failed)."""
    try:
        con = db.open_readonly(root, immutable=True)
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            con.close()
    except sqlite3.DatabaseError as e:
        raise SadedupError(f"reference {path}: {root / db.DB_NAME} is not a readable sadedup database ({e})") from None
    if not tables:
        raise SadedupError(f"reference {path} is not a sadedup work folder (its {db.DB_NAME} is empty)")
    if version != db.SCHEMA_VERSION:
        how = ("run a command that writes it with this sadedup first (`sadedup run --workdir "
               f"{path}` brings it up to date)") if version < db.SCHEMA_VERSION else "upgrade sadedup"
        raise SadedupError(f"reference {path}: its database has schema version {version}, this sadedup reads "
                           f"{db.SCHEMA_VERSION}; {how}")
    missing = sorted(set(db.metadata.tables) - tables)
    if missing:
        raise SadedupError(f"reference {path}: its database lacks the table(s) {', '.join(missing)} (damaged); "
                           f"rerun that folder with --restart")


def _open_locked(ref_id: int, path: str, root: Path, wf: "Workflow", here: Path | None) -> Reference:
    from .pipeline import standing
    from .workspace import Workspace

    if not (root / db.DB_NAME).is_file():
        raise SadedupError(f"reference {path} is not a sadedup work folder (no {db.DB_NAME})")
    root = root.resolve()
    if here is not None and root == here.resolve():
        raise SadedupError(f"reference {path} is this run's own work folder; give another finished work folder")
    if here is not None:
        # a folder whose references lead back here would put this folder's documents before
        # themselves: checked on the recorded workflows, before this run reconfigures its own
        # (else the run is accepted and leaves both folders naming the other unfinished)
        back = _path_back(root, here.resolve())
        if back is not None:
            raise SadedupError(f"reference {path} is itself deduplicated against this work folder "
                               f"({' -> '.join(map(str, back))}); a folder cannot be a reference of its own "
                               f"references")
    if root in _loading:
        raise SadedupError(f"reference {path} is, through its own references, a reference of itself")
    _check_database(root, path)
    _loading.add(root)
    try:
        ws = Workspace(root, readonly=True)
        ws._engine = _immutable_engine(root)
        try:
            ws.workflow
        except SadedupError as e:  # said of the reference, not of this run's folder
            raise SadedupError(f"reference {path}: {e}") from None
        ref = Reference(ref_id, root, ws, None)
        try:
            for s in standing(ws, verify=False):
                if s["state"] != "done":
                    raise SadedupError(f"reference {path} is not finished: its {s['stage']} stage is {s['state']} "
                                       f"({s['why']}); finish it first with `sadedup run --workdir {path}`")
            for name in ("ingest", "exact", "minhash", "tokenize", "candidates", "repeats", "remove", "export"):
                row = ws.stage_row(name)
                if row is not None and row.status == "done":
                    ref.rows[name] = (row.key, row.checksum)
            ref.run_id = ref.query("SELECT max(run_id) FROM runs WHERE status = 'done'")[0][0]
            diff = _differences(ref, wf)
        except BaseException:
            ref.close()
            raise
    finally:
        _loading.discard(root)
    if diff:
        ref.close()
        raise SadedupError(f"reference {path} was made with other settings than this run: {'; '.join(diff)}; its "
                           f"artifacts cannot be reused (set them equal)")
    return ref


def load(wf: "Workflow", here: Path | None = None) -> list[Reference]:
    """The workflow's references, opened read-only and checked (finished, same settings)."""
    paths = list(wf.run.reference)
    if not paths:
        return []
    _refuse_workflow(wf)
    for i, p in enumerate(paths):
        if p in paths[:i]:
            raise SadedupError(f"reference {p} is given twice")
    refs: list[Reference] = []
    try:
        for i, p in enumerate(paths):
            refs.append(_open_one(i, p, wf, here))
    except BaseException:
        for r in refs:
            r.close()
        raise
    return refs


def check(wf: "Workflow", here: Path, output: str | Path | None = None) -> list[Reference]:
    """Refuses, before anything is written, references this workflow cannot read, or whose
    folder this run would write (`output`: the output this command names); returns them
    opened, for `adopt` (or `close_all`)."""
    refs = load(wf, here)
    try:
        _refuse_inside(refs, here, output)
    except BaseException:
        close_all(refs)
        raise
    return refs


def unlisted_upstream(refs: list[Reference]) -> list[tuple[Path, Path]]:
    """(reference, its own reference) for each folder a given reference was itself deduplicated
    against that is not given too: a reference is its own kept documents only, so what it
    dropped as a copy of that folder's text is not seen (a chain of dumps names them all)."""
    given = {r.root.resolve() for r in refs}
    out = []
    for r in refs:
        for p in _recorded_references(r.root):
            q = Path(p) if is_url(p) else Path(p).resolve()
            if q not in given:
                out.append((r.root, q))
    return out


def _outputs_of(r: Reference) -> set[Path]:
    """The local files a reference's export wrote (its output, or the parts of a sharded one)."""
    from .outputs import output_of

    found: set[Path] = set()
    try:
        spec = r.ws.output
        if spec and not output_of(spec).remote:
            found.add(Path(output_of(spec).first).resolve())
        parts = r.ws.stage_detail("export").get("parts") or []
    except (SadedupError, OSError, ValueError):
        return found
    found.update(Path(p).resolve() for p in parts if isinstance(p, str) and not is_url(p))
    return found


def _refuse_inside(refs: list[Reference], here: Path, output: str | Path | None) -> None:
    """Nothing this run writes may be in a reference's folder: not its work folder, not its
    output (a work folder made inside the reference was accepted and written there); nor may a
    reference be inside this run's work folder, whose stage folders are rewritten and which
    --restart empties."""
    from .outputs import output_of

    out = None
    if output is not None:
        o = output_of(output)
        out = None if o.remote else Path(o.first).resolve()
    h = Path(here).resolve()
    for r in refs:
        if h.is_relative_to(r.root):
            raise SadedupError(f"work folder {here} is inside reference {r.root}; put it elsewhere (nothing in a "
                               f"reference folder is written)")
        if r.root.is_relative_to(h):
            raise SadedupError(f"reference {r.root} is inside the work folder {here}; move it out (a work folder's "
                               f"stage folders are rewritten, and --restart empties it)")
        if out is not None and out.is_relative_to(r.root):
            raise SadedupError(f"output {output} is inside reference {r.root}; write it elsewhere (nothing in a "
                               f"reference folder is written)")
        if out is not None and out in _outputs_of(r):
            # it overwrote the reference's clean output, and left it unfinished (its export stale)
            raise SadedupError(f"output {output} is the output of reference {r.root}; write it elsewhere")


def close_all(refs: list[Reference]) -> None:
    for r in refs:
        r.close()


def adopt(ws: "Workspace", refs: list[Reference]) -> None:
    """The references `check` opened for this command become the work folder's (configuring
    it changed none of the settings they were checked against), so `of` does not open them
    again."""
    if refs:
        release(ws)
        ws.__dict__["_references"] = (ws.workflow.to_json(), refs)


def of(ws: "Workspace") -> list[Reference]:
    """The work folder's references (its workflow's run.reference), opened once per
    workflow and kept on the Workspace until `release`."""
    wf = ws.workflow
    if not wf.run.reference:
        return []
    stamp = wf.to_json()
    cached = ws.__dict__.get("_references")
    if cached is not None and cached[0] == stamp:
        return cached[1]
    if cached is not None:
        for r in cached[1]:
            r.close()
    refs = load(wf, ws.root)
    ws.__dict__["_references"] = (stamp, refs)
    return refs


def hold(ws: "Workspace") -> None:
    """For a command that writes the work folder: its references opened and locked against
    writers, and the `refs` table made to list them."""
    refs = of(ws)
    _refuse_inside(refs, ws.root, ws.output)  # the recorded output, or a reference added since it was
    for r in refs:
        r.lock()
    rows = [(r.ref_id, str(r.root), r.run_id) for r in refs]
    ws.prov.replace_refs(rows)


def release(ws: "Workspace") -> None:
    cached = ws.__dict__.pop("_references", None)
    if cached is not None:
        for r in cached[1]:
            r.close()


def stamps(ctx: "Context", stage: str) -> list:
    """What stage `stage` reads from the references, for its stamps (nothing without any)."""
    if stage not in READS or not ctx.wf.run.reference:
        return []
    return [r.stamp(READS[stage]) for r in of(ctx.ws)]


# ---- exact

def exact_seen(ctx: "Context") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(ref_id, doc_id, hi, lo) of the hashes the references' exact stages kept, each hash once
    (the first reference that has it: its copy comes first in document order)."""
    parts = [(np.full(len(ids), r.ref_id, np.int64), ids, hi, lo)
             for r in of(ctx.ws) for ids, hi, lo in [r.exact_hashes(ctx.wf.exact.lowercase)]]
    ref, ids, hi, lo = (np.concatenate([p[i] for p in parts]) for i in range(4))
    order = np.lexsort((np.arange(len(ids)), lo, hi))
    first = np.ones(len(order), dtype=bool)
    first[1:] = (hi[order][1:] != hi[order][:-1]) | (lo[order][1:] != lo[order][:-1])
    keep = np.sort(order[first])
    return ref[keep], ids[keep], hi[keep], lo[keep]


# ---- minhash

@dataclass
class SignatureRows:
    """Every reference's minhash rows, one after another (reference 0's first): rows [0, n) of
    the banding and verification, before this run's own."""
    dirs: list[Path]
    chunks: list[tuple[int, int]]   # per chunk folder: its rows [i, j) among all references' rows
    ref: np.ndarray                 # per row: ref_id
    doc_id: np.ndarray              # per row: doc_id in its reference
    nsh: np.ndarray                 # per row: shingles
    has: np.ndarray                 # the rows with a shingle (the others are nobody's near duplicate)
    segments: list[tuple[int, int, Any]]  # (row_lo, row_hi, reference) per reference

    @property
    def n(self) -> int:
        return len(self.doc_id)


def signature_rows(ctx: "Context") -> SignatureRows | None:
    refs = of(ctx.ws)
    if not refs:
        return None
    dirs: list[Path] = []
    chunks: list[tuple[int, int]] = []
    ref, doc_id, nsh, has, segments = [], [], [], [], []
    at = 0
    for r in refs:
        rdirs, docs, rnsh = r.signature_chunks()
        lo = at
        for d in rdirs:
            n = len(np.load(d / "nsh.npy", mmap_mode="r"))
            dirs.append(d)
            chunks.append((at, at + n))
            at += n
        ref.append(np.full(len(docs), r.ref_id, np.int64))
        doc_id.append(docs)
        nsh.append(rnsh)
        has.append(lo + np.flatnonzero(rnsh > 0))
        segments.append((lo, at, r))
    z = [np.zeros(0, np.int64)]
    return SignatureRows(dirs, chunks, np.concatenate(ref + z), np.concatenate(doc_id + z), np.concatenate(nsh + z),
                         np.concatenate(has + z), segments)


# ---- substring

def ref_shards(ctx: "Context") -> list[RefShard]:
    """Every reference's token shards, in order, with the folder this run makes for each
    beside its own shards' (L<L>/ref<i>_shard_<k>)."""
    from .stages.candidates import window_dirs, window_folder

    refs = of(ctx.ws)
    if not refs:
        return []
    cached = ctx.ws.__dict__.get("_ref_shards")
    key = (ctx.wf.to_json(), tuple(str(r.rows.get("tokenize")) for r in refs))
    if cached is not None and cached[0] == key:
        return cached[1]
    L = ctx.wf.substring.window
    folder = window_folder(ctx.ws, L)
    out: list[RefShard] = []
    base = 0
    for r in refs:
        sorted_dirs = window_dirs(r.ws, L)
        candidate = r.wf.substring.prefilter
        for k, sdir in enumerate(r.shard_dirs()):
            n = int(np.load(sdir / "offsets.npy")[-1])
            own = r.anchors_dir(k, L)
            o = folder / f"ref{r.ref_id}_{sdir.name}"
            out.append(RefShard(len(out), r, k, sdir, sorted_dirs[k], candidate, own or o, own is not None, o, base, n))
            base += n
    ctx.ws.__dict__["_ref_shards"] = (key, out)
    return out


def streams(ctx: "Context") -> list[Stream]:
    """Every reference shard's window streams, in order (nothing without references)."""
    return [st for s in ref_shards(ctx) for st in s.streams()] if ctx.wf.run.reference else []


@dataclass(frozen=True)
class CrossRange:
    """Task: in one range of hash values, the anchor hashes of this run that are repeated
    once the references' anchors count too: repeated among this run's, or carried by a
    reference's anchor as well."""
    own: tuple[str, ...]
    refs: tuple[str, ...]
    lo: int | None
    hi: int | None
    out: str

    def __call__(self) -> dict[str, Any]:
        from .stages.candidates import distinct, sorted_slice

        b = sorted_slice([load_npy(Path(f)) for f in self.own], self.lo, self.hi)
        a = distinct(sorted_slice([load_npy(Path(f)) for f in self.refs], self.lo, self.hi))
        dup = b[1:][b[1:] == b[:-1]]
        found = np.union1d(distinct(dup), np.intersect1d(a, distinct(b), assume_unique=True))
        save_npy(Path(self.out), found.astype(np.uint64, copy=False))
        return {"hashes": len(found), "wrote": file_bytes([self.out])}


def repeated_hashes(stage: "Stage", ctx: "Context", key: str, own: list[Path], memory: int, parts: int,
                    folder: Path) -> np.ndarray:
    """candidates.repeated_hashes with the references' anchors counted: the hashes of this
    run's anchors that another anchor of this run or of a reference carries. The references'
    anchors are theirs where their candidates stage kept them, else made here from their
    shards (in this run's folder)."""
    from .stages.base import ShardJob, chain
    from .stages.candidates import ANCHOR_FILES, AnchorShard, hash_cuts, range_tasks

    L = ctx.wf.substring.window
    shards = ref_shards(ctx)
    stage.map_shards(ctx, "ref_anchors", "reference anchors", [
        ShardJob(s.j, chain(key, "ref_anchors", s.j, s.ref.checksum("tokenize", s.k)),
                 [s.out / f for f in ANCHOR_FILES], AnchorShard(str(s.shard_dir), str(s.out), L))
        for s in shards if not s.own_anchors])
    refs = [s.anchors_dir / "anchors_sorted.npy" for s in shards]
    cuts = hash_cuts([load_npy(p) for p in [*own, *refs]], memory, parts)
    mine, theirs = tuple(map(str, own)), tuple(map(str, refs))
    return range_tasks(ctx.executor, folder, cuts, lambda lo, hi, out: CrossRange(mine, theirs, lo, hi, out))


REF_TEXT_FILES = ("tokens.npy", "offsets.npy", "starts.npy", "sa.npy", "lcp.npy", "wpos.npy", "wl.npy")


@dataclass(frozen=True)
class ExtraText:
    """Task: the text of one reference shard that its own candidate text lacks and a window
    of this run's may repeat: around its anchors whose hash is repeated once this run's
    anchors count (`repeated`) but not among its own (`theirs`). Every window of the
    reference that occurs in this run has an anchor of a hash both carry, so it lies in the
    reference's candidate text or here. Sorted as a shard of this run's: regions (tokens,
    offsets, starts, as candidates.candidate_shard), suffix and LCP arrays capped at L, and
    the windows in suffix order, all in this run's folder."""
    shard_dir: str
    anchors_dir: str
    repeated: str
    theirs: str
    out: str
    L: int

    def __call__(self) -> dict[str, Any]:
        from .stages.build import build_shard
        from .stages.candidates import anchor_length
        from .stages.repeats import windows_shard
        from .workspace import npy_in_place

        sdir, adir, out = Path(self.shard_dir), Path(self.anchors_dir), Path(self.out)
        out.mkdir(parents=True, exist_ok=True)
        tokens = load_npy(sdir / "tokens.npy")
        offsets = np.load(sdir / "offsets.npy").astype(np.int64)
        hashes = load_npy(adir / "anchors_hash.npy")
        hit = native.member(hashes, load_npy(Path(self.repeated)))
        hit &= ~native.member(hashes, load_npy(Path(self.theirs)))
        starts, ends = native.regions(load_npy(adir / "anchors_pos.npy")[hit], offsets, anchor_length(self.L), self.L)
        region_offsets = np.zeros(len(starts) + 1, dtype=np.int64)
        np.cumsum(ends - starts, out=region_offsets[1:])
        with npy_in_place(out / "tokens.npy", tokens.dtype, int(region_offsets[-1])) as dst:
            native.gather_regions(tokens, starts, ends, dst)
        save_npy(out / "offsets.npy", region_offsets)
        save_npy(out / "starts.npy", starts)
        build_shard(str(out), lcp_cap=self.L)
        windows_shard(str(out), str(out), self.L)
        return {"tokens": len(tokens), "extra_tokens": int(region_offsets[-1]),
                **task_sums([out / f for f in REF_TEXT_FILES])}


# a reference stream's windows that this run's windows were found equal to, kept in this run's
# folder by the merge (stages/repeats.py, MergePart): in the reference's order, their positions
# (wpos.npy), the reference's own group id of each (theirs.npy, from its gid.npy: -1 for a
# window it holds once) and the bounds of its run of equal windows in the reference's stream
# (heads.npy, ends.npy); their group ids in this run are its run_gid.npy
RUN_FILES = ("wpos.npy", "theirs.npy", "heads.npy", "ends.npy")


def index_dtype(n: int):
    return np.int32 if n < np.iinfo(np.int32).max else np.int64


def found_files(ctx: "Context") -> list[Path]:
    """The files the merge keeps of the references' windows found in this run (RUN_FILES of
    every reduced stream)."""
    return [st.windows / f for st in streams(ctx) if st.reduced for f in RUN_FILES]


def sorted_text(stage: "Stage", ctx: "Context", key: str) -> list[Stream]:
    """The references' window streams for the cross-shard merge: their own sorted windows,
    read where they are (looked up by the merge, MergePart), and over candidate text the
    extra text made here as tasks (finished ones kept). Nothing without references."""
    from .stages.base import ShardJob, chain
    from .stages.candidates import window_folder

    if not ctx.wf.run.reference:
        return []
    L = ctx.wf.substring.window
    repeated = window_folder(ctx.ws, L) / "repeated.npy"
    jobs = []
    for st in streams(ctx):
        s = st.shard
        st.write.mkdir(parents=True, exist_ok=True)
        if st.made:
            theirs = window_folder(s.ref.ws, L) / "repeated.npy"
            jobs.append(ShardJob(s.j, chain(key, "ref_text", s.j, s.ref.checksum("tokenize", s.k),
                                            s.ref.checksum("repeated"), ctx.ws.checksum("repeated")),
                                 [st.windows / f for f in REF_TEXT_FILES],
                                 ExtraText(str(s.shard_dir), str(s.anchors_dir), str(repeated), str(theirs),
                                           str(st.windows), L)))
    stage.map_shards(ctx, "ref_text", "reference text", jobs)
    return streams(ctx)


def merge_stamps(ctx: "Context") -> list:
    """For the merge's key: what the references' streams are (nothing without references)."""
    if not ctx.wf.run.reference:
        return []
    # the reduced streams are looked up by the merge itself: their group ids (gid.npy) are read
    return [[s.ref.checksum("windows", s.k) for s in ref_shards(ctx)],
            ["lookup", [st.shard.ref.checksum("groups", st.shard.k) for st in streams(ctx) if st.reduced]],
            [ctx.ws.checksum("ref_text", s.j) for s in ref_shards(ctx) if s.candidate]]


# windows of a reference stream read at once by `preset`
PRESET_WINDOWS = 1 << 22


_NONE = np.int64(np.iinfo(np.int64).max)


# positions per bucket of _Bounds's table (a power of two)
BUCKET_BITS = 8


class _Bounds:
    """searchsorted(bounds, q, side="right") - 1 for many positions q in [0, bounds[-1]) at
    once: the last piece (region, document) that starts at or before each. A table per bucket
    of 2^BUCKET_BITS positions names the piece its first position is in; then a position
    moves on past the few piece starts left in its bucket. The positions `preset` places are
    a reference's windows in suffix order, at random over the shard, and numpy's binary search
    per position cost about as much as the rest of preset together (0.2 s for 0.6M positions
    over 31k regions at load 10)."""

    def __init__(self, bounds: np.ndarray) -> None:
        self.bounds = np.asarray(bounds, dtype=np.int64)
        end = int(self.bounds[-1]) if len(self.bounds) else 0
        starts = np.arange(0, end + 1, 1 << BUCKET_BITS, dtype=np.int64)
        self.table = np.searchsorted(self.bounds, starts, side="right") - 1

    def __call__(self, q: np.ndarray) -> np.ndarray:
        b = self.bounds
        r = self.table[q >> BUCKET_BITS]
        for _ in range(3):  # most buckets hold a piece start or two
            m = np.flatnonzero(b[r + 1] <= q) if len(b) > 1 else np.zeros(0, np.int64)
            if not len(m):
                return r
            r[m] += 1
        # the rest (buckets of many short pieces) by binary search
        m = np.flatnonzero(b[np.minimum(r + 1, len(b) - 1)] <= q)
        r[m] = np.searchsorted(b, q[m], side="right") - 1
        return r


def _placing(st: Stream, offsets: np.ndarray, counted: np.ndarray):
    """For a stream: q (sorted-text positions) -> (shard positions, whether their document
    counts), by one lookup (_Bounds): in its regions (each inside one document, whose count is
    looked up once per region) or the shard's documents."""
    if st.regions:
        starts, roff = np.load(st.source / "starts.npy"), np.load(st.source / "offsets.npy")
        shift = starts - roff[:-1]
        region_counts = counted[np.searchsorted(offsets, starts, side="right") - 1]
        piece = _Bounds(roff)
    else:
        piece = _Bounds(offsets)

    def place(q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q = np.asarray(q, dtype=np.int64)
        if not st.regions:
            return q, counted[piece(q)]
        r = piece(q)
        return q + shift[r], region_counts[r]

    return place


def _least_of_runs(wpos: np.ndarray, a: np.ndarray, b: np.ndarray, place, chunk: int = PRESET_WINDOWS) -> np.ndarray:
    """Per run [a, b) of a stream's windows, the least shard position of its windows whose
    document counts (_NONE: none does), a chunk of windows at a time."""
    out = np.full(len(a), _NONE, dtype=np.int64)
    ends = np.cumsum(b - a)
    i = 0
    while i < len(a):
        j = max(i + 1, int(np.searchsorted(ends, (ends[i - 1] if i else 0) + chunk, side="right")))
        lens = b[i:j] - a[i:j]
        first = np.concatenate(([0], np.cumsum(lens)[:-1]))
        at = np.repeat(a[i:j] - first, lens) + np.arange(int(lens.sum()))
        p, ok = place(np.asarray(wpos[at]))
        out[i:j] = np.minimum.reduceat(np.where(ok, np.asarray(p, dtype=np.int64), _NONE), first)
        i = j
    return out


def _reduced_firsts(st: Stream, place, kept_only: bool, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per distinct window of a reduced stream whose group is `wanted` (per group): (group,
    its least counted shard position, _NONE when none counts). From the reference's own
    lists: a window once in the reference is its run's only window; the others' first two
    positions in the shard are in its firsts.npy (group ids increasing); only a run whose two
    first windows are in documents that do not count is read window by window."""
    g = np.load(st.write / "run_gid.npy")
    idx = np.flatnonzero(g >= 0)
    idx = idx[wanted[g[idx]]]
    theirs = np.asarray(load_npy(st.windows / "theirs.npy"))[idx]
    q1 = np.asarray(load_npy(st.windows / "wpos.npy"))[idx].astype(np.int64)
    q2 = np.full(len(idx), -1, dtype=np.int64)
    rep = theirs >= 0
    if rep.any():
        # mapped, not read whole: the groups looked up are a part of the reference's
        firsts = load_npy(st.source / "firsts.npy")
        # in the list's own dtype (int32 when its ids fit): a search in mixed ones casts the
        # whole list first; an id too wide for it cannot be listed and fails the check below
        f = np.searchsorted(firsts[0], theirs[rep].astype(firsts.dtype))
        if f.max() >= firsts.shape[1] or not np.array_equal(firsts[0][f], theirs[rep]):
            raise SadedupError(f"reference {st.shard.ref.root}: {st.source / 'firsts.npy'} does not list the groups of "
                               f"its gid.npy; rerun its repeats stage")
        q1[rep], q2[rep] = firsts[1][f], firsts[2][f]
    p1, ok1 = place(q1)
    least = np.where(ok1, p1, _NONE)
    second = np.flatnonzero(~ok1 & (q2 >= 0))  # the first is in a document that does not count
    p2, ok2 = place(q2[second])
    least[second[ok2]] = p2[ok2]
    if kept_only:
        starts = np.asarray(load_npy(st.windows / "heads.npy"))[idx].astype(np.int64)
        ends = np.asarray(load_npy(st.windows / "ends.npy"))[idx].astype(np.int64)
        scan = (least == _NONE) & (ends - starts > 2)
        if scan.any():
            least[scan] = _least_of_runs(load_npy(st.source / "wpos.npy"), starts[scan], ends[scan], place)
    return g[idx], least


def preset(ctx: "Context", state: np.ndarray, base: int, kept_only: bool) -> int:
    """Marks in `state` (per repeated group, -1: unseen) the first occurrence of each group in
    the references, numbered from `base` (after this run's tokens): in a kept reference
    document (keep = "first": an earlier surviving occurrence), or in any document the
    reference's substring stage saw (keep = "none"). Returns how many marks it made.

    A group's windows in one stream are one run of its suffix order, so its first occurrence
    there is the least position of the run's windows in counted documents: read from the
    reference's own lists for a reduced stream (_reduced_firsts), else window by window."""
    from .stages.candidates import window_dirs

    L = ctx.wf.substring.window
    marked = 0
    kept: dict[int, np.ndarray] = {}
    # the groups this run's text holds (its shards' lists of repeated groups): only their
    # first occurrences in the references are looked for
    wanted = np.zeros(len(state), dtype=bool)
    for o in window_dirs(ctx.ws, L):
        wanted[np.load(o / "firsts.npy")[0]] = True
    for st in streams(ctx):
        s = st.shard
        # a reduced stream keeps no wl.npy (it is not merged): its windows are its wpos.npy
        wl = load_npy(st.windows / ("wpos.npy" if st.reduced else "wl.npy"))
        if not len(wl):
            continue
        offsets, docs = s.offsets(), s.docs()
        if kept_only and s.ref.ref_id not in kept:
            kept[s.ref.ref_id] = s.ref.kept_mask()
        counted = kept[s.ref.ref_id][docs] if kept_only else np.ones(len(docs), dtype=bool)
        place = _placing(st, offsets, counted)
        if st.reduced:
            # the first stream of its shard: a group an earlier shard holds first needs nothing here
            found = [_reduced_firsts(st, place, kept_only, wanted & (state < 0))]
        else:
            run_gid, heads = np.load(st.write / "run_gid.npy"), np.flatnonzero(np.asarray(wl) < L)
            if not len(heads) or heads[0] != 0:
                heads = np.concatenate(([0], heads))
            sel = np.flatnonzero(run_gid >= 0)
            sel = sel[wanted[run_gid[sel]]]
            ends = np.append(heads[1:], len(wl))
            found = [(run_gid[sel], _least_of_runs(load_npy(st.windows / "wpos.npy"), heads[sel], ends[sel], place))]
        for g, least in found:
            hit = least < _NONE
            g, least = g[hit], least[hit] + s.base + base
            better = (state[g] < 0) | (least < state[g])  # the other stream of the shard may hold it first
            state[g[better]] = least[better]
            marked += int(better.sum())
    return marked


@dataclass
class Sources:
    """The sources of spans that duplicate reference text, column by column."""
    ref: np.ndarray
    doc_id: np.ndarray
    tok_start: np.ndarray
    char_start: np.ndarray
    char_end: np.ndarray


def sources(ctx: "Context", pos: np.ndarray, length: np.ndarray) -> Sources:
    """Where reference positions `pos` (numbered from 0 over every reference's tokens, as
    `preset` numbers them less its base) are: reference, document, token offset, and the
    characters of the `length` tokens from there (within the document)."""
    from .store import TextStore
    from .tokenizers import ByteTokenizer, ShardChars, char_spans

    shards = ref_shards(ctx)
    n = len(pos)
    out = Sources(*(np.zeros(n, np.int64) for _ in range(5)))
    if not n:
        return out
    bases = np.array([s.base for s in shards], dtype=np.int64)
    which = np.searchsorted(bases, pos, side="right") - 1
    toks: dict[int, Any] = {}
    for j in np.unique(which).tolist():
        s = shards[j]
        m = which == j
        offsets, docs = s.offsets(), s.docs()
        p = pos[m] - s.base
        local = np.searchsorted(offsets, p, side="right") - 1
        start = p - offsets[local]
        end = np.minimum(start + length[m], offsets[local + 1] - offsets[local])
        if s.ref.ref_id not in toks:
            toks[s.ref.ref_id] = s.ref.tokenizer()
        tok = toks[s.ref.ref_id]
        store = TextStore(s.ref.root)
        chars = None if isinstance(tok, ByteTokenizer) else ShardChars.load(s.shard_dir, offsets)
        cs, ce = char_spans(tok, store.texts, load_npy(s.shard_dir / "tokens.npy"), offsets, docs, local, start, end,
                            chars=chars)
        out.ref[m], out.doc_id[m], out.tok_start[m], out.char_start[m], out.char_end[m] = \
            s.ref.ref_id, docs[local], start, cs, ce
    return out
