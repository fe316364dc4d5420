"""Inputs and outputs as URLs and globs, and sharded output: on a real S3 server (moto's, on
127.0.0.1, with credentials checked) and on local files, compared byte for byte with runs on
local files."""
from __future__ import annotations

import gzip
import json
import os
import random
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpus import planted_corpus, write_jsonl
from helpers import db_rows

SMALL = ["--set", "substring.min_length=20", "--workers", "2"]


def _free_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    try:
        return s.getsockname()[1]
    finally:
        s.close()


@contextmanager
def moto_server(log: Path, auth: bool):
    """A moto S3 server on 127.0.0.1. With `auth`, it checks credentials: the first three
    requests (made here, unsigned) create a user allowed everything, and every later request
    must be signed with its key (moto's server then refuses listings by prefix, which is why
    the functional tests use a server without it). Yields the environment a client needs
    (endpoint and keys) and a boto3 client."""
    boto3 = pytest.importorskip("boto3")
    port = _free_port()
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                                  env={**os.environ, **({"INITIAL_NO_AUTH_ACTION_COUNT": "3"} if auth else {})},
                                  stdout=out, stderr=out)
        endpoint = f"http://127.0.0.1:{port}"
        try:
            for _ in range(200):
                try:
                    socket.create_connection(("127.0.0.1", port), 0.1).close()
                    break
                except OSError:
                    time.sleep(0.05)
            key = {"AccessKeyId": "testing", "SecretAccessKey": "testing"}
            if auth:
                iam = boto3.client("iam", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="none",
                                   aws_secret_access_key="none")
                iam.create_user(UserName="sadedup")
                iam.put_user_policy(UserName="sadedup", PolicyName="all", PolicyDocument=json.dumps(
                    {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]}))
                key = iam.create_access_key(UserName="sadedup")["AccessKey"]
            env = {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": key["AccessKeyId"],
                   "AWS_SECRET_ACCESS_KEY": key["SecretAccessKey"], "AWS_DEFAULT_REGION": "us-east-1"}
            client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                                  aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
                                  aws_secret_access_key=env["AWS_SECRET_ACCESS_KEY"])
            for bucket in ("crawl", "clean"):
                client.create_bucket(Bucket=bucket)
            yield env, client
        finally:
            server.terminate()
            server.wait(10)


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    with moto_server(tmp_path_factory.mktemp("moto") / "server.log", auth=False) as s:
        yield s


@pytest.fixture(scope="module")
def inputs(tmp_path_factory) -> Path:
    """Three input files, one gzipped, with copies across them."""
    d = tmp_path_factory.mktemp("in")
    rng = random.Random(13)
    docs = planted_corpus(rng, 150, max_len=200)
    write_jsonl(d / "a.jsonl", docs[:50])
    write_jsonl(d / "b.jsonl", docs[50:100])
    (d / "c.jsonl.gz").write_bytes(gzip.compress(write_jsonl(d / "c.jsonl", docs[100:]).read_bytes(), mtime=0))
    (d / "c.jsonl").unlink()
    return d


def _upload(client, folder: Path, bucket: str, prefix: str) -> None:
    for f in sorted(folder.iterdir()):
        client.put_object(Bucket=bucket, Key=f"{prefix}/{f.name}", Body=f.read_bytes())


def _get(client, bucket: str, prefix: str) -> dict[str, bytes]:
    listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"].rsplit("/", 1)[-1]: client.get_object(Bucket=bucket, Key=o["Key"])["Body"].read()
            for o in listed}


def decisions(w: Path) -> list:
    return (db_rows(w, "SELECT doc_id, source_row, status, reason FROM documents ORDER BY doc_id")
            + db_rows(w, "SELECT doc_id, char_start, char_end, src_doc_id FROM spans ORDER BY span_id"))


def one_line(p: subprocess.CompletedProcess, *words: str) -> str:
    assert p.returncode != 0, p.stdout
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_glob_input_and_sharded_output_on_s3_equal_the_local_run(cli, s3, inputs, tmp_path):
    env, client = s3
    (tmp_path / "out").mkdir()
    cli("run", "--input", inputs, "--output", tmp_path / "out" / "part-{shard:05d}.jsonl", "--workdir",
        tmp_path / "lw", *SMALL)
    local = {p.name: p.read_bytes() for p in sorted((tmp_path / "out").iterdir())}
    assert sorted(local) == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    _upload(client, inputs, "crawl", "dump1")
    # hidden objects (a writer's half-written part, a git folder) are read by neither the glob
    # nor the folder URL, as a local glob and folder skip them
    client.put_object(Bucket="crawl", Key="dump1/.part-9.jsonl", Body=b'{"id": "h", "text": "half written"}\n')
    client.put_object(Bucket="crawl", Key="dump1/.git/HEAD", Body=b"ref: refs/heads/main\n")
    cli("run", "--input", "s3://crawl/dump1/*.jsonl*", "--output", "s3://clean/d1/part-{shard:05d}.jsonl",
        "--workdir", tmp_path / "sw", *SMALL, env=env)
    assert _get(client, "clean", "d1/") == local
    assert decisions(tmp_path / "sw") == decisions(tmp_path / "lw")
    assert db_rows(tmp_path / "sw", "SELECT DISTINCT source FROM documents ORDER BY 1") == [
        ("s3://crawl/dump1/a.jsonl",), ("s3://crawl/dump1/b.jsonl",), ("s3://crawl/dump1/c.jsonl.gz",)]
    # a folder URL reads the same objects; one output object equals the parts joined
    cli("run", "--input", "s3://crawl/dump1/", "--output", "s3://clean/one.jsonl", "--workdir", tmp_path / "sw2",
        *SMALL, env=env)
    assert _get(client, "clean", "one.jsonl")["one.jsonl"] == b"".join(local.values())

    # resuming finds every part still as written and does nothing; a deleted part is written again
    again = cli("run", "--workdir", tmp_path / "sw", "--format", "json", env=env)
    assert json.loads(again.stdout)["stages"]["export"].get("skipped") is True, again.stderr
    client.delete_object(Bucket="clean", Key="d1/part-00001.jsonl")
    cli("run", "--workdir", tmp_path / "sw", env=env)
    assert _get(client, "clean", "d1/") == local

    # an input object replaced by another of the same size is noticed by its ETag
    body = client.get_object(Bucket="crawl", Key="dump1/a.jsonl")["Body"].read()
    client.put_object(Bucket="crawl", Key="dump1/a.jsonl", Body=body.replace(b'"d1"', b'"x1"'))
    one_line(cli("run", "--input", "s3://crawl/dump1/*.jsonl*", "--output", "s3://clean/d1/part-{shard:05d}.jsonl",
                 "--workdir", tmp_path / "sw", env=env, check=False), "s3://crawl/dump1/a.jsonl", "modified")


def test_a_missing_bucket_or_refused_credentials_is_one_line_before_any_work(cli, s3, inputs, tmp_path):
    env, client = s3
    _upload(client, inputs, "crawl", "dump2")
    out = tmp_path / "o.jsonl"
    one_line(cli("run", "--input", "s3://nosuchbucket/x/*.jsonl", "--output", out, "--workdir", tmp_path / "w1",
                 env=env, check=False), "input s3://nosuchbucket", "bucket does not exist")
    one_line(cli("run", "--input", "s3://crawl/dump2/nothing-*.jsonl", "--output", out, "--workdir",
                 tmp_path / "w2", env=env, check=False), "matches no file")
    one_line(cli("run", "--input", "s3://crawl/dump2/", "--output", "s3://nosuchbucket/o.jsonl", "--workdir",
                 tmp_path / "w3", env=env, check=False), "output s3://nosuchbucket/o.jsonl", "bucket does not exist")
    with moto_server(tmp_path / "auth.log", auth=True) as (auth_env, auth_client):
        auth_client.put_object(Bucket="crawl", Key="a.jsonl", Body=(inputs / "a.jsonl").read_bytes())
        one_line(cli("run", "--input", "s3://crawl/a.jsonl", "--output", out, "--workdir", tmp_path / "w4",
                     env={**auth_env, "AWS_SECRET_ACCESS_KEY": "wrong"}, check=False),
                 "input s3://crawl/a.jsonl", "access denied")
        one_line(cli("run", "--input", inputs, "--output", "s3://clean/o.jsonl", "--workdir", tmp_path / "w5",
                     env={**auth_env, "AWS_ACCESS_KEY_ID": "AKIANOSUCHKEY"}, check=False),
                 "output s3://clean/o.jsonl", "access denied")
        cli("ingest", "--input", "s3://crawl/a.jsonl", "--workdir", tmp_path / "w6", env=auth_env)  # the right key
    for w in ("w1", "w2", "w3", "w4", "w5"):  # refused before the work folder got a database
        assert not (tmp_path / w / "sadedup.db").exists()
    assert db_rows(tmp_path / "w6", "SELECT count(*) FROM documents") == [(50,)]


def test_sharded_output_per_file_and_per_rows(cli, inputs, tmp_path):
    single = tmp_path / "single.jsonl"
    cli("run", "--input", inputs, "--output", single, "--workdir", tmp_path / "w", *SMALL)
    want = single.read_bytes()
    n_rows = len(want.splitlines())
    out = tmp_path / "parts"
    out.mkdir()
    (out / "part-00099.jsonl").write_text("not ours\n")  # a stranger matching the pattern: warned of
    p = cli("export", tmp_path / "w", "--output", out / "part-{shard:05d}.jsonl")
    assert "not part of it" in p.stderr and "part-00099" in p.stderr
    (out / "part-00099.jsonl").unlink()
    parts = sorted(out.iterdir())
    assert [x.name for x in parts] == [f"part-{i:05d}.jsonl" for i in range(3)]  # one per input file
    assert b"".join(x.read_bytes() for x in parts) == want
    cli("run", "--workdir", tmp_path / "w", "--set", "run.output_rows=7")
    parts = sorted(out.iterdir())
    assert len(parts) > 3 and all(len(x.read_bytes().splitlines()) <= 7 for x in parts)
    assert b"".join(x.read_bytes() for x in parts) == want
    cli("run", "--workdir", tmp_path / "w", "--set", "run.output_rows=40")
    parts = sorted(out.iterdir())  # the parts of the earlier split that are no longer written are gone
    assert b"".join(x.read_bytes() for x in parts) == want
    per_file = db_rows(tmp_path / "w", "SELECT count(*) FROM documents WHERE status = 'kept' GROUP BY source")
    assert len(parts) == sum(-(-n // 40) for (n,) in per_file)
    assert n_rows == sum(len(x.read_bytes().splitlines()) for x in parts)


def test_parquet_parts_keep_the_schema_codec_and_row_group_size(cli, tmp_path):
    rng = random.Random(5)
    docs = planted_corpus(rng, 120, max_len=150)
    schema = pa.schema([("id", pa.string()), ("text", pa.string()), ("score", pa.float32())])
    for i, (a, b) in enumerate(((0, 60), (60, 120))):
        t = pa.table({"id": [f"d{j}" for j in range(a, b)], "text": docs[a:b],
                      "score": pa.array([float(j) for j in range(a, b)], pa.float32())}, schema=schema)
        pq.write_table(t, tmp_path / f"in{i}.parquet", compression="zstd", row_group_size=16)
    out = tmp_path / "out"
    out.mkdir()
    cli("run", "--input", tmp_path / "in0.parquet", "--input", tmp_path / "in1.parquet", "--output",
        out / "p-{shard}.parquet", "--workdir", tmp_path / "w", *SMALL, "--set", "run.row_group_rows=10")
    parts = [out / "p-0.parquet", out / "p-1.parquet"]
    kept = db_rows(tmp_path / "w", "SELECT count(*) FROM documents WHERE status = 'kept' GROUP BY source ORDER BY source")
    for part, (n,) in zip(parts, kept):
        f = pq.ParquetFile(part)
        assert f.schema_arrow == schema and f.metadata.num_rows == n
        assert f.metadata.row_group(0).column(0).compression == "ZSTD"
        assert max(f.metadata.row_group(g).num_rows for g in range(f.metadata.num_row_groups)) == 10
    single = tmp_path / "single.parquet"
    cli("export", tmp_path / "w", "--output", single)
    assert pa.concat_tables([pq.read_table(p) for p in parts]).equals(pq.read_table(single))


def test_a_bad_output_pattern_is_refused(cli, inputs, tmp_path):
    for spec, word in ((tmp_path / "p-{name}.jsonl", "unknown field {name}"),
                       (tmp_path / "{shard}" / "p.jsonl", "only in the file name"),
                       (tmp_path / "p-{shard:s}.jsonl", "does not take a number")):
        one_line(cli("run", "--input", inputs, "--output", spec, "--workdir", tmp_path / "w", check=False), word)


# hf:// served from a local folder, as the Hub answers: no modification time, a blob id per
# content (what a real Hub listing gives). It clobbers huggingface_hub's implementation in the
# CLI and its pool workers, so nothing reaches the network.
FAKE_HUB = '''
import hashlib
import os

import fsspec
from fsspec.implementations.dirfs import DirFileSystem
from fsspec.implementations.local import LocalFileSystem


class FakeHub(DirFileSystem):
    protocol = "hf"

    def __init__(self, *args, **kwargs):
        super().__init__(path=os.environ["FAKE_HUB_ROOT"], fs=LocalFileSystem())

    def info(self, path, **kwargs):
        info = super().info(path, **kwargs)
        info = {k: v for k, v in info.items() if k in ("name", "size", "type")}
        if info["type"] == "file":
            with open(self._join(path), "rb") as f:
                info["blob_id"] = hashlib.sha1(f.read()).hexdigest()
        return info


fsspec.register_implementation("hf", FakeHub, clobber=True)
'''


def test_hf_input_through_fsspec_equals_the_local_run(cli, inputs, tmp_path):
    hub = tmp_path / "hub"
    repo = hub / "datasets" / "org" / "crawl" / "data"
    repo.mkdir(parents=True)
    for f in sorted(inputs.iterdir()):
        (repo / f.name).write_bytes(f.read_bytes())
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(FAKE_HUB)
    env = {"FAKE_HUB_ROOT": str(hub), "HF_HUB_OFFLINE": "1",
           "PYTHONPATH": os.pathsep.join([str(site), *filter(None, [os.environ.get("PYTHONPATH")])])}
    cli("run", "--input", repo / "*.jsonl*", "--output", tmp_path / "local.jsonl", "--workdir", tmp_path / "lw",
        *SMALL)
    url = "hf://datasets/org/crawl/data/*.jsonl*"
    cli("run", "--input", url, "--output", tmp_path / "hf.jsonl", "--workdir", tmp_path / "hw", *SMALL, env=env)
    assert (tmp_path / "hf.jsonl").read_bytes() == (tmp_path / "local.jsonl").read_bytes()
    assert decisions(tmp_path / "hw") == decisions(tmp_path / "lw")
    assert db_rows(tmp_path / "hw", "SELECT DISTINCT source FROM documents ORDER BY 1") == [
        (f"hf://datasets/org/crawl/data/{n}",) for n in ("a.jsonl", "b.jsonl", "c.jsonl.gz")]
    # a rerun finds the inputs unchanged by their blob ids; a file replaced by another of the
    # same size and time is noticed by its blob id alone (the fake Hub gives no time)
    again = cli("run", "--workdir", tmp_path / "hw", "--format", "json", env=env)
    assert json.loads(again.stdout)["stages"]["export"].get("skipped") is True, again.stderr
    a = repo / "a.jsonl"
    st = a.stat()
    a.write_bytes(a.read_bytes().replace(b'"d1"', b'"x1"'))
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert a.stat().st_size == st.st_size
    one_line(cli("run", "--input", url, "--output", tmp_path / "hf.jsonl", "--workdir", tmp_path / "hw", env=env,
                 check=False), "hf://datasets/org/crawl/data/a.jsonl", "modified")


def test_a_url_for_the_work_folder_or_a_reference_is_one_line_before_any_work(cli, inputs, tmp_path):
    """The work folder is a local path: `--workdir s3://clean/w` was folded by the CLI's Path
    into the local folder ./s3:/clean/w, a whole run made there and reported as done, and
    `status s3://clean/w` looked for that folder. Now a URL is refused in one line naming it;
    file:// is the local path it names."""
    out = tmp_path / "o.jsonl"
    one_line(cli("run", "--input", inputs, "--output", out, "--workdir", "s3://clean/w", check=False),
             "work folder s3://clean/w", "a URL")
    for command in ("status", "sql", "export"):
        one_line(cli(command, "s3://clean/w", *(["SELECT 1"] if command == "sql" else []), check=False),
                 "work folder s3://clean/w", "a URL")
    one_line(cli("run", "--input", inputs, "--output", out, "--workdir", tmp_path / "w", "--reference", "gs://b/ref",
                 check=False), "reference gs://b/ref", "a URL")
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "a refused run wrote something"
    cli("run", "--input", inputs, "--output", out, "--workdir", f"file://{tmp_path / 'w'}", *SMALL)
    assert (tmp_path / "w" / "sadedup.db").exists() and out.exists()


def test_file_urls_name_the_local_files(cli, inputs, tmp_path):
    """file:// URLs for the inputs (files and a glob) and the output are the local
    files they name, as for the work folder: a Path folded `file:///tmp/a.jsonl` into the name
    file:/tmp/a.jsonl, and the run said "no such file or folder" for a file that is there."""
    plain = tmp_path / "plain.jsonl"
    cli("run", "--input", inputs, "--output", plain, "--workdir", tmp_path / "w0", *SMALL)
    files = sorted(inputs.iterdir())
    urls = [f"file://{p}" for p in files]
    out = tmp_path / "o.jsonl"
    given = [x for u in urls for x in ("--input", u)]
    cli("run", *given, "--output", f"file://{out}", "--workdir", tmp_path / "w1", *SMALL)
    assert out.read_bytes() == plain.read_bytes()
    glob = f"file://{inputs}/*.jsonl*"
    cli("run", "--input", glob, "--output", f"file://{tmp_path / 'g.jsonl'}", "--workdir", tmp_path / "w2", *SMALL)
    assert (tmp_path / "g.jsonl").read_bytes() == plain.read_bytes()


def test_an_output_url_over_an_input_url_is_refused_before_any_work(cli, s3, inputs, tmp_path):
    """An output URL that is an input URL, matches an input glob or lies under an input folder
    URL was let through (only local paths were compared): the output replaced the input it was
    reading, rows lost. Now it is one line, and the input is as it was."""
    env, client = s3
    _upload(client, inputs, "crawl", "dump9")
    before = _get(client, "crawl", "dump9/")
    for i, (given, out, words) in enumerate([
            ("s3://crawl/dump9/a.jsonl", "s3://crawl/dump9/a.jsonl", "is one of the inputs"),
            ("s3://crawl/dump9/*.jsonl", "s3://crawl/dump9/a.jsonl", "is one of the inputs (it matches"),
            ("s3://crawl/dump9/", "s3://crawl/dump9/out.jsonl", "is inside the input folder s3://crawl/dump9/")]):
        one_line(cli("run", "--input", given, "--output", out, "--workdir", tmp_path / f"w{i}", *SMALL, env=env,
                     check=False), f"output {out}", words)
    assert _get(client, "crawl", "dump9/") == before
