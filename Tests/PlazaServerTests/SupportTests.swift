import Foundation
import NIOConcurrencyHelpers
import Testing

@testable import PlazaAPI
@testable import PlazaServer

@Suite("Support: timestamps, cursors, IDs, rate limits")
struct SupportTests {
    @Test(arguments: [
        (Int64(0), "1970-01-01T00:00:00.000Z"),
        (Int64(1_795_253_400_123), "2026-11-21T09:30:00.123Z"),
        (Int64(951_782_400_000), "2000-02-29T00:00:00.000Z"),
        (Int64(-1), "1969-12-31T23:59:59.999Z"),
    ])
    func timestampsFormatAsRFC3339WithMilliseconds(ms: Int64, text: String) {
        #expect(Timestamp(milliseconds: ms).description == text)
        #expect(Timestamp(rfc3339: text)?.milliseconds == ms)
    }

    @Test func timestampParsingAcceptsOffsetsAndRejectsNonsense() {
        #expect(Timestamp(rfc3339: "2026-11-21T10:30:00+01:00")?.description == "2026-11-21T09:30:00.000Z")
        #expect(Timestamp(rfc3339: "2026-11-21T09:30:00.5Z")?.description == "2026-11-21T09:30:00.500Z")
        #expect(Timestamp(rfc3339: "2026-11-21t09:30:00.123456z")?.description == "2026-11-21T09:30:00.123Z")
        for bad in [
            "", "yesterday", "2026-11-21", "2026-13-01T00:00:00Z", "2026-11-21T25:00:00Z", "2026-11-21T09:30:00",
            "2026-11-21T09:30:00.Z", "2026-11-21T09:30:00Zjunk",
        ] {
            #expect(Timestamp(rfc3339: bad) == nil, "\(bad)")
        }
    }

    @Test func patchFieldsDistinguishMissingNullAndValue() throws {
        let decode = { (json: String) in try JSONDecoder().decode(UpdatePostRequest.self, from: Data(json.utf8)) }
        #expect(try decode("{}").title == .keep)
        #expect(try decode(#"{"title": null}"#).title == .clear)
        #expect(try decode(#"{"title": "x"}"#).title == .set("x"))
        let encoded = String(
            decoding: try JSONEncoder().encode(UpdatePostRequest(title: .clear, body: .set("b"))), as: UTF8.self)
        #expect(encoded.contains(#""title":null"#) && encoded.contains(#""body":"b""#) && !encoded.contains("price"))
    }

    @Test func base64urlMatchesFoundationsAndReadsBackOnlyCanonicalText() {
        var random = SeededGenerator(seed: 7)
        for count in 0..<70 {
            let bytes = (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &random) }
            let text = ByteText.base64url(bytes)
            let foundation = Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
                .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(text == foundation)
            #expect(ByteText.bytes(base64url: text) == bytes)
        }
        // "AB" is the one spelling of 0x00; "AA" is 0x00 too but "AB" sets an unused bit.
        #expect(ByteText.bytes(base64url: "AA") == [0])
        for bad in ["AB", "A", "AAAAA", "AA==", "a+b/", "é"] {
            #expect(ByteText.bytes(base64url: bad) == nil, "\(bad)")
        }
        #expect(ByteText.hex([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
    }

    @Test func aPageSplitsOffTheExtraRowAndPointsAfterItsLastRow() {
        let page = PageRequest(limit: 2, cursor: nil)
        #expect(page.fetchLimit == 3)
        let full = page.split([10, 20, 30]) { Cursor(time: Int64($0), id: Int64($0)) }
        #expect(Array(full.rows) == [10, 20])
        #expect(
            full.next.flatMap(Cursor.init(encoded:)) == Cursor(time: 20, id: 20),
            "after the page's last row, not the extra one")
        let last = page.split([10, 20]) { Cursor(time: Int64($0), id: Int64($0)) }
        #expect(Array(last.rows) == [10, 20] && last.next == nil)
        #expect(page.split([Int]()) { Cursor(time: Int64($0), id: Int64($0)) }.next == nil)
    }

    @Test func cursorsRoundTripAndRejectForgeries() {
        let cursor = Cursor(time: 1_795_253_400_123, id: 382_464_562_405_466_112)
        #expect(Cursor(encoded: cursor.encoded) == cursor)
        // Every padding length comes out without '=' and reads back.
        var lengths = Set<Int>()
        for i in 0..<200 {
            let ranked = Cursor(time: Int64(i), id: Int64(i) * 7_919_000_003, score: -Double(i) * 0.734 - 1e-9)
            #expect(Cursor(encoded: ranked.encoded) == ranked && !ranked.encoded.contains("="))
            lengths.insert(ranked.encoded.count % 4)
        }
        #expect(lengths == [0, 2, 3])
        for bad in ["", "!!!", "MTIz", String(repeating: "A", count: 100), Data("a:b".utf8).base64EncodedString()] {
            #expect(Cursor(encoded: bad) == nil, "\(bad)")
        }
    }

    @Test func idsAreUniqueAndIncreaseWithTime() {
        let generator = IDGenerator(node: 5)
        let now = Timestamp.now
        let ids = (0..<10_000).map { _ in generator.next(at: now) }
        #expect(Set(ids).count == ids.count)
        #expect(ids == ids.sorted())
        let later = generator.next(at: Timestamp(milliseconds: now.milliseconds + 5))
        #expect(later > ids.last!)
        // A clock that steps back does not produce smaller IDs.
        #expect(generator.next(at: Timestamp(milliseconds: now.milliseconds - 1000)) > later)
        #expect(IDGenerator(node: 6).next(at: now) != IDGenerator(node: 5).next(at: now))
    }

    /// Heap trims: one waits at a time and answers every request made meanwhile; each starts
    /// `spacing` after the last one started, or at once when that is long past.
    @Test func heapTrimsRunOneAtATimeSpacedApart() {
        var schedule = FreeHeap.Schedule()
        let t0 = DispatchTime(uptimeNanoseconds: 1_000_000_000_000)
        let spacing = UInt64(FreeHeap.spacing.milliseconds) * 1_000_000
        #expect(schedule.request(at: t0) == t0)
        #expect(schedule.request(at: t0 + .seconds(1)) == nil)
        schedule.start(at: t0)
        #expect(
            schedule.request(at: t0 + .seconds(1)) == DispatchTime(uptimeNanoseconds: t0.uptimeNanoseconds + spacing))
        #expect(schedule.request(at: t0 + .seconds(2)) == nil)
        let second = DispatchTime(uptimeNanoseconds: t0.uptimeNanoseconds + spacing)
        schedule.start(at: second)
        let late = DispatchTime(uptimeNanoseconds: second.uptimeNanoseconds + 5 * spacing)
        #expect(schedule.request(at: late) == late)
    }

    @Test func tokenBucketRefillsOverTime() async throws {
        let limiter = RateLimiter(policy: .standard)
        let limit = RateLimiter.Limit(burst: 2, perMinute: 60)
        let t0 = Timestamp(milliseconds: 1_000_000)
        #expect(try await limiter.take("k", limit: limit, now: t0) == nil)
        #expect(try await limiter.take("k", limit: limit, now: t0) == nil)
        #expect(try await limiter.take("k", limit: limit, now: t0) == 1)
        #expect(try await limiter.take("other", limit: limit, now: t0) == nil)
        #expect(try await limiter.take("k", limit: limit, now: Timestamp(milliseconds: 1_001_000)) == nil)
    }

    @Test func rateLimitsAnswer429WithRetryAfterAndCanBeTurnedOff() async throws {
        let tight = RateLimiter.Policy(
            reads: .init(burst: 3, perMinute: 1), writes: .init(burst: 2, perMinute: 1),
            registrations: .init(burst: 2, perMinute: 1))
        try await withApp({
            $0.http.rateLimits = true
            $0.http.rateLimitPolicy = tight
        }) { api async throws in
            let ana = try await api.register("ana")
            _ = try await api.register("bob")
            let third = try await api.call(
                .post, "/auth/register",
                json: RegisterRequest(username: "carol", email: "c@example.com", password: "long enough"))
            #expect(third.status == .tooManyRequests)
            #expect(Int(third.headers[.retryAfter] ?? "") ?? 0 > 0)
            for _ in 0..<3 { #expect(try await api.get("/feed/global", as: ana).status == .ok) }
            let limited = try await api.get("/feed/global", as: ana)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.error?.code == "rate_limited")
        }
        try await withApp({
            $0.http.rateLimits = false
            $0.http.rateLimitPolicy = tight
        }) { api async throws in
            for i in 0..<4 { _ = try await api.register("user\(i)") }
            for _ in 0..<10 { #expect(try await api.get("/feed/global").status == .ok) }
        }
    }
}

@Suite("Database writes")
struct DatabaseWriteTests {
    struct Refused: Error, Equatable { let id: Int }

    @Test func poolsCountLendsAndVisitEachResourceOnce() async {
        let pool = ResourcePool([1, 2, 3])
        #expect(pool.lends == 0)
        let held = await pool.withResource { first in await pool.withResource { second in [first, second] } }
        #expect(Set(held).count == 2)
        let visited = NIOLockedValueBox<[Int]>([])
        await pool.withEach { resource in visited.withLockedValue { $0.append(resource) } }
        #expect(visited.withLockedValue { $0.sorted() } == [1, 2, 3])
        #expect(pool.lends == 5)
        // Every resource went back: three more can be held at once.
        let again = await pool.withResource { a in
            await pool.withResource { b in await pool.withResource { c in [a, b, c] } }
        }
        #expect(Set(again) == [1, 2, 3])
    }

    /// Many writes at once (on SQLite they share commits): each failing one is rolled back
    /// alone with its own error, every other one is committed, and each caller returns its own value.
    @Test func concurrentWritesCommitOrRollBackEachOnTheirOwn() async throws {
        try await withDatabase { db, _ in
            try await db.write { try await $0.exec("CREATE TABLE scratch (id BIGINT PRIMARY KEY, note TEXT NOT NULL)") }
            let outcomes = try await withThrowingTaskGroup(of: (Int, Result<Int, Refused>).self) { group in
                for id in 0..<60 {
                    group.addTask {
                        do {
                            let value = try await db.write { connection -> Int in
                                try await connection.exec(
                                    "INSERT INTO scratch (id, note) VALUES (\(bind: id), \(bind: "written"))")
                                if id % 6 == 5 { throw Refused(id: id) }
                                return id * 10
                            }
                            return (id, .success(value))
                        } catch let error as Refused {
                            return (id, .failure(error))
                        }
                    }
                }
                return try await group.reduce(into: [Int: Result<Int, Refused>]()) { $0[$1.0] = $1.1 }
            }
            for id in 0..<60 {
                #expect(outcomes[id] == (id % 6 == 5 ? .failure(Refused(id: id)) : .success(id * 10)))
            }
            let stored = try await db.read { try await $0.rows("SELECT id FROM scratch ORDER BY id") }.map {
                try $0.decode(column: "id", as: Int.self)
            }
            #expect(stored == (0..<60).filter { $0 % 6 != 5 })
        }
    }

    /// SQLite: while writes go on, what they commit reaches the database file itself, long
    /// before the writer's own checkpoint every `checkpointPages` pages (the checkpointer copies
    /// the WAL back after commits). The writes keep coming, so the idle release, which also
    /// checkpoints, never starts.
    @Test(.enabled(if: TestDatabase.postgresURL == nil))
    func committedPagesReachTheDatabaseFileWhileWritesGoOn() async throws {
        try await withDatabase { db, config in
            let marker = "marker-\(UUID().uuidString)"
            try await db.write {
                try await $0.exec("CREATE TABLE scratch (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            }
            try await db.write { try await $0.exec("INSERT INTO scratch (note) VALUES (\(bind: marker))") }
            func fileHoldsMarker() throws -> Bool {
                let file = try Data(contentsOf: URL(fileURLWithPath: config.database.sqlitePath))
                return file.range(of: Data(marker.utf8)) != nil
            }
            // The writer's own checkpoint waits for `checkpointPages` (8,192) WAL pages; 200 one-row writes are far
            // fewer, and they keep the idle release from starting.
            let autocheckpoint = try await db.write { try await $0.first("PRAGMA wal_autocheckpoint") }
            #expect(
                try autocheckpoint?.decode(column: "wal_autocheckpoint", as: Int.self) == SQLiteDriver.checkpointPages)
            var found = try fileHoldsMarker()
            for _ in 0..<200 where !found {
                try await db.write { try await $0.exec("INSERT INTO scratch (note) VALUES ('filler')") }
                try await Task.sleep(for: .milliseconds(20))
                found = try fileHoldsMarker()
            }
            #expect(found)
        }
    }

    /// SQLite: a database that has gone quiet gives the WAL's disk space back.
    @Test(.enabled(if: TestDatabase.postgresURL == nil))
    func aQuietDatabaseTruncatesItsWAL() async throws {
        try await withDatabase { db, config in
            try await db.write {
                try await $0.exec("CREATE TABLE scratch (id INTEGER PRIMARY KEY, note TEXT NOT NULL)")
            }
            let wal = config.database.sqlitePath + "-wal"
            func walSize() throws -> Int { try FileManager.default.attributesOfItem(atPath: wal)[.size] as! Int }
            #expect(try walSize() > 0)
            let deadline = ContinuousClock.now + .seconds(10)
            while try walSize() > 0, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            #expect(try walSize() == 0)
            // The database works on as before.
            try await db.write { try await $0.exec("INSERT INTO scratch (note) VALUES ('after')") }
            #expect(try await db.read { try await $0.rows("SELECT note FROM scratch") }.count == 1)
        }
    }
}
