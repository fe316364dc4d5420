"""Small tokenizers built in the tests, one per kind sadedup supports."""
from __future__ import annotations

import io
import json
from pathlib import Path

TRAIN_TEXT = [
    "The quick brown fox jumps over the lazy dog. Über café naïve résumé.",
    "東京は日本の首都です。北京和上海是中国的城市。",
    "Emoji 🚀🔥👍🏽 and flags 🇫🇷 mixed with text.",
    "Combining: e\u0301 a\u0308 o\u0303; precomposed: é ä õ. ﬁ ligature, Ⅻ numeral, ＡＢＣ fullwidth.",
    "Right to left: שלום עולם and مرحبا بالعالم.",
    "Whitespace   runs\t\tand\nnewlines\n\n  here.",
    "averyveryverylongwordwithoutanyspacesatallthatgoesonandon " * 3,
] * 20


def hf_byte_bpe(path: Path) -> Path:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TRAIN_TEXT, trainers.BpeTrainer(vocab_size=400, show_progress=False,
                                                            initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    tok.save(str(path))
    return path


def hf_normalizing(path: Path) -> Path:
    """NFKC + lower-casing + Metaspace (an added prefix space), unknown characters as [UNK]."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.train_from_iterator(TRAIN_TEXT, trainers.BpeTrainer(vocab_size=300, special_tokens=["[UNK]"],
                                                            show_progress=False))
    tok.save(str(path))
    return path


def hf_wordlevel_big(path: Path, n: int = 70_100) -> Path:
    """A word-level tokenizer of more than 65,535 entries: ids need uint32."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"[UNK]": 0}
    vocab.update({f"w{i}": i for i in range(1, n)})
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(path))
    return path


def sp_model(path: Path, model_type: str = "unigram") -> Path:
    """sentencepiece with its default nmt_nfkc normalization and byte fallback."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(TRAIN_TEXT), model_writer=out, vocab_size=400,
                                   model_type=model_type, byte_fallback=True, hard_vocab_limit=False,
                                   minloglevel=2, bos_id=-1, eos_id=-1, character_coverage=1.0)
    path.write_bytes(out.getvalue())
    return path


def encode_with_library(spec: str, texts: list[str]) -> list[tuple[list[int], list[tuple[int, int]]]]:
    """Token ids and character offsets straight from the tokenizer library (the test's truth)."""
    kind, path = spec.split(":", 1)
    out = []
    if kind == "hf":
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(path)
        for t in texts:
            e = tok.encode(t, add_special_tokens=False)
            out.append((list(e.ids), [tuple(o) for o in e.offsets]))
        return out
    import sentencepiece as spm

    sp = spm.SentencePieceProcessor(model_file=path)
    for t in texts:
        ids = sp.encode(t)
        # byte offsets of pieces into the original text, through the library's own proto
        proto = sp.encode(t, out_type="serialized_proto")
        offs = _proto_offsets(proto)
        b2c = {}
        at = 0
        for i, ch in enumerate(t):
            b2c[at] = i
            at += len(ch.encode())
        b2c[at] = len(t)
        out.append((ids, [(b2c[a], b2c[b]) for a, b in offs]))
    return out


def _proto_offsets(buf: bytes) -> list[tuple[int, int]]:
    """A plain-Python protobuf reader for SentencePieceText.pieces[].begin/end (test truth)."""

    def varint(b, i):
        v = shift = 0
        while True:
            x = b[i]
            i += 1
            v |= (x & 0x7F) << shift
            shift += 7
            if not x & 0x80:
                return v, i

    def fields(b):
        i = 0
        while i < len(b):
            key, i = varint(b, i)
            f, w = key >> 3, key & 7
            if w == 0:
                v, i = varint(b, i)
            elif w == 2:
                n, i = varint(b, i)
                v, i = b[i:i + n], i + n
            elif w == 5:
                v, i = b[i:i + 4], i + 4
            else:
                v, i = b[i:i + 8], i + 8
            yield f, v

    pieces = []
    for f, v in fields(buf):
        if f == 2:
            d = dict(fields(v))
            pieces.append((d.get(4, 0), d.get(5, 0)))
    return pieces
