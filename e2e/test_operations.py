"""What an operator sees of the real binary: /metrics on its own port, JSON log lines carrying
each request's id, and that id in every answer."""

import json
import os
import pty
import re
import select
import sqlite3
import subprocess
from pathlib import Path

import requests

from conftest import BINARY, PlazaServer, expect, free_port, plaza_env, png, run_plaza


def samples(text: str, name: str) -> dict[str, float]:
    """The samples of one metric family, by their label text."""
    found = {}
    for line in text.splitlines():
        match = re.match(rf"^{re.escape(name)}(\{{.*\}})? (\S+)$", line)
        if match:
            found[match.group(1) or ""] = float(match.group(2))
    return found


def test_metrics_on_their_own_port_and_json_logs_with_request_ids(data_dir: Path, tmp_path: Path):
    metrics_port = free_port()
    log_path = tmp_path / "plaza.log"
    server = PlazaServer(
        data_dir, log_path,
        env={"PLAZA_METRICS_PORT": str(metrics_port), "PLAZA_LOG_FORMAT": "json", "PLAZA_LOG_LEVEL": "debug"},
    )
    with server.running():
        user, ana = server.register("ana")
        post = expect(ana.post("/api/v1/posts", json={"kind": "text", "body": "Measured"}), 201)
        answer = ana.get(f"/api/v1/posts/{post['id']}")
        expect(answer, 200)
        request_id = answer.headers["X-Request-Id"]
        assert re.fullmatch(r"[0-9a-f]{16}", request_id), request_id
        # Not on the public port.
        assert requests.get(server.url + "/metrics", timeout=10).status_code == 404

        scrape = requests.get(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10)
        assert scrape.status_code == 200, scrape.text
        assert scrape.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        requests_total = samples(scrape.text, "plaza_http_requests_total")
        assert requests_total['{method="GET",route="/api/v1/posts/{id}",status="200"}'] == 1, requests_total
        assert requests_total['{method="POST",route="/api/v1/posts",status="201"}'] == 1, requests_total
        assert samples(scrape.text, "plaza_streams_open") == {"": 0}
        assert samples(scrape.text, "plaza_sqlite_write_queue") == {"": 0}
        assert samples(scrape.text, "plaza_db_wait_seconds_count")['{path="write"}'] >= 2

    # Every line the server wrote is a JSON object; the debug line of the request names its id.
    lines = [line for line in log_path.read_text().splitlines() if line and not line.startswith("--- plaza serve")]
    objects = [json.loads(line) for line in lines]
    assert all({"time", "level", "label", "message"} <= set(o) for o in objects), lines[:3]
    assert any(o.get("request_id") == request_id for o in objects), "the request's log line names its id"


def test_backup_while_serving_and_restore_into_a_new_data_dir(data_dir: Path, tmp_path: Path):
    """`plaza backup` beside the running server, `plaza restore` into a new folder, and a server on
    the restored data answers with the same posts and photo."""
    backup = tmp_path / "backup"
    server = PlazaServer(data_dir, tmp_path / "plaza.log")
    with server.running():
        user, ana = server.register("ana")
        media = expect(ana.post("/api/v1/me/media", files={"file": ("p.png", png(32, 24), "image/png")}), 201)
        photo = expect(ana.post("/api/v1/posts", json={"kind": "photo", "body": "Kept", "mediaIds": [media["id"]]}), 201)
        texts = [expect(ana.post("/api/v1/posts", json={"kind": "text", "body": f"Post {i}"}), 201) for i in range(5)]
        made = subprocess.run(
            [str(BINARY), "backup", "--data-dir", str(data_dir), str(backup)],
            env=plaza_env(), capture_output=True, text=True, timeout=120)
        assert made.returncode == 0, made.stderr
        assert "Backed up the sqlite database" in made.stdout
        original = requests.get(server.url + photo["media"][0]["url"], timeout=10).content

    # Into a folder with data already: refused, nothing touched.
    refused = subprocess.run(
        [str(BINARY), "restore", "--data-dir", str(data_dir), str(backup)],
        env=plaza_env(), capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "restore into an empty data folder" in refused.stderr

    restored_dir = tmp_path / "restored"
    done = subprocess.run(
        [str(BINARY), "restore", "--data-dir", str(restored_dir), str(backup)],
        env=plaza_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    restored = PlazaServer(restored_dir, tmp_path / "restored.log")
    with restored.running():
        reader = restored.client(expect(restored.client().post(
            "/api/v1/auth/login", json={"login": "ana", "password": "correct horse battery"}), 200)["token"])
        feed = expect(reader.get(f"/api/v1/users/ana/posts"), 200)
        assert [p["id"] for p in feed["items"]] == [p["id"] for p in reversed([photo] + texts)]
        copy = expect(reader.get(f"/api/v1/posts/{photo['id']}"), 200)
        assert requests.get(restored.url + copy["media"][0]["url"], timeout=10).content == original


def test_a_graceful_stop_does_not_wait_for_connections_that_sent_nothing(plaza: PlazaServer):
    """A browser's unused preconnect (a connection with no request yet) must not hold a graceful
    stop until the idle timeout (60 s): `stop` asserts the exit within 10 s."""
    import socket
    idle = socket.create_connection(("127.0.0.1", plaza.port))
    try:
        plaza.stop()
        idle.settimeout(10)
        assert idle.recv(1) == b"", "the server closed it"
    finally:
        idle.close()


def test_a_connection_made_before_a_graceful_stop_still_gets_its_answer(plaza: PlazaServer):
    """A proxy connects, then sends its request: when the stop comes in between, the request is
    still served, and the connection closed after it, rather than the connection closed under it, which the
    proxy could not retry elsewhere (a POST already sent). bench/scale.py's rolling restart counts
    on it."""
    import signal
    import socket
    import subprocess
    early = socket.create_connection(("127.0.0.1", plaza.port))
    # The server has taken it from the kernel's queue (the listening socket's Recv-Q is 0): a
    # connection still queued when the listener closes is reset by the kernel, whatever Plaza does.
    while True:
        listing = subprocess.run(["ss", "-ltnH", f"sport = :{plaza.port}"], capture_output=True, text=True).stdout
        if listing.split()[1:2] == ["0"]:
            break
    process, plaza.process = plaza.process, None
    try:
        process.send_signal(signal.SIGTERM)
        # The listener closes first: once a new connection is refused, the stop has begun. One
        # that times out has too: the server no longer accepts, and the connections this loop
        # made since filled the listener's queue before it closed.
        while True:
            try:
                socket.create_connection(("127.0.0.1", plaza.port), timeout=1).close()
            except (ConnectionRefusedError, ConnectionResetError, TimeoutError):
                break
        early.sendall(b"GET /healthz HTTP/1.1\r\nHost: plaza.test\r\nConnection: close\r\n\r\n")
        early.settimeout(10)
        answer = b""
        while chunk := early.recv(4096):
            answer += chunk
        # Answered, then closed by the server (the read loop ended).
        assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b'{"status":"ok"}'), answer[:300]
        early.close()
        assert process.wait(timeout=10) == 0
    finally:
        early.close()
        if process.poll() is None:
            process.kill()


def test_migrate_check_and_an_older_binary_refusing_a_newer_schema(data_dir: Path):
    """`plaza migrate --check` says what would run and changes nothing; once a newer release has
    migrated the database (a schema this binary does not know), every command that opens it
    stops with a message naming that release, and serves nothing."""
    fresh = run_plaza("migrate", "--check", data_dir=data_dir)
    assert fresh.returncode == 1 and fresh.stdout.startswith("The database is empty; Plaza 1.0.0 would apply "), fresh
    assert "\n  1 " in fresh.stdout and "releases that ran" in fresh.stdout
    assert run_plaza("migrate", data_dir=data_dir).returncode == 0
    done = run_plaza("migrate", "--check", data_dir=data_dir)
    assert done.returncode == 0 and "(last run by Plaza 1.0.0); Plaza 1.0.0 has nothing to apply." in done.stdout, done

    with sqlite3.connect(data_dir / "plaza.sqlite") as db:
        newest = db.execute("SELECT MAX(version) FROM plaza_migrations").fetchone()[0]
        db.execute("INSERT INTO plaza_migrations VALUES (?, 'from the future', 0)", (newest + 1,))
        db.execute("INSERT INTO plaza_releases VALUES ('9.0.0', ?, 1)", (newest + 1,))
    message = (f"The database was migrated by Plaza 9.0.0 (schema {newest + 1}); this binary, Plaza 1.0.0, knows "
               f"schema {newest} at most.")
    for command in (["migrate", "--check"], ["migrate"], ["serve", "--port", str(free_port())]):
        refused = run_plaza(*command, data_dir=data_dir)
        assert refused.returncode != 0 and message in refused.stderr, (command, refused)


def test_a_settings_file_is_read_and_the_environment_wins_over_it(data_dir: Path, tmp_path: Path):
    """PLAZA_ENV_FILE (or --env-file) names a KEY=value file, as plaza.service's EnvironmentFile;
    the environment wins over it, and a file that cannot be read stops the server with its path."""
    settings = tmp_path / "plaza.env"
    settings.write_text("# as in packaging/plaza.env\nPLAZA_INSTANCE_NAME=From the file\n"
                        "PLAZA_REGISTRATIONS=closed\n")
    env = {"PLAZA_ENV_FILE": str(settings), "PLAZA_REGISTRATIONS": "invite"}
    with PlazaServer(data_dir, tmp_path / "plaza.log", env=env).running() as server:
        about = expect(server.client().get("/api/v1/about"), 200)
        assert about["name"] == "From the file" and about["registrations"] == "invite", about
    missing = subprocess.run(
        [str(BINARY), "migrate", "--data-dir", str(data_dir), "--env-file", str(tmp_path / "nowhere.env")],
        env=plaza_env(), capture_output=True, text=True, timeout=120)
    assert missing.returncode != 0 and str(tmp_path / "nowhere.env") in missing.stderr, missing


def test_setup_writes_the_settings_file_and_makes_the_first_admin(tmp_path: Path):
    """`plaza setup` without a terminal takes its flags, writes the settings file (0640) the
    server then reads, and makes the administrator; it does not overwrite the file unasked."""
    settings, data = tmp_path / "plaza.env", tmp_path / "data"
    args = [str(BINARY), "setup", "--env-file", str(settings), "--public-url", "https://river.example",
            "--name", "Riverside", "--registrations", "invite", "--data-dir", str(data),
            "--admin-username", "root", "--admin-email", "root@example.com", "--admin-password", "correct horse battery"]
    made = subprocess.run(args, env=plaza_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert made.returncode == 0, made
    assert "Made the administrator root" in made.stdout
    text = settings.read_text()
    for line in ["PLAZA_PUBLIC_URL=https://river.example", "PLAZA_INSTANCE_NAME=Riverside", "PLAZA_REGISTRATIONS=invite",
                 f"PLAZA_DATA_DIR={data}", "# PLAZA_DATABASE_URL=", "# PLAZA_SMTP_URL="]:
        assert line + ("" if line.endswith("=") else "\n") in text, (line, text)
    assert settings.stat().st_mode & 0o777 == 0o640
    # The key two-factor secrets are sealed with, beside it, named by it.
    key = tmp_path / "secret.key"
    assert f"PLAZA_SECRET_KEY_FILE={key}\n" in text and key.stat().st_mode & 0o777 == 0o640
    assert len(key.read_text().strip()) == 44, key.read_text()
    checked = subprocess.run([str(BINARY), "check", "--env-file", str(settings)], env=plaza_env(),
                             capture_output=True, text=True, timeout=120)
    assert "ok      secret key: two-factor secrets are sealed" in checked.stdout, checked
    new_key = subprocess.run([str(BINARY), "secrets", "new-key"], capture_output=True, text=True, timeout=60)
    assert new_key.returncode == 0 and len(new_key.stdout.strip()) == 44 and new_key.stdout != key.read_text()
    again = subprocess.run(args, env=plaza_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert again.returncode != 0 and "exists" in again.stderr and settings.read_text() == text

    # The server reads it (the command line's --data-dir is the same folder).
    with PlazaServer(data, tmp_path / "plaza.log", env={"PLAZA_ENV_FILE": str(settings)}).running() as server:
        about = expect(server.client().get("/api/v1/about"), 200)
        assert about["name"] == "Riverside" and about["registrations"] == "invite", about
        root = server.client(expect(server.client().post(
            "/api/v1/auth/login", json={"login": "root", "password": "correct horse battery"}), 200)["token"])
        expect(root.post("/api/v1/admin/invites", json={}), 201)

    # `plaza user role` makes a moderator, who handles reports and runs nothing else.
    for command in (["user", "create", "--username", "mia", "--email", "mia@example.com", "--password",
                     "correct horse battery"], ["user", "role", "--username", "mia", "moderator"]):
        done = subprocess.run([str(BINARY), *command, "--env-file", str(settings)], env=plaza_env(),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done
    assert "mia is a moderator now" in done.stdout, done
    with PlazaServer(data, tmp_path / "plaza.log", env={"PLAZA_ENV_FILE": str(settings)}).running() as server:
        mia = server.client(expect(server.client().post(
            "/api/v1/auth/login", json={"login": "mia", "password": "correct horse battery"}), 200)["token"])
        expect(mia.get("/api/v1/admin/reports"), 200)
        expect(mia.get("/api/v1/admin/overview"), 403)


def read_until(fd: int, wanted: bytes, seen: bytearray) -> None:
    """Reads the terminal `fd` into `seen` until `wanted` is in it (a hang guard of 600 reads)."""
    for _ in range(600):
        if wanted in seen:
            return
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                seen.extend(os.read(fd, 4096))
            except OSError:
                break
    raise AssertionError(f"no {wanted!r} in {bytes(seen)!r}")


def test_setup_asks_in_a_terminal_and_does_not_echo_the_password(tmp_path: Path):
    """`plaza setup` in a terminal (a pseudo-terminal here) asks for what no flag gave, offers
    its defaults, and reads the password without echoing it."""
    settings, data = tmp_path / "plaza.env", tmp_path / "data"
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(str(BINARY), [str(BINARY), "setup", "--env-file", str(settings)], plaza_env())
    seen = bytearray()
    for prompt, answer in [("Who may sign up (open, approval, invite, closed) [approval]: ", ""),
                           ("The address people use (https://", "https://hill.example"),
                           ("The instance's name [Plaza]: ", "Hillside"),
                           ("Where the database and media live [/var/lib/plaza]: ", str(data)),
                           ("The first administrator's username: ", "root"),
                           ("Their email address: ", "root@example.com")]:
        read_until(fd, prompt.encode(), seen)
        os.write(fd, answer.encode() + b"\n")
    read_until(fd, b"Their password: ", seen)
    before_password = len(seen)
    os.write(fd, b"correct horse battery\n")
    read_until(fd, b"Made the administrator root", seen)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, bytes(seen)
    assert b"correct horse battery" not in seen[before_password:], bytes(seen)
    text = settings.read_text()
    for line in ["PLAZA_PUBLIC_URL=https://hill.example\n", "PLAZA_INSTANCE_NAME=Hillside\n",
                 "PLAZA_REGISTRATIONS=approval\n", f"PLAZA_DATA_DIR={data}\n"]:
        assert line in text, (line, text)
