"""Where export writes: one file, or parts named by `{shard}`, on a local path or a URL.

- `out.jsonl`: one file, written whole under a temporary name and renamed into place.
- `out/part-{shard:05d}.parquet`: one part per input file, in input order (part i holds the
  kept rows of input file i; a file with no kept row still gets its part, so the parts line up
  with the inputs); with `run.output_rows = N`, parts of at most N rows, numbered on across the
  files, a part never holding rows of two files.
- `s3://bucket/clean/part-{shard:05d}.parquet` (any fsspec URL): each file or part is written
  to the work folder first and then uploaded whole (an object appears only once complete).

A format field other than `shard` in the name is refused, as is `{shard}` in a folder name.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import string
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import formats
from .errors import SadedupError
from .locations import Url, as_path, check_writable, is_url, without_file_scheme

if TYPE_CHECKING:
    from .config import Workflow


@dataclass(frozen=True)
class Output:
    spec: str

    @property
    def sharded(self) -> bool:
        return "{" in self.spec

    @property
    def remote(self) -> bool:
        return is_url(self.spec)

    def absolute(self) -> "Output":
        """A local output resolved against the current directory, so that a later command
        from another directory means the same file; a URL as it is."""
        return self if self.remote else Output(str(Path(self.spec).resolve()))

    def part(self, i: int) -> str:
        """The name of part i (the output itself when not sharded)."""
        if not self.sharded:
            return self.spec
        _check_pattern(self.spec)
        return self.spec.format(shard=i)

    @property
    def first(self) -> str:
        return self.part(0)

    def local(self, i: int = 0) -> Path:
        assert not self.remote
        return Path(self.part(i))

    def url(self, i: int = 0) -> Url:
        return Url(self.part(i))

    def check(self, inputs: list, claimed: list[tuple[str, str]] = ()) -> None:
        """Everything about the output that can be known before any work (`claimed`: see
        `claimed`)."""
        from .writers import check_output

        if self.remote:
            from .writers import check_apart

            formats.output_kind(self.first)
            # the inputs as given (a folder, a glob) and the files they stand for
            check_apart(self.part(0), inputs, claimed)
            url = self.url()
            try:
                if url.is_dir():
                    raise SadedupError(f"output {self.spec}: is a folder; name a file")
                check_writable(url)
            except SadedupError as e:
                said = str(e)
                raise SadedupError(said if said.startswith("output ") else f"output {said}") from None
            if formats.output_kind(self.first)[0].name == "parquet" and inputs:
                from .readers import expand_inputs

                formats.output_schema(expand_inputs(list(inputs))[0])
            return
        check_output(self.first, inputs, claimed)
        if self.sharded:
            self._check_parts(inputs, claimed)

    def names(self, path: str) -> bool:
        """Whether the local absolute `path` is a name this output's writing makes: a part (any
        the pattern names), or beside one its temporary (.partial) or lock file."""
        if self.remote:
            return False
        p = Path(path)
        spec = Path(self.spec).resolve()
        if p.parent != spec.parent:
            return False
        name = p.name.removesuffix(".partial")
        if name.startswith(".") and name.endswith(".sadedup-lock"):
            name = name[1:].removesuffix(".sadedup-lock")
        return name == spec.name if not self.sharded else _parts_of(spec.name).fullmatch(name) is not None

    def _check_parts(self, inputs: list, claimed: list[tuple[str, str]]) -> None:
        """Every part, not only the first, refused over an input or a claimed file: with
        inputs a.jsonl and q-00001.jsonl, output q-{shard:05d}.jsonl wrote its part 1 over
        the second input. A part is any name the pattern makes, whatever the part count."""
        _check_pattern(self.spec)
        folder, regex = Path(self.spec).parent.resolve(), _parts_of(Path(self.spec).name)
        for path, what in [*((i, "one of the inputs") for i in inputs), *claimed]:
            if is_url(path):
                continue
            p = Path(path).resolve()
            if p.parent == folder and regex.fullmatch(p.name):
                raise SadedupError(f"output {self.spec}: its part {p.name} is {what}; write it elsewhere")


def _parts_of(name: str) -> "re.Pattern[str]":
    """The file names a sharded output's name pattern makes, whatever the part count."""
    return re.compile("".join(re.escape(text) + (r"[-+ ]*\d+" if field is not None else "")
                              for text, field, _, _ in string.Formatter().parse(name)))


def _check_pattern(spec: str) -> None:
    name = spec.rstrip("/").rsplit("/", 1)[-1]
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(spec) if f is not None]
    except ValueError as e:
        raise SadedupError(f"output {spec}: not a valid name pattern ({e}); use e.g. part-{{shard:05d}}.jsonl") from None
    if any(f != "shard" for f in fields):
        other = next(f for f in fields if f != "shard")
        raise SadedupError(f"output {spec}: unknown field {{{other}}} in the name; only {{shard}} is filled in")
    if "{" in spec[:len(spec) - len(name)]:
        raise SadedupError(f"output {spec}: {{shard}} may be only in the file name, not in a folder")
    try:
        spec.format(shard=0)
    except (ValueError, IndexError, KeyError) as e:
        raise SadedupError(f"output {spec}: {{shard}} has a format that does not take a number ({e})") from None


def claimed(wf: Workflow, output: str | None) -> list[tuple[str, str]]:
    """The user's files a work folder reads or writes besides its inputs, each with what it is:
    the eval files, the clean eval rows' file and the export's output. One of them written
    over by another is lost (an eval set overwritten by the export, or by its own clean rows,
    is decontaminated against next time), so each of these outputs is checked against the
    others (the one being checked is left out by the caller)."""
    cfg = wf.decontaminate
    return [*((e, EVAL) for e in cfg.eval),
            *([(cfg.write_clean_eval, CLEAN_EVAL)] if cfg.write_clean_eval else []),
            *([(output, OUTPUT)] if output else [])]


EVAL = "one of the eval files (decontaminate.eval)"
CLEAN_EVAL = "the file of the clean eval rows (decontaminate.write_clean_eval)"
OUTPUT = "the work folder's output"


def output_of(spec: str | Path) -> Output:
    """The output a --output names; an empty one is refused here, where every command's output
    passes: as a Path it was "." and refused as "output .", naming no file the user gave."""
    if not isinstance(spec, (Url, Path)) and not spec.strip():
        raise SadedupError(f"output {spec!r} is empty: name a file ({formats.listed(output=True)})")
    return Output(str(without_file_scheme(spec)) if not isinstance(spec, Url) else spec.url)


def describe(path: str) -> dict:
    """What says a written part is still what export wrote: its size, and for an object its ETag."""
    p = as_path(path)
    st = p.stat()
    return {"path": str(p), "size": st.st_size, **({"etag": st.etag} if isinstance(p, Url) and st.etag else {})}


# The work folder that wrote a local output file, in an extended attribute of the file itself
# (it goes with the file's inode: nothing beside the output, nothing to go stale when the file
# is deleted or replaced by another program). A file system without user attributes keeps none,
# and an output there is not guarded.
OWNER_ATTR = "user.sadedup.workdir"


def mark_written(paths: list[str], root: Path) -> None:
    """Marks the local files export has just written as work folder `root`'s."""
    for p in paths:
        if not is_url(p):
            try:
                os.setxattr(p, OWNER_ATTR, str(Path(root).resolve()).encode())
            except OSError:
                pass  # no user attributes here (or the file went): the output is not guarded


def check_not_anothers(out: Output, root: Path) -> None:
    """Refuses an output that another work folder wrote and still records as its output: two
    folders given one --output replaced each other's file without a word. A folder that is gone,
    or records another output now, has let the path go."""
    if out.remote:
        return
    owner = owner_of(out.absolute().first)
    if owner is None:
        return  # no such file, or not written by sadedup (a file of the user's is theirs to replace)
    if owner == Path(root).resolve():
        return
    from .workspace import STATE

    try:
        recorded = json.loads((owner / STATE).read_text()).get("output")
    except (OSError, ValueError, AttributeError):
        return  # that folder is gone or no longer a work folder
    if recorded == out.absolute().spec:
        raise SadedupError(f"output {out.spec} is the output of work folder {owner}; write elsewhere, or give "
                           f"{owner} another --output first")


def written_by(workdir: str | Path, output: str | Path | None, *files: str) -> Callable[[str], bool]:
    """Whether a local absolute path is one sadedup wrote for work folder `workdir`: inside it;
    a file of its `output` or one of `files` (the clean eval rows) that carries its mark
    (mark_written), or a temporary or lock file beside one; a probe of a folder's writability.
    An input folder or glob that covers them is read without them, the first time and every
    time it is listed again: a glob matching the output, or a folder holding the work folder,
    saw its inputs change with the run's own writes. A user's file of the output's name has no
    mark: it stays an input (and the output over it is refused)."""
    root = Path(workdir).resolve()
    outs = [output_of(o) for o in (output, *files) if o and not is_url(str(o))]

    def test(path: str) -> bool:
        p = Path(path)
        if p.is_relative_to(root) or p.name.startswith(".sadedup-probe-"):
            return True
        return any(out.names(path) for out in outs) and (
            p.name.endswith((".partial", ".sadedup-lock")) or written_here(path, root))

    return test


def written_here(path: str | Path, root: Path) -> bool:
    """The local file carries work folder `root`'s mark (mark_written)."""
    return owner_of(path) == Path(root).resolve()


def owner_of(path: str | Path) -> Path | None:
    """The work folder whose mark a local file carries; None: no file, or not sadedup's."""
    try:
        return Path(os.getxattr(path, OWNER_ATTR).decode())
    except OSError:
        return None


@contextmanager
def output_lock(out: Path, name: str = "output") -> Iterator[None]:
    """One writer per output path, whichever work folder it comes from: the loser of two
    exports (or reports, `name`) to one file is told, instead of both writing one temporary
    file and renaming it over the other's."""
    lock = out.with_name(f".{out.name}.sadedup-lock")
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = os.pread(fd, 64, 0).decode(errors="replace").strip()
            os.close(fd)
            raise SadedupError(f"{name} {out} is being written by another sadedup run"
                               f"{f' (pid {other})' if other else ''}; wait for it or write elsewhere") from None
        # the holder unlinks the file as it lets go: a lock won on a file opened before that is
        # a lock on a name no one else sees (a third writer makes a new file and locks it too),
        # so it counts only while the name is still this file
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(lock))
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            lock.unlink(missing_ok=True)
    finally:
        os.close(fd)
