"""The short form of `make scale` (bench/scale.py): nginx on loopback in front of three servers on
one PostgreSQL with media in S3 (moto); one server killed under load, a rolling restart under load,
and the rate limits and client addresses across the servers. The script's own checks decide."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import BINARY

REPO = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("PLAZA_TEST_DATABASE_URL", "")


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PLAZA_TEST_DATABASE_URL (make test runs this under scripts/with-postgres.sh)")
@pytest.mark.skipif(not (shutil.which("nginx") or Path("/usr/sbin/nginx").exists()), reason="needs nginx (scripts/install-deps.sh test)")
def test_three_servers_behind_nginx_survive_a_kill_and_a_rolling_restart(tmp_path: Path):
    run = subprocess.run(
        [sys.executable, str(REPO / "bench" / "scale.py"), "--postgres", POSTGRES_URL, "--quick", "--no-wrk",
         "--plaza-bin", str(BINARY), "--workdir", str(tmp_path / "scale")],
        capture_output=True, text=True, timeout=600, cwd=REPO)
    print(run.stdout[-6000:])
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-4000:]
    assert "every check passed" in run.stdout
