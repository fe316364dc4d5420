"""The JSONL writer's fast row encoding is json.dumps(row, ensure_ascii=False), byte for byte,
but for the floats JSON has no number for (NaN, infinities), which it writes as null."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sadedup.writers import _MARK, JsonlWriter


def finite(v):
    if isinstance(v, float) and (v != v or v in (float("inf"), float("-inf"))):
        return None
    if isinstance(v, dict):
        return {k: finite(x) for k, x in v.items()}
    if isinstance(v, list):
        return [finite(x) for x in v]
    return v


texts = st.text(st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=3000)
values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | texts,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                      max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(text=texts, extra=st.dictionaries(st.sampled_from(["id", "url", "meta", "score"]), values), marked=st.booleans())
def test_encode_is_json_dumps(tmp_path_factory, text, extra, marked):
    w = JsonlWriter(tmp_path_factory.mktemp("w") / "out.jsonl", "text", None)
    row = {**extra, "text": text * 3}
    if marked:  # the stand-in marker inside another field falls back to plain json
        row["meta"] = _MARK
    assert w._encode(row) == json.dumps(finite(row), ensure_ascii=False, allow_nan=False).encode("utf-8")
    w.abort()


def test_an_output_lock_won_on_the_file_its_holder_unlinked_is_taken_again(tmp_path, monkeypatch):
    """The holder of an output's lock unlinks the lock file as it lets go. A second writer that
    opened that file just before, and wins the lock once it is let go, holds a lock on a name
    no one sees: a third writer then made a new file, locked it too, and two wrote one output.
    The second must lock the file the name is now, so the third is refused."""
    import pytest

    from sadedup import outputs
    from sadedup.errors import SadedupError

    out = tmp_path / "out.jsonl"
    first = outputs.output_lock(out)
    first.__enter__()
    real = outputs.fcntl.flock
    opened: list[int] = []

    def flock(fd, op):
        if not opened:  # the second writer has opened the lock file: the first lets go now
            opened.append(fd)
            first.__exit__(None, None, None)
        return real(fd, op)

    monkeypatch.setattr(outputs.fcntl, "flock", flock)
    with outputs.output_lock(out):
        monkeypatch.setattr(outputs.fcntl, "flock", real)
        assert opened
        with pytest.raises(SadedupError, match="is being written by another sadedup run"):
            with outputs.output_lock(out):
                pass
    assert not out.with_name(f".{out.name}.sadedup-lock").exists()
