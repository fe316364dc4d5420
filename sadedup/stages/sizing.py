"""Shard size from the memory budget.

Peak memory of the per-shard build, per token of the shard (measured with pydivsufsort;
libsais, which sorts one-byte tokens since, peaks the same: 177 MB for a 29.5M-token shard):
the tokens, the suffix array (4 or 8 bytes), libdivsufsort's own input copy for wider
tokens (pydivsufsort sorts 2- and 4-byte tokens as big-endian bytes, so its suffix array
has one entry per byte before it is filtered), the LCP array and its temporary.
Every worker builds one shard at a time, so the budget is shared by the workers.
"""
from __future__ import annotations

from ..config import Workflow
from ..errors import ConfigError

# bytes of memory per token at the peak of a shard build (int32 indexes)
BUILD_BYTES_PER_TOKEN = {1: 14, 2: 36, 4: 64}
# anonymous memory of one started process (interpreter, numpy, sadedup): the driver and
# every worker pay it before any shard is built (measured: ~44 MB RssAnon; rounded up)
PROCESS_BASELINE = 64 << 20


def usable_budget(wf: Workflow) -> int:
    """The budget left for data once the driver and the workers have started."""
    need = (wf.run.n_workers + 1) * PROCESS_BASELINE
    left = wf.run.budget_bytes - need
    if left < (8 << 20):
        raise ConfigError(f"run.memory_budget={wf.run.memory_budget} is too small: {wf.run.n_workers} worker(s) and "
                          f"the driver need {need >> 20} MB before any data; give at least {(need >> 20) + 8}MB "
                          f"or lower run.workers")
    return left


def token_width(wf: Workflow) -> int:
    """Upper bound of the token width for the configured tokenizer, for planning."""
    return 1 if wf.substring.tokenizer == "bytes" else 4


def max_shard_tokens(wf: Workflow) -> int:
    per_token = BUILD_BYTES_PER_TOKEN[token_width(wf)]
    return max(1, usable_budget(wf) // (per_token * wf.run.n_workers))


# Suffix sorting, the LCP pass and the windows pass are bound by memory latency: per token
# they cost about 1.3x more for a shard of 134 M bytes than for one of 67 M (measured), while
# the merge of a few more shards is cheap. So automatic shards stop growing here even when the
# budget would allow more (256 MB of web text: 25.7 s in 4 shards, 32.2 s in 2).
FAST_SHARD_TOKENS = 1 << 26


def shard_tokens(wf: Workflow) -> int:
    """The shard size to use: the explicit setting when the budget allows it, else derived."""
    limit = max_shard_tokens(wf)
    explicit = wf.substring.shard_tokens
    if explicit is not None:
        if explicit > limit:
            raise ConfigError(f"substring.shard_tokens={explicit} needs more memory than run.memory_budget="
                              f"{wf.run.memory_budget} allows with {wf.run.n_workers} worker(s) "
                              f"(at most {limit} tokens per shard); lower it or raise the budget")
        return explicit
    return min(limit, FAST_SHARD_TOKENS)


# Below this many tokens a shard is not worth a process and a merge stream of its own.
MIN_SPLIT_TOKENS = 4 << 20
# Planning estimate of UTF-8 bytes per subword token (BPE on English is about 4).
BYTES_PER_SUBWORD = 4


def split_shard_tokens(wf: Workflow, corpus_bytes: int | None) -> int:
    """Tokens per shard for a corpus of `corpus_bytes` bytes of text: the budget's size, but
    no larger than one shard per worker, so that a corpus smaller than the budget still
    keeps every worker sorting. An explicit substring.shard_tokens is used as it is."""
    size = shard_tokens(wf)
    if wf.substring.shard_tokens is not None or not corpus_bytes or wf.run.n_workers < 2:
        return size
    tokens = corpus_bytes // (1 if wf.substring.tokenizer == "bytes" else BYTES_PER_SUBWORD)
    # shards end at document ends: 5% slack keeps the last document from opening one more
    return min(size, max(int(tokens / wf.run.n_workers * 1.05) + 1, MIN_SPLIT_TOKENS))


# Percent of shard_tokens a balanced plan leaves free: its cuts fall at the document end
# nearest each share, up to half a document past it, and one clamped at the size would move
# its tokens to the next shard and the last over the size (one more shard).
BALANCE_SLACK = 2


def balanced_shards(wf: Workflow, total_tokens: int) -> int:
    """How many shards to cut `total_tokens` into when every document's count is known up
    front (the bytes tokenizer, automatic size): as few as shard_tokens allows, rounded up
    to a multiple of the workers, so that every worker builds the same number of shards of
    the same size (15 shards on 2 workers made one of them build 8 while the other waited
    after 7); never below MIN_SPLIT_TOKENS a shard, never fewer than one. Shares come
    BALANCE_SLACK percent under the size, so that no cut has to be pulled back to it."""
    size = shard_tokens(wf) * (100 - BALANCE_SLACK) // 100
    workers = max(wf.run.n_workers, 1)
    least = max(1, -(-total_tokens // max(size, 1)))  # what the budget needs
    even = -(-least // workers) * workers
    if not total_tokens:
        return 1
    if total_tokens // even >= MIN_SPLIT_TOKENS or size < MIN_SPLIT_TOKENS:
        return even  # (the second: the budget alone makes shards under the floor)
    return max(least, total_tokens // MIN_SPLIT_TOKENS)


def max_document_tokens(wf: Workflow) -> int:
    """A document longer than this cannot be built in memory even alone in its shard."""
    per_token = BUILD_BYTES_PER_TOKEN[token_width(wf)]
    return max(1, usable_budget(wf) // per_token)


# documents of a MinHash chunk below which a chunk is not worth a task
MIN_CHUNK_DOCS = 1024


def minhash_doc_bytes(wf: Workflow) -> int:
    """Memory one document costs a signature task: its signature (uint32 per permutation)
    and band hashes (uint64 per band)."""
    return 4 * wf.minhash.num_perm + 8 * wf.minhash.bands


def minhash_chunk_docs(wf: Workflow) -> int:
    """Documents per signature task: the stage's chunk, fewer when a worker's share of the
    budget (half of it, the rest for the text) would not hold their signatures."""
    from .minhash import CHUNK_DOCS

    share = usable_budget(wf) // max(wf.run.n_workers, 1) // 2
    return max(MIN_CHUNK_DOCS, min(CHUNK_DOCS, share // minhash_doc_bytes(wf)))


def check_budget(wf: Workflow) -> None:
    """Every setting whose memory grows with it, against the budget, before any work."""
    shard_tokens(wf)
    if "minhash" in wf.stages:
        need = MIN_CHUNK_DOCS * minhash_doc_bytes(wf)
        share = usable_budget(wf) // max(wf.run.n_workers, 1) // 2
        if need > share:
            raise ConfigError(f"minhash.num_perm={wf.minhash.num_perm} needs {need >> 20} MB per worker for the "
                              f"signatures of {MIN_CHUNK_DOCS} documents, more than run.memory_budget="
                              f"{wf.run.memory_budget} allows with {wf.run.n_workers} worker(s) ({share >> 20} MB); "
                              f"lower it or raise the budget")
