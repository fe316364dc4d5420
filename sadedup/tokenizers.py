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


def char_spans(tok: "Tokenizer", texts_of, tokens: np.ndarray, doc_start: np.ndarray, doc_ids: np.ndarray,
               doc: np.ndarray, ts: np.ndarray, te: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Character spans (code points, within each document) of token spans in one shard.

    tokens/doc_start/doc_ids: the shard; doc, ts, te: the spans (document index in the shard,
    token offsets in the document); texts_of(doc_ids) -> the documents' texts. Subword
    tokenizers re-encode only the documents that have spans, and must give the same ids.
    """
    if isinstance(tok, ByteTokenizer):
        return tok.char_spans_in_shard(tokens, doc_start, doc, ts, te)
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
        dest = np.concatenate(([0], np.cumsum(lens)[:-1]))
        idx = np.repeat(starts - dest, lens) + np.arange(total)
        return texts[idx], lens

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
        return native.count_chars(tokens, base, a), native.count_chars(tokens, base, b)


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

    def encode_offsets(self, texts: list[str]):
        from . import native

        out = []
        protos = self.sp.encode(texts, out_type="serialized_proto", num_threads=self.threads)
        for t, proto in zip(texts, protos):
            ids, begin, end = native.spm_pieces(proto)
            b2c = _byte_to_char(t.encode("utf-8"))
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
