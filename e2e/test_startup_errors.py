"""A start-up that cannot reach its database says why in the database's own words (SQLSTATE,
message), not postgres-nio's "Generic description to prevent accidental leakage"."""

from __future__ import annotations

import os
import subprocess
from urllib.parse import urlsplit, urlunsplit

import pytest

from conftest import BINARY, plaza_env

POSTGRES_URL = os.environ.get("PLAZA_TEST_DATABASE_URL", "")


def with_credentials(url: str, *, password: str | None = None, database: str | None = None) -> str:
    parts = urlsplit(url)
    netloc = parts.netloc
    if password is not None:
        user, host = netloc.rsplit("@", 1)
        netloc = f"{user.split(':', 1)[0]}:{password}@{host}"
    return urlunsplit(parts._replace(netloc=netloc, path=f"/{database}" if database else parts.path))


@pytest.mark.skipif(not POSTGRES_URL, reason="needs PLAZA_TEST_DATABASE_URL (make test runs this under scripts/with-postgres.sh)")
@pytest.mark.parametrize(
    "change, sqlstate, words",
    [
        ({"password": "not-the-password"}, "28P01", 'password authentication failed for user "plaza"'),
        ({"database": "no_such_database"}, "3D000", 'database "no_such_database" does not exist'),
    ],
)
def test_migrate_against_a_refusing_database_prints_its_message(tmp_path, change, sqlstate, words):
    env = {**plaza_env(), "PLAZA_DATABASE_URL": with_credentials(POSTGRES_URL, **change)}
    result = subprocess.run(
        [str(BINARY), "migrate", "--data-dir", str(tmp_path)], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0, result
    assert f"({sqlstate})" in result.stderr and words in result.stderr, result.stderr
    assert "Generic description" not in result.stderr, result.stderr
