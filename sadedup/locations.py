"""Where inputs and outputs live: local paths, or fsspec URLs (s3://, gs://, hf://, ...).

The readers and writers use the few pathlib calls below (`open`, `stat`, `read_bytes`,
`name`, `suffixes`, `resolve`); a `Url` answers them through fsspec, so one code path reads
a local file and an object in a bucket. The work folder is always a local (or shared POSIX)
path: only inputs and outputs may be URLs.

Credentials and endpoints come from where fsspec and its backends look: the environment
(`AWS_ACCESS_KEY_ID`, `AWS_ENDPOINT_URL`, `HF_TOKEN`, ...), their config files, and fsspec's
own config (`~/.config/fsspec/*.json`). A missing bucket, refused credentials or an
unreachable endpoint is one line naming the URL.

Change detection: a local file is its size and modification time; an object its size and
ETag (or, where a store has none, its modification time), as `fs.info` reports them.
"""
from __future__ import annotations

import glob as globmod
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import SadedupError

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.\-]*)://")
GLOB_CHARS = "*?["


def scheme(s: str | os.PathLike) -> str | None:
    """The URL scheme of `s` ("s3", "hf", ...), or None for a local path (file:// included)."""
    m = _URL.match(str(s))
    if not m or m.group(1).lower() == "file":
        return None
    return m.group(1).lower()


def without_file_scheme(s: str | os.PathLike) -> str | os.PathLike:
    """A `file://` URL as the local path it names (file:///tmp/a.jsonl is /tmp/a.jsonl); any
    other value as it is. A Path would fold its `//` into the name ./file:/tmp/a.jsonl."""
    if isinstance(s, str) and s[:7].lower() == "file://":
        return s[7:]
    return s


def is_url(s: str | os.PathLike) -> bool:
    return scheme(s) is not None


def has_glob(s: str | os.PathLike) -> bool:
    return any(c in str(s) for c in GLOB_CHARS)


def _filesystem(url: str):
    try:
        import fsspec
    except ImportError:  # pragma: no cover - fsspec comes with the dependencies
        raise SadedupError(f"{url}: reading URLs needs fsspec (pip install fsspec)") from None
    try:
        return fsspec.core.url_to_fs(url)
    except (ImportError, ValueError) as e:
        how = {"s3": "pip install 'sadedup[s3]'", "gs": "pip install gcsfs", "gcs": "pip install gcsfs",
               "az": "pip install adlfs", "abfs": "pip install adlfs"}.get(scheme(url) or "",
                                                                         "install the fsspec backend for it")
        raise SadedupError(f"{url}: no file system for {scheme(url)}:// ({e}); {how}") from None


def remote_error(url: str, e: BaseException, doing: str = "cannot read it") -> SadedupError:
    """One line for what went wrong with a URL: missing, refused, unreachable."""
    if isinstance(e, FileNotFoundError):
        said = str(e).lower()
        why = "the bucket does not exist" if "bucket" in said else "no such object"
        return SadedupError(f"{url}: {why}")
    if isinstance(e, PermissionError):
        return SadedupError(f"{url}: access denied ({e or 'forbidden'}); check the credentials "
                            f"(AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, or the store's own)")
    name = type(e).__name__
    if "Credentials" in name:
        return SadedupError(f"{url}: no credentials found ({e}); set them in the environment or the store's config")
    if "Connect" in name or "Endpoint" in name or isinstance(e, (ConnectionError, TimeoutError)):
        return SadedupError(f"{url}: the store cannot be reached ({e}); check AWS_ENDPOINT_URL or the network")
    return SadedupError(f"{url}: {doing} ({name}: {e})")


@dataclass(frozen=True)
class Stat:
    st_size: int
    st_mtime_ns: int
    etag: str | None


class Url:
    """An object behind an fsspec URL, answering the pathlib calls the readers make."""

    def __init__(self, url: str, fs: Any = None, path: str | None = None) -> None:
        self.url = url
        if fs is None:
            fs, path = _filesystem(url)
        self.fs, self.fspath = fs, path

    # ---- names
    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"Url({self.url!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Url) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def suffixes(self) -> list[str]:
        return Path(self.name).suffixes

    @property
    def suffix(self) -> str:
        return Path(self.name).suffix

    def resolve(self) -> "Url":
        return self

    def with_name(self, name: str) -> "Url":
        return Url(self.url.rstrip("/").rsplit("/", 1)[0] + "/" + name)

    # ---- the object
    def _info(self) -> dict:
        try:
            return self.fs.info(self.fspath)
        except Exception as e:
            raise remote_error(self.url, e) from None

    def stat(self) -> Stat:
        info = self._info()
        mtime = info.get("mtime") or info.get("LastModified") or info.get("last_modified") or info.get("updated")
        if hasattr(mtime, "timestamp"):
            mtime = mtime.timestamp()
        try:
            ns = int(float(mtime) * 1e9) if mtime is not None else 0
        except (TypeError, ValueError):
            ns = 0
        etag = info.get("ETag") or info.get("etag") or info.get("md5Hash") or info.get("blob_id")
        return Stat(int(info.get("size") or 0), ns, str(etag).strip('"') if etag else None)

    def exists(self) -> bool:
        try:
            return bool(self.fs.exists(self.fspath))
        except Exception as e:
            raise remote_error(self.url, e) from None

    def is_file(self) -> bool:
        try:
            return self.fs.isfile(self.fspath)
        except Exception as e:
            raise remote_error(self.url, e) from None

    def is_dir(self) -> bool:
        try:
            return self.fs.isdir(self.fspath)
        except Exception as e:
            raise remote_error(self.url, e) from None

    def open(self, mode: str = "rb") -> BinaryIO:
        try:
            return self.fs.open(self.fspath, mode)
        except Exception as e:
            raise remote_error(self.url, e, "cannot open it") from None

    def read_bytes(self) -> bytes:
        try:
            return self.fs.cat_file(self.fspath)
        except Exception as e:
            raise remote_error(self.url, e) from None


AnyPath = Path | Url


def as_path(s: str | os.PathLike) -> AnyPath:
    """A local Path, or a Url for an fsspec URL."""
    if isinstance(s, Url):
        return s
    return Url(str(s)) if is_url(s) else Path(without_file_scheme(s))


def local_folder(value: str, what: str = "work folder") -> Path:
    """A work folder (or a reference, which is one) as given on the command line: a local path,
    `file://` taken as its path. Any other URL is refused here, before a Path folds its `//`:
    `--workdir s3://bucket/w` made the local folder ./s3:/bucket/w and ran there."""
    if is_url(value):
        raise SadedupError(f"{what} {value}: a URL; a work folder is a local (or shared POSIX) path "
                           f"(only --input and --output may be URLs)")
    return Path(without_file_scheme(value))


def hidden(name: str) -> bool:
    """A file or folder name left out of an input folder's listing (hidden_below)."""
    return name.startswith(".")


def hidden_below(path: str, top: str) -> bool:
    """`path` (under `top`, both with "/") has a name starting with "." below `top`: a
    version-control folder (.git), an editor's swap file, a tool's half-written .tmp file.
    Such entries of an input folder are left out of its listing, as `ls` and a glob's `*` do
    (Python's glob and the shell never match them), so a folder and `folder/**/*` name the same
    files, and a commit in a folder under version control does not change the run's inputs."""
    rel = path[len(top):] if path.startswith(top) else path
    return any(hidden(part) for part in rel.split("/") if part)


def _literal_prefix(pattern: str) -> str:
    """The components of a glob before its first wildcard one, with a trailing "/"."""
    parts = pattern.split("/")
    n = next((i for i, p in enumerate(parts) if any(c in p for c in GLOB_CHARS)), len(parts))
    return "/".join(parts[:n]) + "/"


def expand_glob(pattern: str) -> list[AnyPath]:
    """The files a glob names, sorted (local or remote); [] when none. A wildcard never
    matches a name starting with "." (hidden_below), on a remote store as on this machine."""
    pattern = without_file_scheme(pattern)
    if not is_url(pattern):
        return [Path(p) for p in sorted(globmod.glob(pattern, recursive=True)) if os.path.isfile(p)]
    fs, path = _filesystem(pattern)
    protocol = scheme(pattern)
    top = _literal_prefix(path)
    try:
        found = sorted(p for p, info in fs.glob(path, detail=True).items()
                       if info.get("type") != "directory" and not hidden_below(p, top))
        if not found:  # nothing matched: say so, unless the bucket itself is missing or refused
            root = path.split("/", 1)[0]
            fs.ls(root)
    except Exception as e:
        raise remote_error(pattern, e, "cannot list it") from None
    return [Url(_unstrip(fs, protocol, p), fs, p) for p in found]


def list_folder(url: Url) -> list[Url]:
    """Every object under a remote folder (prefix), sorted by path, but those with a name
    starting with "." below it (hidden_below)."""
    top = url.fspath.rstrip("/") + "/"
    try:
        found = sorted(p for p in url.fs.find(url.fspath) if not hidden_below(p, top))
    except Exception as e:
        raise remote_error(url.url, e, "cannot list it") from None
    return [Url(_unstrip(url.fs, scheme(url.url), p), url.fs, p) for p in found]


def _unstrip(fs: Any, protocol: str | None, path: str) -> str:
    """The URL of a path an fsspec file system returned (without its protocol)."""
    try:
        return fs.unstrip_protocol(path)
    except Exception:
        return f"{protocol}://{path}"


def upload(local: Path, url: Url) -> None:
    """A finished local file to its URL (an object store makes an object whole at the end of
    the upload: no reader sees half of it)."""
    try:
        url.fs.put_file(str(local), url.fspath)
    except Exception as e:
        raise remote_error(url.url, e, "cannot write it") from None


def check_writable(url: Url) -> None:
    """Before any work: the output's bucket (or folder) exists and takes a write."""
    parent = url.fspath.rstrip("/").rsplit("/", 1)[0] if "/" in url.fspath else url.fspath
    probe = f"{parent}/.sadedup-probe-{os.getpid()}"
    try:
        url.fs.pipe_file(probe, b"")
        url.fs.rm_file(probe)
    except Exception as e:
        raise remote_error(f"output {url.url}", e, "cannot write there") from None
