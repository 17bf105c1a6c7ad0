"""The archive on a machine that has never seen Swift (docs/install.md).

A Debian 12 root made by debootstrap with only packaging/install-runtime.sh's packages
(scripts/clean-root.sh, cached outside the clone) gets the archive that `scripts/dist.sh --debug`
packs, the layout and the linking of `make dist` around a debug build, or the archive
PLAZA_DIST_ARCHIVE names (a release one from `make dist`, say). Plaza runs inside it as an
unprivileged user, chrooted in a mount namespace of its own (with /proc, as every server has), on
a loopback port; everything else goes through HTTP, as a person would.
"""

from __future__ import annotations

import os
import platform
import shutil
import signal
import subprocess
import tarfile
import time
from pathlib import Path

import pytest
import requests

from conftest import ROOT, PlazaServer, expect, png

NOBODY = 65534  # the unprivileged user the server runs as, as systemd's DynamicUser would give it
DATA = "/var/lib/plaza"


def needs_root_on_linux() -> None:
    """The clean root needs Linux and root (debootstrap, chroot). CI has both: there it must run."""
    if platform.system() == "Linux" and os.geteuid() == 0:
        return
    if os.environ.get("CI"):
        pytest.fail("the clean-root install test needs root on Linux, and CI must run it")
    pytest.skip("the clean-root install test needs root on Linux (debootstrap and chroot)")


@pytest.fixture(scope="module")
def archive() -> Path:
    needs_root_on_linux()
    if named := os.environ.get("PLAZA_DIST_ARCHIVE"):
        return Path(named).resolve()
    lines = subprocess.run([str(ROOT / "scripts" / "dist.sh"), "--debug"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.splitlines()
    # The last line: "==> dist/plaza-….tar.gz (71M; …)".
    return ROOT / lines[-1].split()[1]


@pytest.fixture(scope="module")
def clean_root() -> Path:
    needs_root_on_linux()
    made = subprocess.run([str(ROOT / "scripts" / "clean-root.sh")], cwd=ROOT, check=True,
                          capture_output=True, text=True)
    return Path(made.stdout.strip().splitlines()[-1])


@pytest.fixture
def installed(archive: Path, clean_root: Path):
    """The archive unpacked to /opt/plaza of the clean root, an empty data folder owned by the
    server's user; both removed afterwards, so the cached root stays as it was made."""
    opt, data = clean_root / "opt" / "plaza", clean_root / DATA.lstrip("/")
    for folder in (opt, data):
        shutil.rmtree(folder, ignore_errors=True)
    opt.mkdir(parents=True)
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        for member in tar.getmembers():
            assert member.name == top or member.name.startswith(top + "/"), member.name
            member.name = member.name[len(top) + 1:] or "."
        tar.extractall(opt, filter="tar")
    data.mkdir(parents=True)
    os.chown(data, NOBODY, NOBODY)
    yield clean_root
    for folder in (opt, data):
        shutil.rmtree(folder, ignore_errors=True)


def in_root(root: Path, *command: str, user: int | None = NOBODY) -> list[str]:
    """`command` run inside the root with /proc mounted, in a mount namespace that ends with it."""
    userspec = [f"--userspec={user}:{user}"] if user is not None else []
    script = 'root=$1; shift; mount -t proc proc "$root/proc" && exec chroot "$@"'
    return ["unshare", "--mount", "--fork", "sh", "-c", script, "sh", str(root), *userspec, str(root), *command]


class ChrootedPlaza(PlazaServer):
    """`plaza serve` from the archive, inside the clean root."""

    def __init__(self, root: Path, log_path: Path):
        super().__init__(Path(DATA), log_path)
        self.root = root

    def command(self, *args: str) -> list[str]:
        return in_root(self.root, "/opt/plaza/plaza", *args)

    def terminate(self, process: subprocess.Popen) -> None:
        # The server is unshare's child (sh exec'd chroot, which exec'd plaza): SIGTERM goes to it,
        # and unshare exits with its status.
        children = Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()
        assert len(children) == 1, children
        os.kill(int(children[0]), signal.SIGTERM)


def test_the_archive_runs_on_a_clean_debian_with_only_the_documented_packages(installed: Path, tmp_path: Path):
    root = installed
    # Nothing of Swift in the root but what the binary carries.
    swift_libraries = [str(p) for p in root.rglob("libswift*.so*")] + [str(p) for p in root.rglob("libFoundation*.so*")]
    assert swift_libraries == []
    linked = subprocess.run(in_root(root, "ldd", "/opt/plaza/plaza"), check=True, capture_output=True,
                            text=True).stdout
    assert "not found" not in linked and "swift" not in linked.lower(), linked
    # The version and the commit it was built from.
    version = subprocess.run(in_root(root, "/opt/plaza/plaza", "--version"), check=True, capture_output=True,
                             text=True).stdout.strip()
    commit = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    assert version.startswith("1.0.0 (commit " + commit), version
    # The archive's own checksums hold.
    subprocess.run(["sha256sum", "--check", "--quiet", "SHA256SUMS"], cwd=root / "opt" / "plaza", check=True)

    server = ChrootedPlaza(root, tmp_path / "plaza.log")
    with server.running():
        _, ana = server.register("ana")
        # A photo: libvips (libvips42) decodes it and writes its variants.
        media = expect(ana.post("/api/v1/me/media", files={"file": ("dunes.png", png(800, 600), "image/png")}), 201)
        post = expect(ana.post("/api/v1/posts", json={"kind": "photo", "body": "Dunes", "mediaIds": [media["id"]]}),
                      201)
        read = expect(server.client().get(f"/api/v1/posts/{post['id']}"), 200)
        assert read["body"] == "Dunes" and [m["id"] for m in read["media"]] == [media["id"]], read
        image = requests.get(server.url + read["media"][0]["variants"]["thumbnail"], timeout=10)
        assert image.status_code == 200 and image.headers["Content-Type"].startswith("image/"), image.status_code
        assert len(image.content) > 100
        # A video: ffmpeg and ffprobe (the ffmpeg package) transcode it.
        clip = tmp_path / "clip.mov"
        subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-f", "lavfi", "-i",
                        "testsrc=size=320x180:rate=25", "-t", "2", "-c:v", "libx264", "-preset", "ultrafast",
                        "-pix_fmt", "yuv420p", "-y", str(clip)], check=True)
        video = expect(ana.post("/api/v1/me/media", files={"file": ("clip.mov", clip.read_bytes(), "video/quicktime")}),
                       202)
        clip_post = expect(ana.post("/api/v1/posts", json={"kind": "photo", "mediaIds": [video["id"]]}), 201)
        state = wait_for_video(ana, clip_post["id"])
        assert state == "ready", server.log()
        # The web app's pages and files come from the archive's resources folder.
        page = requests.get(server.url + f"/p/{post['id']}", timeout=10)
        assert page.status_code == 200 and "Dunes" in page.text
        # The container's health check: the binary asks itself (the image has no curl).
        health = subprocess.run(in_root(root, "/opt/plaza/plaza", "health", "--url", server.url),
                                capture_output=True, text=True)
        assert health.returncode == 0 and ": 200" in health.stdout, health
    # plaza check, as the operator runs it: libvips and ffmpeg found, the data folder writable,
    # warnings for what this bare set-up lacks (public URL, mail); a folder the user cannot
    # write is an error (exit status 1).
    checked = subprocess.run(in_root(root, "/opt/plaza/plaza", "check", "--data-dir", DATA), capture_output=True,
                             text=True)
    assert checked.returncode == 0, checked
    for line in ["ok      libvips: images can be processed", "ok      ffmpeg: ", f"ok      data folder: {DATA} is writable",
                 "warning public URL: PLAZA_PUBLIC_URL is not set", "warning mail: PLAZA_SMTP_URL is not set",
                 "ok      database: SQLite in /var/lib/plaza answers (schema "]:
        assert line in checked.stdout, (line, checked.stdout)
    refused = subprocess.run(in_root(root, "/opt/plaza/plaza", "check", "--data-dir", "/opt/plaza/docs"),
                             capture_output=True, text=True)
    assert refused.returncode == 1 and "error   data folder: /opt/plaza/docs is not writable" in refused.stdout, refused
    # server.running() asserted the graceful stop (status 0 after SIGTERM).
    stored = root / DATA.lstrip("/")
    assert (stored / "plaza.sqlite").stat().st_uid == NOBODY


def wait_for_video(client, post_id: str) -> str:
    """The video's state once it is no longer processing (transcoding takes seconds)."""
    deadline = time.monotonic() + 120
    while True:
        state = expect(client.get(f"/api/v1/posts/{post_id}"), 200)["media"][0]["state"]
        if state != "processing" or time.monotonic() > deadline:
            return state
        time.sleep(0.5)


def test_the_service_unit_is_valid_and_hardened(installed: Path, tmp_path: Path):
    """systemd-analyze verify finds nothing to say of the archive's units (their paths pointed at
    where the archive is unpacked here), and its offline security review rates the server's "OK"."""
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing (Debian's systemd package)")
    units = []
    for name in ("plaza.service", "plaza-backup.service", "plaza-backup.timer"):
        unit = tmp_path / name
        unit.write_text((installed / "opt/plaza" / name).read_text().replace("/opt/plaza/", f"{installed}/opt/plaza/"))
        units.append(str(unit))
    verified = subprocess.run(["systemd-analyze", "verify", *units], capture_output=True, text=True)
    assert verified.returncode == 0 and verified.stdout + verified.stderr == "", verified.stdout + verified.stderr
    unit = units[0]
    review = subprocess.run(["systemd-analyze", "security", "--offline=yes", "--no-pager", unit],
                            capture_output=True, text=True)
    overall = [line for line in review.stdout.splitlines() if "Overall exposure level" in line]
    assert overall, review.stdout + review.stderr
    # "→ Overall exposure level for plaza.service: 1.4 OK 🙂": 0 is the most locked down, 10 none.
    exposure = float(overall[0].split(":")[1].split()[0])
    assert exposure <= 2.0, overall[0]



def test_the_container_image_runs_what_the_clean_root_tests():
    """No container engine runs here, so the image is not built by the tests; its run stage is
    what the test above proves: Debian 12 and packaging/install-runtime.sh, the archive
    scripts/dist.sh packs, and the health check that test runs."""
    containerfile = (ROOT / "Containerfile").read_text()
    assert "ARG RUN_IMAGE=debian:bookworm-slim" in containerfile
    assert "RUN sh /tmp/install-runtime.sh" in containerfile and "RUN scripts/dist.sh" in containerfile
    assert 'CMD ["/opt/plaza/plaza", "health"]' in containerfile and "USER plaza" in containerfile


def test_the_docs_show_the_settings_file_the_archive_ships():
    """docs/configuration.md quotes packaging/plaza.env (the archive's plaza.env.example) whole."""
    shipped = (ROOT / "packaging" / "plaza.env").read_text()
    assert f"```sh\n{shipped}```" in (ROOT / "docs" / "configuration.md").read_text()
