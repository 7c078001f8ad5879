"""Tuner(store=..., bundles=[...]): results shared through a real PostgreSQL server (initdb +
pg_ctl in a temporary directory, stopped and removed after each case; skipped when the server
programs are absent, a failure in CI), an SQLite database path, and shipped bundles read
before tuning. Vulkan kernels on lavapipe; outputs checked against the CPU on random inputs."""
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile

import numpy as np
import pytest

import libtune
from kernels import SPACE, saxpy

OPTS = dict(warmup_ms=1, rep_ms=4, print=False)
CONFIGS = len(SPACE["block.x"]) * len(SPACE["ELEMS"])
RNG = np.random.default_rng(38)


def run_saxpy(tuner, device, n=4096):
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    y = RNG.uniform(-1, 1, n).astype(np.float32)
    want = np.float32(0.5) * x + y
    tuner(device, x, y, 0.5, n)
    np.testing.assert_allclose(y, want, rtol=1e-6, atol=1e-6)


class PgServer:
    """A PostgreSQL server on a free port of 127.0.0.1, trust authentication, superuser tune.
    initdb refuses root: as root the server runs as `nobody`."""

    def __init__(self, bindir):
        self.bindir = bindir
        self.dir = tempfile.mkdtemp(prefix="libtune-pg-py-")
        self.as_user = []
        if os.geteuid() == 0:
            nobody = pwd.getpwnam("nobody")
            os.chown(self.dir, nobody.pw_uid, nobody.pw_gid)
            self.as_user = ["runuser", "-u", "nobody", "--"]
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.data = os.path.join(self.dir, "data")
        self._run("initdb", "-A", "trust", "-U", "tune", "-E", "UTF8", "--no-sync", "-D", self.data)
        self._run("pg_ctl", "-w", "-s", "-D", self.data, "-l", os.path.join(self.dir, "server.log"),
                  "-o", f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off",
                  "start")

    def _run(self, program, *args):
        subprocess.run(self.as_user + [os.path.join(self.bindir, program), *args], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def url(self, db):
        return f"postgresql://tune@127.0.0.1:{self.port}/{db}"

    def scalar(self, db, sql):
        out = subprocess.run([os.path.join(self.bindir, "psql"), "-At", "-c", sql, self.url(db)],
                             check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def new_database(self, db):
        self.scalar("postgres", f"CREATE DATABASE {db}")
        return self.url(db)

    def stop(self):
        self._run("pg_ctl", "-s", "-D", self.data, "-m", "immediate", "stop")
        shutil.rmtree(self.dir, ignore_errors=True)


def pg_bindir():
    explicit = os.environ.get("TUNE_PG_BINDIR")
    if explicit:
        return explicit if os.path.exists(os.path.join(explicit, "initdb")) else None
    found = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    found.sort(key=lambda p: int(p.split("/")[4]) if p.split("/")[4].isdigit() else 0)
    return os.path.dirname(found[-1]) if found else None


@pytest.fixture
def pg_server():
    if not libtune.has_postgresql():
        pytest.skip("libtune was built without its PostgreSQL component")
    bindir = pg_bindir()
    if bindir is None:
        if os.environ.get("CI") == "true":
            raise RuntimeError("no PostgreSQL server programs: CI installs them")
        pytest.skip("no PostgreSQL server programs (the postgresql package, or TUNE_PG_BINDIR)")
    server = PgServer(bindir)
    yield server
    server.stop()


def test_store_url_shares_results_through_the_server(vulkan_device, pg_server, tmp_path,
                                                     monkeypatch):
    url = pg_server.new_database("pyfleet")
    # Machine A: its own local file in front of the server.
    monkeypatch.setenv("TUNE_CACHE_DIR", str(tmp_path / "a"))
    tuner = libtune.Tuner(saxpy(), store=url, **OPTS)
    run_saxpy(tuner, vulkan_device)
    rows = tuner.report()
    assert len(rows) == CONFIGS and not any(r["from_store"] for r in rows)
    tuner.close()
    assert pg_server.scalar("pyfleet", "SELECT count(*) FROM tune_results") == str(CONFIGS)
    assert os.path.exists(tmp_path / "a" / "tune.db")  # the local file in front holds them too
    # Machine B: an empty local file; the key is served by the server, not tuned again.
    monkeypatch.setenv("TUNE_CACHE_DIR", str(tmp_path / "b"))
    other = libtune.Tuner(saxpy(), store=url, **OPTS)
    run_saxpy(other, vulkan_device)
    rows = other.report()
    assert len(rows) == CONFIGS and all(r["from_store"] for r in rows), rows
    other.close()


def test_store_path_and_bundles(vulkan_device, tmp_path):
    tune_exe = os.environ.get("TUNE_EXE")
    if not tune_exe:
        pytest.skip("TUNE_EXE (the tune program, to create a bundle) is not set")
    db = tmp_path / "tuned.db"
    tuner = libtune.Tuner(saxpy(), store=db, **OPTS)  # os.PathLike
    run_saxpy(tuner, vulkan_device)
    assert not any(r["from_store"] for r in tuner.report())
    tuner.close()
    bundle = tmp_path / "app.tunebundle"
    subprocess.run([tune_exe, "bundle", "create", "--from", str(db), "-o", str(bundle)],
                   check=True, capture_output=True)
    # An empty database, the bundle behind it: nothing tuned, every row the bundle's.
    shipped = libtune.Tuner(saxpy(), store=str(tmp_path / "empty.db"), bundles=[bundle], **OPTS)
    run_saxpy(shipped, vulkan_device)
    rows = shipped.report()
    assert len(rows) == CONFIGS, rows
    assert all(r["from_store"] and r["origin"] == str(bundle) for r in rows), rows
    shipped.close()


def test_store_and_bundles_errors_name_the_keyword():
    with pytest.raises(TypeError, match="store: a str or os.PathLike"):
        libtune.Tuner(saxpy(), store=12, **OPTS)
    with pytest.raises(TypeError, match="bundles: a list of paths"):
        libtune.Tuner(saxpy(), bundles="one.tunebundle", **OPTS)
    with pytest.raises(TypeError, match="bundles entry: a str or os.PathLike"):
        libtune.Tuner(saxpy(), bundles=[3], **OPTS)
    if not libtune.has_postgresql():
        with pytest.raises(ValueError, match="built without its PostgreSQL component"):
            libtune.Tuner(saxpy(), store="postgresql://u:pw@db.example/x", **OPTS)
