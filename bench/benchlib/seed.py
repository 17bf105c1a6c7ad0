"""Loading the dataset into each system: Plaza through its public HTTP API, PocketBase through its
public record API (users, so the bcrypt work runs in parallel like Plaza's registrations) and its
batch API (everything else; PocketBase's documented bulk path), as superuser."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from .bulk import Loader, Result, check
from .dataset import Dataset
from .servers import PocketBase, Plaza

PB_TOKEN_SECONDS = 7 * 24 * 3600


def pb_id(prefix: str, i: int) -> str:
    """PocketBase record ids are 15 characters of [a-z0-9]; ours are deterministic."""
    return f"{prefix}{i:014d}"


@dataclass
class Phase:
    name: str
    count: int
    seconds: float

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else 0.0


@dataclass
class Seeded:
    """What the scenarios need to know about one loaded system."""
    system: str
    tokens: list[str] = field(default_factory=list)  # Authorization header value per user index
    user_ids: list[str] = field(default_factory=list)  # per user index
    post_ids: list[str] = field(default_factory=list)  # per post index
    phases: list[Phase] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(p.seconds for p in self.phases)

    def phase(self, name: str, count: int, started: float) -> None:
        self.phases.append(Phase(name, count, time.monotonic() - started))


def _log(system: str, phase: Phase) -> None:
    print(f"    {system}: {phase.name}: {phase.count:,} in {phase.seconds:.1f}s ({phase.rate:,.0f}/s)",
          flush=True)


# ---- Plaza -------------------------------------------------------------------------------

class PlazaSeeder:
    def __init__(self, server: Plaza, ds: Dataset, *, processes: int = 2, threads: int = 8, system: str = "Plaza"):
        self.server, self.ds = server, ds
        self.loader = Loader(server.port, processes=processes, threads=threads)
        self.system = system
        self.seeded = Seeded(system)

    def close(self) -> None:
        self.loader.close()

    def _timed(self, name: str, reqs: list, pick=None) -> list[Result]:
        t0 = time.monotonic()
        results = self.loader(reqs, pick=pick)
        check(f"{self.system} {name}", results)
        self.seeded.phase(name, len(results), t0)
        _log(self.system, self.seeded.phases[-1])
        return results

    def users_and_follows(self) -> None:
        users = self.ds.users()
        results = self._timed("register users", [
            ("POST", "/api/v1/auth/register", None,
             {"username": u.username, "email": u.email, "password": u.password}) for u in users
        ], pick=("token",))
        self.seeded.tokens = ["Bearer " + r.value for r in results]
        self.seeded.user_ids = [u.username for u in users]  # Plaza addresses users by username
        tok = self.seeded.tokens
        self._timed("follows", [
            ("PUT", f"/api/v1/users/{users[b].username}/follow", tok[a], None) for a, b in self.ds.follows()
        ])

    def posts(self, start: int, stop: int) -> None:
        tok = self.seeded.tokens
        results = self._timed(f"posts {start:,}-{stop:,}", (
            ("POST", "/api/v1/posts", tok[p.author], {"kind": "text", "title": p.title, "body": p.body})
            for p in self.ds.posts(start, stop)
        ), pick=("id",))
        assert len(self.seeded.post_ids) == start
        self.seeded.post_ids.extend(r.value for r in results)

    def comments(self) -> None:
        tok, ids = self.seeded.tokens, self.seeded.post_ids
        self._timed("comments", (
            ("POST", f"/api/v1/posts/{ids[c.post]}/comments", tok[c.author], {"body": c.body})
            for c in self.ds.comments()
        ))


# ---- PocketBase --------------------------------------------------------------------------

class PocketBaseSeeder:
    BATCH = 500  # records per /api/batch request (the migration allows up to 1,000)

    def __init__(self, server: PocketBase, ds: Dataset, *, processes: int = 2, threads: int = 8):
        self.server, self.ds = server, ds
        self.su = server.superuser_token()
        self.loader = Loader(server.port, processes=processes, threads=threads)
        # Batches run one transaction at a time on the server; two in flight keep it busy.
        self.batch_loader = Loader(server.port, processes=1, threads=2, chunk=2)
        self.seeded = Seeded("PocketBase")

    def close(self) -> None:
        self.loader.close()
        self.batch_loader.close()

    def _batched(self, name: str, records):
        t0 = time.monotonic()
        count = 0

        def batches():
            nonlocal count
            batch = []
            for collection, body in records:
                batch.append({"method": "POST", "url": f"/api/collections/{collection}/records", "body": body})
                if len(batch) == self.BATCH:
                    count += len(batch)
                    yield ("POST", "/api/batch", self.su, {"requests": batch})
                    batch = []
            if batch:
                count += len(batch)
                yield ("POST", "/api/batch", self.su, {"requests": batch})

        results = self.batch_loader(batches(), pick=None)
        check(f"PocketBase {name}", results)
        self.seeded.phase(name, count, t0)
        _log("PocketBase", self.seeded.phases[-1])

    def users_and_follows(self) -> None:
        users = self.ds.users()
        ids = [pb_id("u", u.index) for u in users]
        t0 = time.monotonic()
        results = self.loader([
            ("POST", "/api/collections/users/records", self.su,
             {"id": ids[u.index], "email": u.email, "password": u.password, "passwordConfirm": u.password,
              "name": u.username, "verified": True}) for u in users
        ])
        check("PocketBase create users", results)
        self.seeded.phase("create users", len(results), t0)
        _log("PocketBase", self.seeded.phases[-1])
        # Tokens without a password round-trip: the superuser-only impersonate endpoint.
        results = self.loader([
            ("POST", f"/api/collections/users/impersonate/{uid}", self.su, {"duration": PB_TOKEN_SECONDS})
            for uid in ids
        ], pick=("token",))
        check("PocketBase impersonate users", results)
        self.seeded.tokens = ["Bearer " + r.value for r in results]
        self.seeded.user_ids = ids
        self._batched("follows", (
            ("follows", {"follower": ids[a], "followee": ids[b]}) for a, b in self.ds.follows()
        ))

    def posts(self, start: int, stop: int) -> None:
        uid = self.seeded.user_ids
        self._batched(f"posts {start:,}-{stop:,}", (
            ("posts", {"id": pb_id("p", p.index), "author": uid[p.author], "title": p.title, "body": p.body})
            for p in self.ds.posts(start, stop)
        ))
        self.seeded.post_ids.extend(pb_id("p", i) for i in range(start, stop))

    def comments(self) -> None:
        uid, pid = self.seeded.user_ids, self.seeded.post_ids
        self._batched("comments", (
            ("comments", {"id": pb_id("c", c.index), "post": pid[c.post], "author": uid[c.author], "body": c.body})
            for c in self.ds.comments()
        ))
