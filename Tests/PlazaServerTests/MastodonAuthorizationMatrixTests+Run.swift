import Foundation
import HTTPTypes
import PlazaAPI
import Testing

@testable import PlazaMastodon
@testable import PlazaServer

extension MastodonAuthorizationMatrixTests {
    struct Report: Sendable {
        var operations = 0
        var rows = 0
        /// Cells of the nine people, and of the owner's one-scope tokens.
        var cells = 0
        var scopeCells = 0
        var mismatches: [String] = []
        /// The mismatches of rows marked with a known server bug, by the bug.
        var known: [String: [String]] = [:]

        mutating func add(_ other: Report) {
            cells += other.cells
            scopeCells += other.scopeCells
            mismatches += other.mismatches
            known.merge(other.known) { $0 + $1 }
        }

        mutating func mismatch(_ row: Row, _ text: String) {
            if let bug = row.knownIssue {
                known[bug, default: []].append("\(row.label) \(text)")
            } else {
                mismatches.append("\(row.label) \(text)")
            }
        }
    }

    @Test func everyMastodonOperationAsEveryoneAndWithEachScopeMatchesThePolicy() async throws {
        try await MatrixClient.withLiveApp { client in
            let report = try await Self.run(client)
            print(
                "mastodon authorization matrix: \(report.operations) operations, \(report.rows) rows, \(report.cells) cells of people and \(report.scopeCells) of scopes checked, \(report.mismatches.count) mismatches"
            )
            #expect(report.operations > 60, "the document lists Mastodon's operations")
            if !report.mismatches.isEmpty {
                Issue.record(
                    "\(report.mismatches.count) cells differ from the policy:\n\(report.mismatches.sorted().joined(separator: "\n"))"
                )
            }
            // Each bug must still show: when it is fixed, its mark must go.
            for bug in Set(Self.policy.compactMap(\.knownIssue)).sorted() {
                withKnownIssue("\(bug)") {
                    for mismatch in report.known[bug] ?? [] { Issue.record("\(mismatch)") }
                }
            }
        }
    }

    /// The table and the document name the same operations, and agree on who needs a token.
    static func coverage(_ documented: [String: Bool]) -> Report {
        var report = Report()
        let covered = Set(policy.map(\.operation))
        for operation in documented.keys.sorted() where !covered.contains(operation) {
            report.mismatches.append("\(operation): new operation without a policy row")
        }
        for operation in covered.sorted() where documented[operation] == nil {
            report.mismatches.append("\(operation): policy row for an operation the document does not have")
        }
        // OAuth's endpoints (outside /api) answer 401 for an app's credentials, not for a token.
        for row in policy where row.path.hasPrefix("/api/") {
            guard let required = documented[row.operation] else { continue }
            if required != (row.expect[.anonymous]?.statuses == [401]) {
                report.mismatch(
                    row,
                    ": the document says a token is \(required ? "required" : "optional"), the policy expects \(row.expect[.anonymous]?.description ?? "-") for anonymous"
                )
            }
        }
        return report
    }

    static func run(_ client: MatrixClient) async throws -> Report {
        let documented = try await AuthorizationMatrixTests.documentedOperations(client, mastodon: true)
        var report = coverage(documented)
        report.operations = documented.count
        let rows = policy.filter { documented[$0.operation] != nil }
        report.rows = rows.count
        let reads = rows.filter { $0.fixtures == .shared }
        let shared = try await client.makeMastodonWorld(media: true, scopes: scopes(of: reads))
        for row in reads {
            report.add(try await runRow(row, world: shared, actors: MatrixActor.runOrder, client: client))
        }
        report.add(try await runWrites(rows.filter { $0.fixtures != .shared }, client: client))
        return report
    }

    static func scopes(of rows: [Row]) -> Set<String> {
        Set(rows.flatMap { [$0.scope, $0.unrelated].compactMap { $0 } })
    }

    /// Each write on worlds of its own, a few at a time.
    static func runWrites(_ rows: [Row], client: MatrixClient) async throws -> Report {
        var jobs: [(row: Row, actors: [MatrixActor])] = []
        for row in rows {
            jobs += row.fixtures == .perCell ? MatrixActor.runOrder.map { (row, [$0]) } : [(row, MatrixActor.runOrder)]
        }
        var pending = jobs[...]
        return try await withThrowingTaskGroup(of: Report.self) { group in
            func start() {
                guard let job = pending.popFirst() else { return }
                group.addTask {
                    let world = try await client.makeMastodonWorld(media: job.row.media, scopes: scopes(of: [job.row]))
                    return try await runRow(job.row, world: world, actors: job.actors, client: client)
                }
            }
            for _ in 0..<AuthorizationMatrixTests.concurrentWorlds { start() }
            var report = Report()
            while let part = try await group.next() {
                report.add(part)
                start()
            }
            return report
        }
    }

    static func runRow(_ row: Row, world: MastodonMatrixWorld, actors: [MatrixActor], client: MatrixClient)
        async throws -> Report
    {
        var report = Report()
        if let prepare = row.prepare { try await prepare(client, world) }
        let target =
            try AuthorizationMatrixTests.fill(row.path, label: row.label) { name, previous in
                row.parameters[name]?(world) ?? world.defaultParameter(name, after: previous)
            } + row.query(world)
        // A stream that opens never ends: only its refusals are run.
        for actor in actors where !row.isStream || actor == .anonymous || actor == .suspended {
            guard let expected = row.expect[actor] else { continue }
            report.cells += 1
            let response = try await send(row, target, token: world.token(actor), world: world, client: client)
            let got = Int(response.status.code)
            guard expected.statuses.contains(got) else {
                report.mismatch(
                    row, "as \(actor.rawValue): expected \(expected), got \(got) \(response.text.prefix(100))")
                continue
            }
            guard (200..<300).contains(got) else { continue }
            for problem in AuthorizationMatrixTests.leaks(response.text, world: world.base, actor: actor) {
                report.mismatch(row, "as \(actor.rawValue): \(problem)")
            }
        }
        if actors.contains(.owner) {
            report.add(try await scopeCells(row, target: target, world: world, client: client))
        }
        return report
    }

    /// The owner's token with only an unrelated scope is refused (403); one with exactly the
    /// needed scope is not (neither 401 nor 403). A stream is only refused.
    static func scopeCells(_ row: Row, target: String, world: MastodonMatrixWorld, client: MatrixClient)
        async throws -> Report
    {
        var report = Report()
        for (scope, refused) in [(row.unrelated, true), (row.isStream ? nil : row.scope, false)] {
            guard let scope else { continue }
            guard let token = world.scoped[scope] else {
                throw MatrixFixtureError(description: "\(row.label): the world has no token for \(scope)")
            }
            report.scopeCells += 1
            let got = Int(try await send(row, target, token: token, world: world, client: client).status.code)
            if refused, got != 403 {
                report.mismatch(row, "with only `\(scope)`: expected 403, got \(got)")
            } else if !refused, got == 401 || got == 403 || got >= 500 {
                report.mismatch(row, "with exactly `\(scope)`: got \(got)")
            }
        }
        return report
    }

    static func send(
        _ row: Row, _ target: String, token: String?, world: MastodonMatrixWorld, client: MatrixClient
    ) async throws -> TestResponse {
        try await client.send(HTTPRequest.Method(row.method) ?? .get, target, token: token, body: row.body?(world))
    }
}
