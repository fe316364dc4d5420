"""Tokenizers: text to token ids, and token spans back to character spans of the original text.

Specs (`substring.tokenizer`):
  bytes                  the UTF-8 bytes of the raw text (vocabulary 256, uint8)
  hf:PATH                a Hugging Face `tokenizers` JSON file
  sp:PATH                a sentencepiece .model file
  train:bpe:VOCAB        byte-level BPE trained on the corpus (tokenizers)
  train:unigram:VOCAB    unigram with byte fallback trained on the corpus (sentencepiece)

No special tokens are ever added. Ids are stored as uint16 when the vocabulary has at most
65,536 entries, else uint32.

Character spans. A removed token span [ts, te) becomes the character span of the text all of
whose tokens are removed: with per-token character extents [s_i, e_i) in the original text
(tokenizers report them through every normalizer), the cut is

    [max(s_ts, max_{i<ts} e_i),  min(e_{te-1}, min_{i>=te} s_i))

(empty when the bounds cross): the extent of the removed tokens, shrunk inward past every
character that a kept token also covers. For `bytes` this is exactly "shrink to UTF-8
character boundaries". The output is always the original text with these spans cut; text is
never rebuilt from tokens.

Only two numbers per token enter that formula: S_i = min_{j>=i} s_j and P_i = max_{j<=i} e_j
(both non-decreasing in i). A subword tokenizer computes the extents while it encodes, so the
tokenize stage keeps S and P beside the tokens (`CHARS_FILES`, see `pack_char_bounds`) and the
remove stage reads them back (`ShardChars`) instead of encoding the documents a second time.
"""
from __future__ import annotations

import hashlib
import io
import itertools
from pathlib import Path
from typing import Iterable, Protocol

import numpy as np

from . import native
from .errors import ConfigError


class Tokenizer(Protocol):
    spec: str
    vocab_size: int

    @property
    def dtype(self) -> np.dtype: ...

    def encode(self, texts: list[str]) -> list[np.ndarray]:
        """Token ids of each text."""
        ...

    def encode_offsets(self, texts: list[str]) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """(ids, char_start, char_end) of each text's tokens, offsets into the original text."""
        ...


def id_dtype(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16 if vocab_size <= 1 << 16 else np.uint32)


def shrink_to_chars(cstart: np.ndarray, cend: np.ndarray, ts: np.ndarray, te: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Character spans, for one document, of token spans [ts, te) (see the module docstring)."""
    n = len(cstart)
    ts = np.asarray(ts, dtype=np.int64)
    te = np.asarray(te, dtype=np.int64)
    if n == 0 or len(ts) == 0:
        return np.zeros(len(ts), np.int64), np.zeros(len(ts), np.int64)
    prefix_end = np.maximum.accumulate(cend.astype(np.int64))
    suffix_start = np.minimum.accumulate(cstart.astype(np.int64)[::-1])[::-1]
    prev_end = np.where(ts > 0, prefix_end[np.maximum(ts - 1, 0)], 0)
    next_start = np.where(te < n, suffix_start[np.minimum(te, n - 1)], np.iinfo(np.int64).max)
    a = np.maximum(suffix_start[ts], prev_end)
    b = np.minimum(prefix_end[te - 1], next_start)
    return a, np.maximum(a, b)


# Per shard of a subword tokenizer: chars.npy, uint8 (2, n): row 0 the deltas of S, row 1 those
# of P (module docstring), each from the token before in its document (from 0 at its first
# token); chars_x.npy, int64 (3, k): position, row and value of every delta of 255 or more
# (stored as 255 in chars.npy). Two bytes a token: a delta is one token's length in
# characters, nearly always under 255.
CHARS_FILES = ("chars.npy", "chars_x.npy")


def pack_char_bounds(cstart: np.ndarray, cend: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(deltas, exceptions) as stored in CHARS_FILES, for a run of documents whose tokens'
    character extents (within each document) are cstart/cend, `counts` tokens each.

    Vectorized over the whole run: each document's values are lifted by the extents of the
    documents before it, so one running maximum (and one reversed running minimum) over the
    run gives every document's own, the documents never mixing."""
    cstart = np.asarray(cstart, dtype=np.int64)
    cend = np.asarray(cend, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    n = len(cstart)
    if n == 0:
        return np.zeros((2, 0), np.uint8), np.zeros((3, 0), np.int64)
    if np.any(cstart < 0) or np.any(cend < cstart):
        raise ValueError("token character extents must have 0 <= start <= end")
    starts = np.zeros(len(counts), np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    full = counts > 0
    extent = np.zeros(len(counts), np.int64)
    extent[full] = np.maximum.reduceat(cend, starts[full])  # every value of a document is <= its extent
    base = np.zeros(len(counts), np.int64)
    np.cumsum(extent[:-1], out=base[1:])
    lift = np.repeat(base, counts)
    P = np.maximum.accumulate(cend + lift) - lift
    S = np.minimum.accumulate((cstart + lift)[::-1])[::-1] - lift
    first = starts[full]
    rows = []
    for v in (S, P):
        d = np.empty(n, np.int64)
        d[0] = v[0]
        np.subtract(v[1:], v[:-1], out=d[1:])
        d[first] = v[first]
        rows.append(d)
    deltas = np.stack(rows)
    big_row, big_pos = np.nonzero(deltas >= native.CHAR_ESCAPE)
    order = np.lexsort((big_row, big_pos))
    big_row, big_pos = big_row[order], big_pos[order]
    exceptions = np.stack([big_pos, big_row, deltas[big_row, big_pos]]).astype(np.int64)
    return np.minimum(deltas, native.CHAR_ESCAPE).astype(np.uint8), exceptions


class ShardChars:
    """The character bounds a subword tokenizer gave one shard's tokens (CHARS_FILES), read
    back to map token spans to character spans without encoding anything again."""

    def __init__(self, deltas: np.ndarray, exceptions: np.ndarray, doc_start: np.ndarray) -> None:
        self.deltas = deltas
        self.doc_start = np.asarray(doc_start, dtype=np.int64)
        self.exc = [(np.ascontiguousarray(exceptions[0][exceptions[1] == r]),
                     np.ascontiguousarray(exceptions[2][exceptions[1] == r])) for r in (0, 1)]

    @classmethod
    def load(cls, shard_dir: Path, doc_start: np.ndarray) -> "ShardChars | None":
        """The shard's bounds, or None when it has none (the bytes tokenizer keeps none)."""
        from .workspace import load_npy

        shard_dir = Path(shard_dir)
        if not all((shard_dir / f).exists() for f in CHARS_FILES):
            return None
        return cls(load_npy(shard_dir / CHARS_FILES[0]), np.load(shard_dir / CHARS_FILES[1]), doc_start)

    def values(self, row: int, pos: np.ndarray) -> np.ndarray:
        """S (row 0) or P (row 1) at shard positions `pos`, in any order."""
        pos = np.asarray(pos, dtype=np.int64)
        order = np.argsort(pos, kind="stable")
        out = np.empty(len(pos), np.int64)
        out[order] = native.char_values(np.ascontiguousarray(self.deltas[row]), self.doc_start[:-1],
                                        *self.exc[row], pos[order])
        return out

    def spans(self, doc: np.ndarray, ts: np.ndarray, te: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Character spans of token spans [ts, te) of documents `doc` (indices in the shard):
        shrink_to_chars, from the kept bounds."""
        doc = np.asarray(doc, dtype=np.int64)
        ts = np.asarray(ts, dtype=np.int64)
        te = np.asarray(te, dtype=np.int64)
        if not len(doc):
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        a0, ntok = self.doc_start[doc], self.doc_start[doc + 1] - self.doc_start[doc]
        if np.any(ts < 0) or np.any(te <= ts) or np.any(te > ntok):
            raise ValueError("token spans must have 0 <= start < end <= the document's tokens")
        S = self.values(0, np.concatenate([a0 + ts, a0 + np.minimum(te, ntok - 1)]))
        P = self.values(1, np.concatenate([a0 + np.maximum(ts - 1, 0), a0 + te - 1]))
        m = len(doc)
        a = np.maximum(S[:m], np.where(ts > 0, P[:m], 0))
        b = np.minimum(P[m:], np.where(te < ntok, S[m:], np.iinfo(np.int64).max))
        return a, np.maximum(a, b)


def char_spans(tok: "Tokenizer", texts_of, tokens: np.ndarray, doc_start: np.ndarray, doc_ids: np.ndarray,
               doc: np.ndarray, ts: np.ndarray, te: np.ndarray,
               chars: ShardChars | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Character spans (code points, within each document) of token spans in one shard.

    tokens/doc_start/doc_ids: the shard; doc, ts, te: the spans (document index in the shard,
    token offsets in the document); texts_of(doc_ids) -> the documents' texts. With `chars`
    (the shard's kept bounds, ShardChars.load) a subword tokenizer's spans are read from
    them; without, the documents that have spans are encoded again, and must give the same ids.
    """
    if isinstance(tok, ByteTokenizer):
        return tok.char_spans_in_shard(tokens, doc_start, doc, ts, te)
    if chars is not None:
        return chars.spans(doc, ts, te)
    cs = np.zeros(len(doc), np.int64)
    ce = np.zeros(len(doc), np.int64)
    docs = np.unique(doc)
    for at in range(0, len(docs), 512):
        chunk = docs[at:at + 512]
        for d, (ids, s, e) in zip(chunk.tolist(), tok.encode_offsets(texts_of(doc_ids[chunk]))):
            if not np.array_equal(ids, tokens[doc_start[d]:doc_start[d + 1]]):
                from .errors import SadedupError

                raise SadedupError(f"tokenizer {tok.spec} encodes document {int(doc_ids[d])} differently on a "
                                   f"second pass; it must be deterministic")
            m = doc == d
            cs[m], ce[m] = shrink_to_chars(s, e, ts[m], te[m])
    return cs, ce


def _byte_to_char(data: bytes) -> np.ndarray:
    """char_index[b] for every byte offset b in 0..len(data) (continuation bytes map forward)."""
    arr = np.frombuffer(data, dtype=np.uint8)
    out = np.zeros(len(arr) + 1, dtype=np.int64)
    np.cumsum((arr & 0xC0) != 0x80, out=out[1:])
    return out


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


class ByteTokenizer:
    spec = "bytes"
    vocab_size = 256
    dtype = np.dtype(np.uint8)

    def encode(self, texts: list[str]) -> list[np.ndarray]:
        return [np.frombuffer(t.encode("utf-8"), dtype=np.uint8) for t in texts]

    def encode_offsets(self, texts: list[str]):
        out = []
        for t in texts:
            data = t.encode("utf-8")
            b2c = _byte_to_char(data)
            pos = np.arange(len(data))
            start = b2c[pos] - ((np.frombuffer(data, np.uint8) & 0xC0) == 0x80)
            out.append((np.frombuffer(data, np.uint8), start, start + 1))
        return out

    def gather(self, texts: np.ndarray, text_offsets: np.ndarray, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Fast path: the documents' bytes straight from the ingest store, without decoding."""
        starts = text_offsets[doc_ids]
        lens = text_offsets[doc_ids + 1] - starts
        total = int(lens.sum())
        if len(doc_ids) and np.all(starts[1:] == starts[:-1] + lens[:-1]):
            return np.array(texts[starts[0]: starts[0] + total]), lens
        # a copy per document (native memcpy), not a gather by an index of 8 bytes per byte of
        # text: that index was most of a WriteShard task's CPU (0.63 of 1.28 s on 13 MB)
        out = np.empty(total, dtype=np.uint8)
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        native.gather_regions(texts, starts, starts + np.ascontiguousarray(lens, dtype=np.int64), out)
        return out, lens

    def char_spans_in_shard(self, tokens: np.ndarray, doc_start: np.ndarray, doc: np.ndarray,
                            tok_start: np.ndarray, tok_end: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Vectorized over a whole shard: spans shrunk to UTF-8 boundaries, as code-point offsets."""
        if len(doc) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        base = doc_start[doc]
        end_of_doc = doc_start[doc + 1]
        a = base + tok_start
        b = base + tok_end
        last = len(tokens) - 1

        def cont(x: np.ndarray) -> np.ndarray:  # a UTF-8 continuation byte at x
            return (tokens[np.minimum(x, last)] & 0xC0) == 0x80

        for _ in range(3):  # a UTF-8 character has at most 3 continuation bytes
            a = a + ((a < b) & cont(a))
        for _ in range(3):
            b = b - ((b > a) & (b < end_of_doc) & cont(b))
        b = np.where((b < end_of_doc) & cont(b), a, b)
        # in (document, start) order each document's text is read once (native.count_chars
        # goes on from the range before when the start is the same); b from a, not again
        # from the document's start
        order = np.lexsort((a, base))
        ca = np.empty(len(a), np.int64)
        ca[order] = native.count_chars(tokens, base[order], a[order])
        return ca, ca + native.count_chars(tokens, a, b)


class _ModelFile:
    """A tokenizer loaded from a model file: ids sized by its vocabulary."""

    path: Path
    vocab_size: int
    # encode_flat takes the documents' UTF-8 bytes instead of str (saves decoding them)
    takes_bytes = False

    def encode_flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """All the texts' ids concatenated, and the count per text."""
        encoded = self.encode(texts)
        counts = np.fromiter(map(len, encoded), dtype=np.int64, count=len(encoded))
        return (np.concatenate(encoded) if encoded else np.zeros(0, self.dtype)), counts

    def encode_flat_offsets(self, texts: list) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """encode_flat, with every token's character extent in its text: (ids, counts,
        char_start, char_end), from one encoding (the same as encode_offsets')."""
        out = self.encode_offsets(texts)
        counts = np.fromiter((len(o[0]) for o in out), dtype=np.int64, count=len(out))
        if not out:
            z = np.zeros(0, np.int64)
            return np.zeros(0, self.dtype), counts, z, z
        return (np.concatenate([o[0] for o in out]).astype(self.dtype, copy=False), counts,
                np.concatenate([o[1] for o in out]).astype(np.int64, copy=False),
                np.concatenate([o[2] for o in out]).astype(np.int64, copy=False))

    @property
    def dtype(self) -> np.dtype:
        return id_dtype(self.vocab_size)


class HFTokenizer(_ModelFile):
    def __init__(self, path: Path, spec: str | None = None) -> None:
        from tokenizers import Tokenizer as HF

        self.path = Path(path)
        try:
            self.tok = HF.from_file(str(self.path))
        except Exception as e:  # tokenizers raises plain Exception on a bad file
            raise ConfigError(f"substring.tokenizer: cannot load Hugging Face tokenizer {path}: {e}") from None
        self.spec = spec or f"hf:{path}"
        self.vocab_size = self.tok.get_vocab_size(with_added_tokens=True)

    def encode(self, texts: list[str]) -> list[np.ndarray]:
        encs = self.tok.encode_batch_fast(texts, add_special_tokens=False) \
            if hasattr(self.tok, "encode_batch_fast") else self.tok.encode_batch(texts, add_special_tokens=False)
        return [np.array(e.ids, dtype=self.dtype) for e in encs]

    def encode_offsets(self, texts: list[str]):
        out = []
        for t, e in zip(texts, self.tok.encode_batch(texts, add_special_tokens=False)):
            off = np.array(e.offsets, dtype=np.int64).reshape(-1, 2)
            out.append((np.array(e.ids, dtype=self.dtype), off[:, 0], off[:, 1]))
        return out

    def encode_flat_offsets(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        # one encode_batch gives ids and offsets; both are read flat, with no array per text
        encs = self.tok.encode_batch(texts, add_special_tokens=False)
        counts = np.fromiter((len(e.ids) for e in encs), dtype=np.int64, count=len(encs))
        total = int(counts.sum())
        ids = np.fromiter(itertools.chain.from_iterable(e.ids for e in encs), dtype=self.dtype, count=total)
        off = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(e.offsets for e in encs)),
                          dtype=np.int64, count=2 * total).reshape(-1, 2)
        return ids, counts, off[:, 0].copy(), off[:, 1].copy()


class SPTokenizer(_ModelFile):
    takes_bytes = True  # sentencepiece reads UTF-8 bytes as it reads str, ids alike

    def __init__(self, path: Path, spec: str | None = None, threads: int = 1) -> None:
        import sentencepiece as spm

        self.path = Path(path)
        try:
            self.sp = spm.SentencePieceProcessor(model_file=str(self.path))
        except Exception as e:
            raise ConfigError(f"substring.tokenizer: cannot load sentencepiece model {path}: {e}") from None
        self.spec = spec or f"sp:{path}"
        self.vocab_size = self.sp.get_piece_size()
        self.threads = threads

    def encode(self, texts: list[str]) -> list[np.ndarray]:
        ids = self.sp.encode(texts, out_type=int, num_threads=self.threads)
        return [np.array(i, dtype=self.dtype) for i in ids]

    def encode_flat(self, texts: list[str]) -> tuple[np.ndarray, np.ndarray]:
        ids = self.sp.encode(texts, out_type=int, num_threads=self.threads)
        # one pass over every id of the batch, without an array per document
        counts = np.fromiter(map(len, ids), dtype=np.int64, count=len(ids))
        return np.fromiter(itertools.chain.from_iterable(ids), dtype=self.dtype, count=int(counts.sum())), counts

    def encode_offsets(self, texts: list):
        """texts may be str or their UTF-8 bytes (as encode_flat takes them)."""
        out = []
        protos = self.sp.encode(texts, out_type="serialized_proto", num_threads=self.threads)
        for t, proto in zip(texts, protos):
            ids, begin, end = native.spm_pieces(proto)
            b2c = _byte_to_char(t if isinstance(t, bytes) else t.encode("utf-8"))
            out.append((ids.astype(self.dtype), b2c[begin], b2c[end]))
        return out


def parse_spec(spec: str) -> tuple[str, str]:
    """('bytes', ''), ('hf', path), ('sp', path), ('train', 'bpe:VOCAB')."""
    if spec == "bytes":
        return "bytes", ""
    kind, _, rest = spec.partition(":")
    if kind in ("hf", "sp") and rest:
        return kind, rest
    if kind == "train":
        algo, _, vocab = rest.partition(":")
        if algo in ("bpe", "unigram") and vocab.isdigit():
            if int(vocab) < 260:
                raise ConfigError(f"substring.tokenizer {spec!r}: a trained vocabulary needs at least 260 entries "
                                  f"(256 bytes and a few more)")
            return "train", rest
    raise ConfigError(f"substring.tokenizer {spec!r}: expected bytes, hf:PATH, sp:PATH, train:bpe:VOCAB or "
                      f"train:unigram:VOCAB")


def load_tokenizer(spec: str, threads: int = 1, trained: str | Path | None = None) -> Tokenizer:
    """The tokenizer for a spec; `trained` is the model file a train: spec produced."""
    kind, arg = parse_spec(spec)
    if kind == "bytes":
        return ByteTokenizer()
    if kind == "train":
        if trained is None:
            raise ConfigError(f"substring.tokenizer {spec!r} has not been trained yet: run `sadedup tokenize`")
        trained = Path(trained)
        return HFTokenizer(trained, spec) if trained.suffix == ".json" else SPTokenizer(trained, spec, threads)
    path = Path(arg).expanduser()
    if not path.is_file():
        raise ConfigError(f"substring.tokenizer: no such file {path}")
    return HFTokenizer(path) if kind == "hf" else SPTokenizer(path, threads=threads)


def model_digest(spec: str) -> str:
    """What the tokens of an hf:/sp: spec depend on: its model file's bytes. Read without
    loading the model, since every downstream stage key asks for it."""
    kind, arg = parse_spec(spec)
    if kind not in ("hf", "sp"):
        return ""
    path = Path(arg).expanduser()
    if not path.is_file():
        raise ConfigError(f"substring.tokenizer: no such file {path}")
    return _file_digest(path)


def check_spec(spec: str) -> None:
    """Refuses a tokenizer that cannot load, before any work."""
    kind, _ = parse_spec(spec)
    if kind in ("hf", "sp"):
        load_tokenizer(spec)


def train(spec: str, texts: Iterable[str], out_dir: Path, threads: int = 1) -> Path:
    """Trains the tokenizer a train: spec names on `texts`; returns the saved model file."""
    _, arg = parse_spec(spec)
    algo, vocab = arg.split(":")
    out_dir.mkdir(parents=True, exist_ok=True)
    if algo == "bpe":
        from tokenizers import Tokenizer as HF
        from tokenizers import decoders, models, pre_tokenizers, trainers

        tok = HF(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=int(vocab), initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      show_progress=False)
        tok.train_from_iterator(texts, trainer)
        path = out_dir / f"bpe_{vocab}.json"
        tmp = path.with_name(path.name + ".tmp")
        tok.save(str(tmp))
        tmp.replace(path)
        return path
    import sentencepiece as spm

    # sentencepiece trains on lines of at most max_sentence_length bytes, read from a file
    sample = out_dir / "sample.txt"
    with open(sample, "w", encoding="utf-8") as f:
        for t in texts:
            for line in t.splitlines():
                if line.strip():
                    f.write(line[:4000] + "\n")
    model = None
    # a small vocabulary cannot hold every character a large coverage requires; byte
    # fallback covers the rest, so give up coverage before giving up
    for coverage in (0.9995, 0.999, 0.995, 0.98):  # sentencepiece accepts no less than 0.98
        out = io.BytesIO()
        try:
            spm.SentencePieceTrainer.train(input=str(sample), model_writer=out, vocab_size=int(vocab),
                                           model_type="unigram", byte_fallback=True, hard_vocab_limit=False,
                                           character_coverage=coverage, num_threads=threads, minloglevel=2,
                                           bos_id=-1, eos_id=-1, unk_id=0, input_sentence_size=2_000_000,
                                           shuffle_input_sentence=True, max_sentence_length=16384)
        except RuntimeError as e:
            if "required_chars" in str(e):
                continue
            raise ConfigError(f"substring.tokenizer {spec}: sentencepiece could not train: {e}") from None
        model = out.getvalue()
        break
    sample.unlink()
    if model is None:
        raise ConfigError(f"substring.tokenizer {spec}: the corpus has more distinct characters than a vocabulary "
                          f"of {vocab} can hold; raise VOCAB")
    path = out_dir / f"unigram_{vocab}.model"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(model)
    tmp.replace(path)
    return path
