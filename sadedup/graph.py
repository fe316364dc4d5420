"""The stages as one declared graph: the only place that says which stages exist, in which
order, what each reads and when a workflow runs it.

Every other part derives from it: the workflow's `stages` list (config), the pipeline's run
order and its stage commands, `status`, `export`'s check that nothing it writes is stale,
and the take-back of decisions of stages a workflow no longer lists.

A stage's key chains the stamps (recorded key and output checksum) of the stages it reads,
so rerunning a stage with other settings, or rebuilding an artifact differently, changes
the key of everything downstream: it is then stale until it runs again. A stage that is
disabled is read through: minhash reads what exact decided, or ingest's documents when the
workflow lists no exact stage.

Adding a stage is one module with its Stage class, one Node here, and its config section.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .config import Workflow
    from .stages.base import Stage


@dataclass(frozen=True)
class Node:
    name: str
    cls: str                                   # "module:Class" under sadedup.stages, imported on first use
    reads: tuple[str, ...] = ()                # stages whose results it reads (a disabled one is read through)
    method: str | None = None                  # the workflow `stages` entry that runs it (None: every workflow)
    reason: str | None = None                  # documents.reason it writes on the documents it drops
    decides: bool = False                      # writes decisions (documents, clusters, spans)
    when: Callable[["Workflow"], bool] | None = None  # a setting that turns it off inside its method
    folders: tuple[str, ...] = ()              # what it writes at the top of the work folder
    summary: str = ""
    spans: bool = False                        # a span stage: cuts spans out of the documents that reach it
    doc_columns: tuple[str, ...] = ()          # documents columns it fills (NULL again when taken back)
    owns: tuple[str, ...] = ()                 # tables it alone writes (emptied when taken back)
    default: bool = False                      # its method is in a workflow that names no `stages`
    help: str = ""                             # for a stage whose command the CLI makes from here: its --help

    def stage(self) -> "Stage":
        module, _, name = self.cls.partition(":")
        return getattr(importlib.import_module(f"sadedup.stages.{module}"), name)()


NODES: tuple[Node, ...] = (
    Node("ingest", "ingest:Ingest", folders=("ingest", "ingest.partial"), summary="inputs read into documents, texts and input_errors"),
    Node("exact", "exact:Exact", ("ingest",), method="exact", reason="exact_duplicate", decides=True,
         folders=("exact",), summary="exact duplicate documents dropped", default=True),
    Node("minhash", "minhash:MinHash", ("exact",), method="minhash", reason="near_duplicate", decides=True,
         folders=("minhash",), summary="near-duplicate documents dropped", default=True),
    # the span stages, each deciding on what the one before it left: lines, passages, decontaminate, substring
    Node("lines", "lines:Lines", ("minhash",), method="lines", reason="line_coverage", decides=True, spans=True,
         folders=("lines",), summary="repeated lines cut, documents over drop_fraction dropped",
         help="Cut repeated lines out of the documents that reach it. A line's key is its text without the "
              "newline, stripped and NFC-normalized; empty keys never match. lines.keep = first (C4): a line "
              "goes when its key occurred earlier in a surviving document, and a document with more than "
              "lines.drop_fraction of its characters cut is dropped (its lines then count for no later one); "
              "lines.keep = none: a line goes from every document when its key is in lines.min_docs "
              "documents or more.\n\nExample: sadedup lines work/ --set lines.keep=none --set lines.min_docs=3"),
    Node("passages", "passages:Passages", ("lines",), method="passages", reason="passage_coverage", decides=True,
         spans=True, folders=("passages",), summary="near-duplicate passages cut, documents over drop_fraction dropped",
         help="Cut near-duplicate passages out of the documents that reach it: chunks of passages.words "
              "words (\\w+, case-folded) every passages.stride words, MinHash-LSH over their word n-grams, "
              "a chunk that verifies at passages.threshold against an earlier chunk of a surviving document "
              "is cut, and a document with more than passages.drop_fraction of its characters cut is "
              "dropped.\n\nExample: sadedup passages work/ --set passages.threshold=0.7"),
    Node("decontaminate", "decontaminate:Decontaminate", ("passages",), method="decontaminate",
         reason="contamination", decides=True, spans=True, owns=("eval_items",), folders=("decontaminate",),
         summary="text overlapping the eval sets cut, documents over drop_fraction dropped",
         help="Cut text that shares word n-grams with evaluation sets: every n-gram of a document "
              "(decontaminate.ngram words, 13; words are \\w+ matches compared case-folded) equal to one of "
              "an eval text (each of decontaminate.text_fields of each row of the decontaminate.eval files) "
              "is struck, widened by decontaminate.margin characters, and documents over drop_fraction "
              "struck are dropped. Each eval text's n-grams found, overlap and verdict (contaminated at "
              "contaminated_at, partial, clean) go to the eval_items table; --write-clean-eval FILE writes "
              "the eval rows judged clean.\n\n"
              "Example: sadedup decontaminate work/ --set decontaminate.eval=mmlu_test.jsonl "
              "--write-clean-eval mmlu_clean.jsonl"),
    Node("tokenize", "tokenize:Tokenize", ("decontaminate",), method="substring",
         folders=("substring", "tokenizers"), summary="survivors tokenized into shards", default=True),
    Node("candidates", "candidates:Candidates", ("tokenize",), method="substring",
         when=lambda wf: wf.substring.prefilter, summary="text that can hold a repeated window"),
    Node("build", "build:Build", ("candidates", "tokenize"), method="substring",
         summary="suffix and LCP arrays per shard"),
    Node("repeats", "repeats:Repeats", ("build", "tokenize"), method="substring",
         summary="groups of equal windows across shards"),
    Node("remove", "remove:Remove", ("repeats", "tokenize"), method="substring", reason="substring_coverage",
         decides=True, summary="repeated passages cut, documents over drop_fraction dropped", spans=True,
         doc_columns=("n_tokens", "removed_tokens", "coverage")),
    Node("export", "export:Export", ("remove",), folders=("export.partial",), summary="kept documents written, cut"),
)

BY_NAME = {n.name: n for n in NODES}
# the workflow's `stages` entries, in the only order they may run
METHODS: tuple[str, ...] = tuple(dict.fromkeys(n.method for n in NODES if n.method))
# the workflow's `stages` when it names none
DEFAULT_METHODS: tuple[str, ...] = tuple(dict.fromkeys(n.method for n in NODES if n.method and n.default))
REASONS: dict[str, str] = {n.method or n.name: n.reason for n in NODES if n.reason}
# the methods that write spans, in the order they cut
SPAN_METHODS: tuple[str, ...] = tuple(n.method or n.name for n in NODES if n.spans)


def node(name: str) -> Node:
    return BY_NAME[name]


def enabled(name: str, wf: "Workflow") -> bool:
    n = BY_NAME[name]
    return (n.method is None or n.method in wf.stages) and (n.when is None or n.when(wf))


def plan(wf: "Workflow") -> list[Node]:
    """The stages a workflow runs, in order."""
    return [n for n in NODES if enabled(n.name, wf)]


def upstream(name: str, wf: "Workflow") -> list[str]:
    """The enabled stages `name` reads, a disabled one replaced by what it reads."""
    out: list[str] = []
    for r in BY_NAME[name].reads:
        for u in ([r] if enabled(r, wf) else upstream(r, wf)):
            if u not in out:
                out.append(u)
    return out


def before(name: str, wf: "Workflow") -> list[str]:
    """Every enabled stage that `name` depends on, directly or not, in run order."""
    seen: set[str] = set()
    stack = upstream(name, wf)
    while stack:
        u = stack.pop()
        if u not in seen:
            seen.add(u)
            stack.extend(upstream(u, wf))
    return [n.name for n in NODES if n.name in seen]


def retired(wf: "Workflow") -> list[Node]:
    """Deciding stages the workflow does not run: their decisions must be taken back."""
    return [n for n in NODES if n.decides and not enabled(n.name, wf)]

