import Foundation
import Hummingbird
import HummingbirdTesting
import JWTKit
import Logging
import NIOCore
import Testing

@testable import PlazaAPI
@testable import PlazaMastodon
@testable import PlazaServer

/// A seeded mutation fuzzer over every parser of untrusted input, through the real parsing
/// code: `Fuzz.cases` cases each (30,000 by default; `make fuzz` runs a million), replayable
/// with `PLAZA_FUZZ_SEED`. Input that makes a parser trap stops the test process, which fails
/// the run; each test also checks what the parser must guarantee (errors are 4xx `PlazaError`s,
/// valid input round-trips, chunking does not change a streaming parse).
@Suite struct FuzzTests {
    /// A 4xx `PlazaError`, the only way a parser may refuse input.
    static func expectClientError(_ error: any Error, _ input: [UInt8]) {
        guard let error = error as? PlazaError, (400..<500).contains(error.status.code) else {
            Issue.record("\(error) is not a 4xx PlazaError, for input \(input)")
            return
        }
    }

    static func request(path: String, headers: HTTPFields = [:]) -> Request {
        Request(
            head: HTTPRequest(method: .get, scheme: "http", authority: "plaza.test", path: path, headerFields: headers),
            body: .init(buffer: ByteBuffer()))
    }

    // MARK: multipart

    static let boundary = "b0undary-Xy"
    static func form(_ parts: [(headers: String, body: [UInt8])], preamble: String = "", epilogue: String = "")
        -> [UInt8]
    {
        var bytes = Array(preamble.utf8)
        for part in parts {
            bytes += Array("--\(boundary)\r\n\(part.headers)\r\n\r\n".utf8) + part.body + Array("\r\n".utf8)
        }
        return bytes + Array("--\(boundary)--\r\n\(epilogue)".utf8)
    }

    /// The events of a whole body fed in chunks cut at `cuts`, with body runs joined; or the failure.
    static func parse(_ bytes: [UInt8], cuts: [Int]) -> Result<[MultipartParser.Event], MultipartParser.Malformed> {
        var parser = MultipartParser(boundary: boundary)
        var events: [MultipartParser.Event] = []
        var start = 0
        do {
            for end in cuts.sorted() + [bytes.count] where end >= start {
                for event in try parser.feed(Array(bytes[start..<end])) {
                    if case .body(let more) = event, case .body(let run) = events.last {
                        events[events.count - 1] = .body(run + more)
                    } else {
                        events.append(event)
                    }
                }
                start = end
            }
            try parser.finish()
            return .success(events)
        } catch {
            return .failure(error)
        }
    }

    /// Mutated bodies: the parser never traps, and how the bytes are cut into chunks never
    /// changes the outcome (the same events, or a failure either way).
    @Test func multipartBodies() throws {
        let seeds = [
            Self.form([
                (
                    "Content-Disposition: form-data; name=\"file\"; filename=\"a.jpg\"\r\nContent-Type: image/jpeg",
                    [0xFF, 0xD8, 0xFF, 0x0D, 0x0A, 0x2D, 0x2D, 0x62]
                )
            ]),
            Self.form(
                [
                    ("Content-Disposition: form-data; name=\"caption\"", Array("hi".utf8)),
                    ("Content-Disposition: form-data; name=file", Array("\r\n--b0undary\r\n".utf8)),
                ],
                preamble: "ignored\r\n", epilogue: "ignored too"),
            Self.form([]),
        ]
        var outcomes = (ok: 0, failed: 0)
        try Fuzz.run(
            "multipart", seeds: seeds,
            dictionary: [
                "--\(Self.boundary)", "\r\n--\(Self.boundary)--", "Content-Disposition: ", "form-data; name=\"file\"",
                ":",
            ]
        ) { input, random in
            let whole = Self.parse(input, cuts: [])
            let cuts = (0..<Int.random(in: 1...4, using: &random)).map { _ in
                Int.random(in: 0...input.count, using: &random)
            }
            let chunked = Self.parse(input, cuts: cuts)
            if whole != chunked { Issue.record("cut at \(cuts): \(input)") }
            if case .success = whole { outcomes.ok += 1 } else { outcomes.failed += 1 }
            // The upload's own readers of the part headers.
            if case .success(let events) = whole {
                for case .headers(let headers) in events { _ = MultipartUpload.fieldName(headers) }
            }
            if whole != chunked { throw CancellationError() }
        }
        // Mutations must reach both sides, or the fuzzer tests little.
        #expect(outcomes.ok > Fuzz.cases / 50 && outcomes.failed > Fuzz.cases / 50, "\(outcomes)")
    }

    /// Valid forms with random part bodies (the delimiter's own bytes among them) come back
    /// exactly, however they are cut.
    @Test func multipartRoundTrips() {
        var random = SeededGenerator(seed: Fuzz.seed)
        let alphabet: [UInt8] = Array("\r\n-b0undary-Xy".utf8) + [0, 0xFF, 0x80]
        for _ in 0..<max(1, Fuzz.cases / 10) {
            let parts = (0..<Int.random(in: 0...3, using: &random)).map { i in
                (
                    headers: "Content-Disposition: form-data; name=\"f\(i)\"",
                    body: (0..<Int.random(in: 0...40, using: &random)).map { _ in
                        alphabet[Int.random(in: 0..<alphabet.count, using: &random)]
                    }
                )
            }
            let bytes = Self.form(parts)
            var expected: [MultipartParser.Event] = []
            for (i, part) in parts.enumerated() {
                expected.append(.headers([.init(name: "content-disposition", value: "form-data; name=\"f\(i)\"")]))
                if !part.body.isEmpty { expected.append(.body(part.body)) }
                expected.append(.partEnd)
            }
            let cuts = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                Int.random(in: 0...bytes.count, using: &random)
            }
            let parsed = Self.parse(bytes, cuts: cuts)
            if parsed != .success(expected) {
                Issue.record("\(bytes) cut at \(cuts)")
                return
            }
        }
    }

    @Test func multipartLimits() {
        let many = Self.form((0..<17).map { _ in ("Content-Disposition: form-data; name=x", []) })
        #expect(Self.parse(many, cuts: []) == .failure(.init(reason: "more than 16 parts")))
        let longHeader = Self.form([("X-Long: " + String(repeating: "a", count: 9000), [])])
        #expect(
            Self.parse(longHeader, cuts: [100])
                == .failure(.init(reason: "a part's headers are longer than 8192 bytes")))
        // The bodies of the issue that stopped the server under MultipartKit.
        let bareLF =
            Array("--B\r\nContent-Disposition: form-data; name=\"file\"\n\n\r\n".utf8) + [0x80]
            + Array(":y\r\n\r\nx\r\n--B--\r\n".utf8)
        var parser = MultipartParser(boundary: "B")
        #expect(throws: MultipartParser.Malformed.self) { _ = try parser.feed(bareLF) }
    }

    @Test func contentTypesAndDispositions() {
        let seeds = Fuzz.seeds(
            "multipart/form-data; boundary=\(Self.boundary)",
            "multipart/form-data; boundary=\"a b'()+_,-./:=?\"; charset=utf-8",
            "form-data; name=\"file\"; filename=\"caf\\\"\u{E9}.jpg\"", "form-data; name=file")
        Fuzz.run("header parameters", seeds: seeds, dictionary: [";", "=", "\"", "\\", "boundary=", "name="]) {
            input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let boundary = MultipartUpload.boundary(of: text), !MultipartParser.isValidBoundary(boundary) {
                Issue.record("boundary \(boundary) from \(input)")
            }
            _ = MultipartUpload.fieldName([.init(name: "content-disposition", value: text)])
            _ = Gzip.isAccepted(by: text)
        }
        #expect(
            HeaderParameters("form-data; name=\"a\\\"b\"; filename=x.jpg")?.parameters == [
                "name": "a\"b", "filename": "x.jpg",
            ])
        #expect(HeaderParameters("form-data; name=\"a") == nil)
        #expect(HeaderParameters("form-data; name=a; name=b") == nil)
    }

    // MARK: requests

    /// JSON bodies of every request type decode or fail with a 4xx naming the problem.
    @Test func jsonBodies() {
        let seeds = Fuzz.seeds(
            #"{"username":"ana","email":"ana@example.com","password":"correct horse","displayName":"Ana"}"#,
            ##"{"kind":"activity","title":"Run","body":"5 km","spaces":["cs101"],"mediaIds":["123"],"link":{"url":"https://example.com"},"location":{"latitude":1.5,"longitude":-2,"name":"Park"},"activity":{"type":"run","emoji":"🏃","color":"#ff0000","progress":50},"price":"$5"}"##,
            #"{"displayName":null,"bio":"x","status":{"kind":"safe","text":"ok"}}"#,
            #"{"currentPassword":"a","newPassword":"bbbbbbbbbb"}"#, #"{"ids":["1","2"]}"#,
            #"{"postId":"1","note":"n","url":"http://a"}"#, "[]", "{}")
        let types: [any Decodable.Type] = [
            RegisterRequest.self, LoginRequest.self, UpdateMeRequest.self, ChangePasswordRequest.self,
            SetAvatarRequest.self, CreatePostRequest.self,
            UpdatePostRequest.self, CreateCommentRequest.self, CreateSpaceRequest.self, UpdateSpaceRequest.self,
            CollectionRequest.self,
            SaveItemRequest.self, UpdateItemRequest.self, MarkNotificationsReadRequest.self, JSONValue.self,
        ]
        Fuzz.run(
            "json", seeds: seeds,
            dictionary: [
                "null", "true", "1e309", "-0", "\"\\u0000\"", "\"\\ud800\"", "[", "{", "}", "]", ",", "\"kind\":",
            ]
        ) { input, random in
            let type = types[Int.random(in: 0..<types.count, using: &random)]
            do {
                _ = try PlazaRequestDecoder.decode(type, from: ByteBuffer(bytes: input))
            } catch {
                Self.expectClientError(error, input)
            }
        }
    }

    @Test func queryStrings() {
        let seeds = Fuzz.seeds(
            "/x?limit=20&cursor=\(Cursor(time: 1, id: 2).encoded)&since=2026-11-21T09:30:00.123Z&until=2026-11-22T00:00:00Z&kind=photo",
            "/x?q=caf%C3%A9+bar&in=title&near=52.5,13.4&radiusKm=2.5&space=cs101",
            "/x?days=365&sort=views&unread=true&lastEventId=12")
        Fuzz.run(
            "query", seeds: seeds,
            dictionary: ["&", "=", "%", "%00", "%ff", "+", "?", "#", "limit=", "cursor=", "near="]
        ) { input, _ in
            let request = Self.request(path: String(decoding: input, as: UTF8.self))
            for parse in [
                { _ = try request.pageRequest() }, { _ = try request.timestampParameter("since") },
                { _ = try request.enumParameter("kind", as: PostKind.self) },
                { _ = try SearchController.near(request.query("near"), radius: request.query("radiusKm")) },
                { _ = try request.query("q").map(SearchController.text) },
                { _ = try StreamController.lastEventID(request) },
            ] as [() throws -> Void] {
                do { try parse() } catch { Self.expectClientError(error, input) }
            }
        }
    }

    /// Search text in every script, names, languages and zones: whatever arrives, folding and
    /// segmentation end (no trap), a query's tokens are what the index would hold for the same
    /// text, and cleaned names hold no bidi control.
    @Test func scriptsNamesLanguagesAndZones() {
        let seeds = Fuzz.seeds(
            "東京のラーメンが美味しい ramen🍜", "ฉันชอบกินข้าวผัด", "서울에서 \"김치찌개\"", "Straße İSTANBUL ılık ＰＬＡＺＡ",
            "مَدْرَسَةٌ \u{202E}evil\u{202C}", "👩\u{200D}💻\u{FE0F} می\u{200C}خواهم",
            "de-CH;q=0.9, en;q=0.5, *;q=0.1", "America/Los_Angeles", "zh-Hant-TW")
        Fuzz.run(
            "scripts names languages zones", seeds: seeds,
            dictionary: ["\u{202E}", "\u{200D}", "\u{200B}", "ー", "ß", "İ", ";q=", ",", "\"", "/", "\u{E0041}", "ｶ"]
        ) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            let indexed = SearchFolding.indexText(text)
            if let query = SearchText(text) {
                #expect(query.terms.count <= SearchText.maxTerms)
                _ = query.fts5(in: .all)
                _ = query.tsquery(in: .title)
            }
            #expect(SearchFolding.fold(indexed) == indexed, "indexed text is already folded: \(input)")
            let name = Validate.trustworthy(text, lines: false)
            #expect(
                !name.unicodeScalars.contains {
                    (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value)
                })
            #expect(Validate.trustworthy(name, lines: false) == name, "cleaning is idempotent: \(input)")
            _ = Language.preferred(acceptLanguage: text)
            _ = Validate.languageTag(text)
            _ = Validate.timeZone(text)
        }
    }

    /// Keyword filters: any phrase on any text decides without a trap; a whole-word match is
    /// also a substring match; a phrase found in a text is found in it with more around it.
    @Test func keywordFilters() {
        let seeds = Fuzz.seeds(
            "spoiler|The SPOILERS are here", "café|Meet at the CAFE!", "ラーメン|東京のラーメン", "c++|I like c++.",
            "straße|STRASSE", "x|", "|text", "a\u{301}|a\u{301}b", "\u{200B}word|a word\u{200B}", "aaab|aaaaaaaaab")
        Fuzz.run(
            "keyword filters", seeds: seeds,
            dictionary: ["|", " ", "_", "\u{301}", "ß", "İ", "\u{200D}", "ｶ", "-", "١", "🍜", "\u{FE0F}"]
        ) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            let parts = text.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let phrase = parts[0]
            let body = parts.count > 1 ? parts[1] : ""
            let whole = KeywordFilters.matches(phrase, in: body, wholeWord: true)
            let anywhere = KeywordFilters.matches(phrase, in: body, wholeWord: false)
            #expect(!whole || anywhere, "a whole-word match is a substring match: \(input)")
            if anywhere {
                #expect(KeywordFilters.matches(phrase, in: "x" + body + "x", wholeWord: false), "\(input)")
            }
            if whole {
                #expect(KeywordFilters.matches(phrase, in: "( " + body + " )", wholeWord: true), "\(input)")
            }
            let filter = KeywordFilter(
                id: "1", phrase: phrase, wholeWord: input.count % 2 == 0, contexts: [.home], action: .warn,
                expiresAt: nil, createdAt: Timestamp(milliseconds: 0))
            let verdict = KeywordFilters([filter], context: .home).verdict(for: [body, phrase])
            // A phrase is found in itself, unless folding leaves nothing of it.
            #expect(verdict == (TextFolding.fold(phrase).isEmpty ? nil : .warn([filter])), "\(input)")
        }
    }

    /// Polls: any options either make a valid poll (2–10 different, non-empty, one-line options
    /// of at most 50 characters) or a 422; any choices are accepted in range or refused; any text
    /// in the poll column reads as a poll or as none, and a poll's column reads back as written.
    @Test func polls() {
        let seeds = Fuzz.seeds(
            "ramen|udon|soba", "a|A", "one", "x|\n|y", "|||||||||||", "😀|مرحبا|\u{202E}rtl",
            "m 5 1 1,2 0 -|[\"a\",\"b\"]",
            "s -9 x 99999999999999999999,-1 1 3,2,1|[1]", "m 1 1 , 1 ,,|not json")
        Fuzz.run("polls", seeds: seeds, dictionary: ["|", " ", ",", "-", "[", "\"", "\n", "\u{0}", "m", "s", "9"]) {
            input, _ in
            let text = String(decoding: input, as: UTF8.self)
            let options = text.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
            let seconds = Int(input.first ?? 0) * 20_000
            do {
                let draft = try PollRules.draft(
                    PollInput(options: options, multiple: input.count % 2 == 0, expiresInSeconds: seconds))
                #expect(PollRules.optionCount.contains(draft.options.count))
                #expect(draft.options.allSatisfy { !$0.isEmpty && $0.count <= 50 && !$0.contains("\n") })
                #expect(Set(draft.options.map { $0.lowercased() }).count == draft.options.count)
                let stored = PollStore.Stored(
                    options: draft.options, tallies: draft.options.indices.map { $0 }, multiple: draft.multiple,
                    expiresAt: 99, voters: 3)
                let column =
                    "\(draft.multiple ? "m" : "s") 99 3 \(PollStore.tallies(stored.tallies)) 0 -|\(PollStore.optionsText(draft.options))"
                let read = PollColumn.poll(column, post: 7, now: 0)
                #expect(read?.options.map(\.title) == draft.options && read?.multiple == draft.multiple)
                #expect(read?.options.map(\.votes) == draft.options.map { _ in nil } && read?.votersCount == 3)
            } catch let error as PlazaError {
                #expect(error.status == .unprocessableContent)
            } catch {
                Issue.record("\(error)")
            }
            let choices = input.map { Int($0) - 3 }
            if let chosen = try? PollRules.choices(choices, count: 4, multiple: input.count % 3 == 0) {
                #expect(chosen.allSatisfy { (0..<4).contains($0) } && Set(chosen).count == chosen.count)
            }
            if let poll = PollColumn.poll(text, post: 1, now: 0) {
                #expect(poll.options.count == poll.options.compactMap(\.votes).count || poll.votesCount == nil)
            }
        }
    }

    @Test func cursors() {
        var random = SeededGenerator(seed: Fuzz.seed)
        let valid = (0..<64).map { _ in
            Cursor(
                time: .random(in: .min ... .max, using: &random), id: .random(in: .min ... .max, using: &random),
                score: Bool.random(using: &random) ? Double.random(in: -1e9...1e9, using: &random) : nil)
        }
        for cursor in valid { #expect(Cursor(encoded: cursor.encoded) == cursor) }
        Fuzz.run(
            "cursor", seeds: valid.map { Array($0.encoded.utf8) }, dictionary: ["=", "-", "_", "+", "/", "Og", "OjE"]
        ) { input, _ in
            if let cursor = Cursor(encoded: String(decoding: input, as: UTF8.self)) {
                // Whatever decodes must encode to a cursor that decodes to itself.
                if Cursor(encoded: cursor.encoded) != cursor { Issue.record("\(cursor) from \(input)") }
            }
        }
    }

    /// Addresses and blocks (link-preview hosts, forwarding headers, --trusted-proxies): what
    /// parses must print as text that parses to the same address, and "127.0.0.1\0…" must not
    /// pass as 127.0.0.1 (inet_pton reads a C string).
    @Test func addresses() {
        let seeds = Fuzz.seeds(
            "127.0.0.1", "203.0.113.7", "::1", "[::1]", "fe80::1%eth0", "2001:db8::ff00:42:8329", "::ffff:192.0.2.1",
            "10.0.0.0/8", "fc00::/7")
        Fuzz.run(
            "addresses", seeds: seeds, dictionary: [".", ":", "::", "%", "[", "]", "/", "\0", "ffff", "0x", "255"]
        ) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let address = IPAddress(text) {
                if IPAddress(address.description) != address {
                    Issue.record("\(address) does not read back, from \(input)")
                }
                if text.utf8.contains(0) { Issue.record("\(address) parsed from text with a NUL: \(input)") }
            }
            if let block = IPBlock(text), IPBlock(block.description) != block {
                Issue.record("\(block) does not read back, from \(input)")
            }
        }
        #expect(IPAddress("127.0.0.1\u{0}.evil.example") == nil)
        for spelling in [
            "0177.0.0.1", "2130706433", "0x7f.1", "127.1", "127.0.0.1.", " 127.0.0.1", "1:2:3:4:5:6:7:8:9", ":::1",
        ] {
            #expect(IPAddress(spelling) == nil, "\(spelling)")
        }
        #expect(IPAddress("::ffff:192.0.2.1")?.description == "::ffff:192.0.2.1")
        #expect(IPAddress("[2001:DB8::1]%eth0") == nil && IPAddress("[2001:DB8::1]")?.description == "2001:db8::1")
    }

    @Test func idsAndTimestamps() {
        let seeds = Fuzz.seeds(
            "123456789012345678", "9223372036854775807", "1", "2026-11-21T09:30:00.123Z", "2026-02-29T23:59:60+14:00")
        Fuzz.run("ids and timestamps", seeds: seeds, dictionary: ["-", "+", ".", "Z", "T", ":"]) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let id = parseID(text), id <= 0 || String(id) != text { Issue.record("id \(id) from \(input)") }
            if let time = Timestamp(rfc3339: text), Timestamp(rfc3339: time.description) != time {
                Issue.record("\(time) from \(input)")
            }
            do { _ = try Validate.id(text, field: "id") } catch { Self.expectClientError(error, input) }
        }
    }

    @Test func cookiesAndAuthorization() {
        let seeds = Fuzz.seeds(
            "plaza_session=\(SessionToken.make()); plaza_csrf=abcdefghijklmnopqrstu", "a=b;c=\"d\"; plaza_session=",
            "Bearer \(SessionToken.make())",
            "bearer  x.y~z+/=")
        Fuzz.run("cookies and authorization", seeds: seeds, dictionary: [";", "=", "\"", "Bearer ", "plaza_session="]) {
            input, _ in
            let text = String(decoding: input, as: UTF8.self)
            let request = Self.request(
                path: "/", headers: [.cookie: text, .authorization: text, WebSession.csrfHeader: text])
            for secure in [false, true] {
                _ = WebSession.sessionToken(request, secure: secure)
                _ = WebSession.nonce(request, secure: secure)
                _ = WebSession.verify(
                    request.headers[WebSession.csrfHeader], secret: WebSession.sessionToken(request, secure: secure),
                    request: request)
            }
            _ = WebSession.hasSessionCookie(request)
            do {
                let token = try AuthMiddleware.bearerToken(text)
                if !(1...128).contains(token.utf8.count) { Issue.record("token \(token) from \(input)") }
            } catch {
                Self.expectClientError(error, input)
            }
        }
    }

    /// `Idempotency-Key`s and `If-None-Match`: a key is kept only in its shape (else a 400), any
    /// key of a Mastodon app becomes one of that shape, and a tag always matches itself, its weak
    /// form and `*`.
    @Test func idempotencyKeysAndEntityTags() {
        let seeds = Fuzz.seeds(
            "k-1", "\"0123456789abcdef0123456789abcdef\"", "W/\"a\", \"b\", *", "/api/v1//me/two-factor",
            "caf\u{e9} key")
        Fuzz.run("idempotency keys and entity tags", seeds: seeds, dictionary: [",", "W/", "\"", "*", " ", "/"]) {
            input, _ in
            let text = String(decoding: input, as: UTF8.self)
            let shaped = { (key: String) in
                (1...71).contains(key.utf8.count) && key.utf8.allSatisfy { (0x21...0x7E).contains($0) }
            }
            do {
                let key = try IdempotencyMiddleware.validKey(text)
                if !shaped(key) || key.utf8.count > 64 { Issue.record("key \(key) from \(input)") }
            } catch {
                Self.expectClientError(error, input)
            }
            let any = IdempotencyMiddleware.anyKey(text)
            if !shaped(any) { Issue.record("any key \(any)") }
            let tag = ETag.strong(input)
            if !ETag.matches(tag, tag) || !ETag.matches("W/" + tag, tag) || !ETag.matches("*", tag) {
                Issue.record("tag \(tag) does not match itself")
            }
            _ = ETag.matches(text, tag)
            _ = ETag.matches(text, text)
            _ = IdempotencyMiddleware.carriesSecrets(text)
        }
    }

    /// What a person types at the second step of a sign-in, and the base32 secrets: a code is
    /// accepted only as the code of a step in the window, a recovery code only in its stored
    /// form, and base32 decodes only what encodes back the same.
    @Test func secondFactorCodes() {
        let secret = Array("12345678901234567890".utf8)
        let now = Timestamp(milliseconds: 1_800_000_000_000)
        let step = TOTP.step(at: now)
        let seeds = Fuzz.seeds(
            TOTP.code(secret: secret, step: step), "123 456", "k3xq7-m2pva", "K3XQ7M2PVA", "MZXW6YTBOI======",
            Base32.encode(secret))
        Fuzz.run("second-factor codes", seeds: seeds, dictionary: [" ", "-", "=", "0", "7", "A", "z"]) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let matched = TOTP.matchingStep(text, secret: secret, at: now) {
                let typed = text.replacingOccurrences(of: " ", with: "")
                if abs(matched - step) > TOTP.window || TOTP.code(secret: secret, step: matched) != typed {
                    Issue.record("step \(matched) from \(input)")
                }
            }
            if let normalized = TwoFactorStore.normalizedRecoveryCode(text),
                normalized.utf8.count != 10 || TwoFactorStore.normalizedRecoveryCode(normalized) != normalized
            {
                Issue.record("recovery code \(normalized) from \(input)")
            }
            if let bytes = Base32.decode(text), Base32.decode(Base32.encode(bytes)) != bytes {
                Issue.record("base32 \(bytes) from \(input)")
            }
        }
    }

    /// Sealed secrets as a database (or whoever wrote to it) may hold them, and keys as an
    /// operator may write them: a value opens only to what was sealed, hex decodes only what
    /// encodes back the same, a key is 32 bytes or refused; nothing traps.
    @Test func sealedSecretsAndKeys() throws {
        let key = try SecretBox.Key(text: String(repeating: "ab", count: 32))
        let box = SecretBox(current: key)
        let sealed = try box.seal("JBSWY3DPEHPK3PXP", context: "two_factor:7")
        let seeds = Fuzz.seeds(sealed, "sealed:v1:", "JBSWY3DPEHPK3PXP", String(repeating: "ab", count: 32), "QUFB")
        Fuzz.run("sealed secrets", seeds: seeds, dictionary: ["sealed:v1:", ":", "=", key.id, "/", "+"]) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let opened = box.open(text, context: "two_factor:7"), text.hasPrefix("sealed:v1:"),
                opened != "JBSWY3DPEHPK3PXP"
            {
                Issue.record("opened \(opened) from \(input)")
            }
            if let bytes = ByteText.bytes(hex: text), ByteText.bytes(hex: ByteText.hex(bytes)) != bytes {
                Issue.record("hex \(bytes) from \(input)")
            }
            if let parsed = try? SecretBox.Key(text: text), parsed.id.count != 8 {
                Issue.record("key \(parsed.id) from \(input)")
            }
        }
    }

    /// What an SMTP server answers, fed in pieces as they might arrive: the reader returns
    /// replies whose lines share one code from 200 to 599, or throws, and never traps.
    @Test func smtpReplies() {
        let seeds = Fuzz.seeds(
            "220 plaza.test ESMTP\r\n", "250-plaza.test\r\n250-STARTTLS\r\n250 AUTH PLAIN LOGIN\r\n",
            "354 go ahead\n", "535 5.7.8 Authentication credentials invalid\r\n", "250-a\r\n251 b\r\n")
        Fuzz.run("SMTP replies", seeds: seeds, dictionary: ["\r\n", "\n", "-", " ", "250", "5", "\r"]) {
            input, random in
            var reader = SMTPReplyReader()
            var offset = 0
            do {
                while offset < input.count {
                    let end = min(input.count, offset + Int.random(in: 1...64, using: &random))
                    reader.append(input[offset..<end])
                    offset = end
                    while let reply = try reader.next() {
                        if !(200...599).contains(reply.code) || reply.lines.isEmpty
                            || reply.lines.count > SMTPReplyReader.maxLines
                        {
                            Issue.record("reply \(reply) from \(input)")
                        }
                    }
                }
            } catch {}
        }
    }

    /// Tokens from mailed links and `mail-from` values: a token is accepted only in the form
    /// `SessionToken` makes, a sender only as an ASCII address that SMTP and headers carry as is.
    @Test func mailTokensAndSenders() {
        let seeds = Fuzz.seeds(
            SessionToken.make(), "Plaza <noreply@plaza.test>", "\"Pla\\\"za\" <a@b.cd>", "a@b.cd",
            "Plaza <a@b.cd>\r\nBcc: x@y.z")
        Fuzz.run("mail tokens and senders", seeds: seeds, dictionary: ["<", ">", "@", "\"", "\r\n", ".", "-", "_"]) {
            input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let token = try? AccountsController.mailedToken(text), ByteText.bytes(base64url: token)?.count != 32 {
                Issue.record("token \(token) from \(input)")
            }
            if let sender = try? MailAddress.parse(text) {
                let header = sender.header
                if header.contains(where: { $0.isNewline }) || !MIME.isDeliverable(sender.address)
                    || sender.address.contains(where: { "<> ".contains($0) })
                {
                    Issue.record("sender \(header) from \(input)")
                }
            }
        }
    }

    /// Push device registrations (tokens, endpoints, keys as clients send them) and what push
    /// services answer: never trap; whatever is accepted can be stored and sent as it is.
    @Test func pushDevicesAndAnswers() {
        let policy = (try? AddressPolicy.parse(allowList: "127.0.0.1")) ?? AddressPolicy()
        let seeds = Fuzz.seeds(
            #"{"platform":"apns","token":"\#(String(repeating: "ab", count: 32))","environment":"sandbox","bundleId":"com.example.app"}"#,
            #"{"platform":"webpush","endpoint":"https://push.example.com/wp/1","keys":{"p256dh":"BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4","auth":"BTBZMqHH6r4Tts7J_aSIgg"}}"#,
            #"{"platform":"webpush","endpoint":"http://127.0.0.1:9/wp","keys":{"p256dh":"BA","auth":"AA=="}}"#)
        Fuzz.run("push devices", seeds: seeds, dictionary: ["\"", "://", "[::1]", "%", "=", "@", "\\u0000", "0x"]) {
            input, _ in
            guard let request = try? JSONDecoder().decode(RegisterPushDeviceRequest.self, from: Data(input)),
                let device = try? PushDeviceRegistration(request, policy: policy, apnsConfigured: true)
            else { return }
            switch device.platform {
            case .apns:
                if device.address.utf8.contains(where: { !(48...57).contains($0) && !(97...102).contains($0) }) {
                    Issue.record("token \(device.address) from \(input)")
                }
            case .webpush:
                if URL(string: device.address) == nil
                    || device.address.contains(where: { $0.isWhitespace || $0.isNewline })
                    || device.p256dh.flatMap({ ByteText.bytes(base64url: $0) })?.count != 65
                    || device.auth.flatMap({ ByteText.bytes(base64url: $0) })?.count != 16
                {
                    Issue.record("subscription \(device) from \(input)")
                }
            }
        }
        Fuzz.run("push answers", seeds: Fuzz.seeds(#"{"reason":"BadDeviceToken"}"#, "", "{}"), dictionary: ["reason"]) {
            input, _ in
            let status = Int(input.first ?? 0) + 100 * Int((input.dropFirst().first ?? 2) % 6)
            _ = APNsSender.outcome(status: status, reason: String(decoding: input, as: UTF8.self), retryAfter: nil)
            _ = WebPushSender.outcome(status: status, retryAfter: nil)
        }
    }

    /// ID tokens from native apps: the header Plaza reads before choosing a key, and jwt-kit's
    /// parsing of the whole token behind it, never trap; a header is read only from three
    /// non-empty parts within the size cap.
    @Test func idTokens() async {
        let header = ByteText.base64url(Array(#"{"alg":"ES256","kid":"key-1","typ":"JWT"}"#.utf8))
        let payload = ByteText.base64url(
            Array(#"{"iss":"https://id.example","sub":"1","aud":"a","exp":2000000000}"#.utf8))
        let seeds = Fuzz.seeds("\(header).\(payload).c2ln", "eyJhbGciOiJub25lIn0.e30.", "a.b.c", "..")
        let keys = JWTKeyCollection()
        var tokens: [String] = []
        Fuzz.run("ID tokens", seeds: seeds, dictionary: [".", "eyJ", "=", "-", "_", "\\u0000"]) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            if let fields = JWTHeaderFields.parse(text) {
                let parts = text.split(separator: ".", omittingEmptySubsequences: false)
                if parts.count != 3 || parts.contains(where: \.isEmpty)
                    || text.utf8.count > JWTHeaderFields.maxTokenBytes
                {
                    Issue.record("header \(fields) from \(input)")
                }
            }
            if tokens.count < 2_000 { tokens.append(text) }
        }
        for token in tokens { _ = try? await keys.unverified(token, as: IDTokenClaims.self) }
    }

    @Test func webForms() {
        let seeds = Fuzz.seeds(
            "login=ana&password=correct+horse&next=%2Fposts%2F1&_csrf=abc",
            "username=ana&email=a%40b.c&password=p&displayName=An%C3%A1", "_csrf=x&_csrf=y&a[b]=c")
        Fuzz.run("web forms", seeds: seeds, dictionary: ["&", "=", "%", "%zz", "[", "]", "[]", "+"]) { input, random in
            let body = ByteBuffer(bytes: input)
            do {
                switch Int.random(in: 0..<3, using: &random) {
                case 0: _ = try WebController.decodeForm(WebController.LoginForm.self, from: body)
                case 1: _ = try WebController.decodeForm(WebController.SignupForm.self, from: body)
                default: _ = try WebController.decodeForm(WebController.LogoutForm.self, from: body)
                }
            } catch {
                Self.expectClientError(error, input)
            }
        }
    }

    // MARK: fetched pages and uploaded files

    @Test func linkPreviewPages() throws {
        let page = try #require(URL(string: "https://example.com/a/b?c=d"))
        let seeds = Fuzz.seeds(
            """
            <!doctype html><html><head><meta charset="windows-1252"><title>T&amp;t &#x1F600; &#99999999;</title>
            <meta property="og:title" content='Og "title"'><meta name=description content=Desc>
            <meta property="og:image" content="/i.png"><link rel="alternate" type="application/json+oembed" href="//example.com/oembed?u=1">
            <script>var x = "</head>";</script><!-- <meta property="og:title" content="no"> --></head><body>
            """, "<meta property=og:image content=\"javascript:alert(1)\"><title>x",
            "<html><head><base href=\"http://[::1]/\"><meta content=\"x\" property=\"og:site_name\">")
        Fuzz.run(
            "link preview html", seeds: seeds,
            dictionary: [
                "<", ">", "</", "<!--", "-->", "&", "&#", "&#x", ";", "'", "\"", "<meta ", "content=", "<title>",
                "<script>",
            ]
        ) { input, _ in
            let metadata = LinkMetadata.parse(input, pageURL: page)
            for url in [metadata.imageURL, metadata.oEmbedURL].compactMap({ $0 })
            where !url.hasPrefix("http://") && !url.hasPrefix("https://") {
                Issue.record("\(url) from \(input)")
            }
            if (metadata.title?.count ?? 0) > LinkMetadata.titleLimit {
                Issue.record("title of \(metadata.title?.count ?? 0) from \(input)")
            }
        }
        let oEmbed = Fuzz.seeds(
            #"{"title":"T","author_name":"A","provider_name":"P","thumbnail_url":"/t.jpg","type":"photo"}"#,
            #"{"title":1,"thumbnail_url":["x"]}"#)
        Fuzz.run("oembed json", seeds: oEmbed, dictionary: ["null", "\"\\ud800\"", "1e999", "{", "[", ","]) {
            input, _ in
            let merged = LinkMetadata().merging(oEmbedJSON: input, pageURL: page, textInHTML: true)
            if let url = merged.imageURL, !url.hasPrefix("http://") && !url.hasPrefix("https://") {
                Issue.record("\(url) from \(input)")
            }
            if (merged.description?.count ?? 0) > LinkMetadata.descriptionLimit {
                Issue.record("description of \(merged.description?.count ?? 0) from \(input)")
            }
        }
        // Links to the known sites: the oEmbed request and the player stay on the sites' own
        // hosts, and what reaches their URLs is only what the patterns let through.
        let links = Fuzz.seeds(
            "https://www.youtube.com/watch?v=eiHXASgRTcA&t=1m5s", "https://youtu.be/eiHXASgRTcA",
            "https://vimeo.com/814385915/06fc1c0a52", "https://player.vimeo.com/video/1?h=ab",
            "https://www.instagram.com/natgeo/p/CARbvuYDm3Q/", "https://www.tiktok.com/@a/video/1",
            "https://www.tumblr.com/blog/1/slug", "https://blog.tumblr.com/post/1", "https://x.com/a/status/1",
            "https://old.reddit.com/r/a/comments/b/c/d/")
        let endpoints = Set(OEmbedProvider.known.map(\.endpoint))
        Fuzz.run(
            "video and oembed links", seeds: links, dictionary: ["%2F", "%22", "\"", "<", "?", "#", "@", "/", ".."]
        ) {
            input, _ in
            let link = String(decoding: input, as: UTF8.self)
            if let player = VideoEmbed.playerURL(for: link) {
                let allowed = player.unicodeScalars.allSatisfy {
                    $0.isASCII && (CharacterSet.alphanumerics.contains($0) || ":/.?=_-".unicodeScalars.contains($0))
                }
                if !VideoEmbed.origins.contains(where: { player.hasPrefix($0 + "/") }) || !allowed {
                    Issue.record("player \(player) from \(link)")
                }
            }
            if let request = OEmbedProvider.request(for: link) {
                let endpoint = String(request.url.prefix { $0 != "?" })
                if !endpoints.contains(endpoint) || request.url.contains("#") || request.url.contains(" ") {
                    Issue.record("oEmbed \(request.url) from \(link)")
                }
            }
            _ = LinkMetadata.textOutsideTags(link)
        }
    }

    /// Leading bytes are sniffed by our code before libvips sees a file; libvips then reads the
    /// header of mutated real images (fewer cases: each is a file on disk).
    @Test func imageHeaders() async throws {
        let samples = try [ImageFormat.jpeg, .png, .gif, .webp].map {
            try ImagePipeline.sample($0, width: 8, height: 6)
        }
        Fuzz.run("image sniffing", seeds: samples.map { Array($0.prefix(64)) }) { input, _ in
            if let format = ImageFormat.sniff(input), ImageFormat.sniff(input + [0, 1, 2]) != format {
                Issue.record("\(input)")
            }
        }
        let pipeline = ImagePipeline(limits: .init(maxPixels: 1_000_000))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var mutator = Mutator(seed: Fuzz.seed)
        for i in 0..<max(1, Fuzz.cases / 200) {
            let bytes = mutator.mutate(samples[i % samples.count])
            let path = directory.appendingPathComponent("\(i)").path
            _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
            if let format = ImageFormat.sniff(bytes) {
                do { _ = try await pipeline.process(path: path, format: format) } catch {
                    Self.expectClientError(error, Array(bytes.prefix(64)))
                }
            }
            unlink(path)
        }
    }

    /// Range headers, ffprobe's JSON and video headers: parsed without a trap; a span read is
    /// always inside the file and written back the same; mutated real videos through ffprobe
    /// give a probe or a 4xx (fewer cases: each runs ffprobe).
    @Test func videoProbesAndRanges() async throws {
        Fuzz.run(
            "ranges", seeds: ["bytes=0-99", "bytes=5-", "bytes=-7", "bytes=0-1,2-3"].map { Array($0.utf8) },
            dictionary: ["bytes=", "-", ",", "9223372036854775807"]
        ) { input, random in
            guard let range = ByteRange.parse(String(decoding: input, as: UTF8.self)) else { return }
            if ByteRange.parse(range.header) != range { Issue.record("\(range) does not round-trip") }
            let length = Int.random(in: 0...1_000_000, using: &random)
            if let span = range.resolve(length: length), span.lowerBound < 0 || span.upperBound >= length {
                Issue.record("\(range) in \(length) bytes gave \(span)")
            }
        }
        let json = Array(
            #"{"streams":[{"codec_type":"video","width":640,"height":360,"side_data_list":[{"rotation":-90}],"tags":{"rotate":"90"}},{"codec_type":"audio"}],"format":{"duration":"2.5"}}"#
                .utf8)
        Fuzz.run("ffprobe output", seeds: [json], dictionary: ["1e308", "-1", "null", "\"video\"", "[]", "{}"]) {
            input, _ in
            do {
                let probe = try VideoProbe.parse(Data(input))
                if probe.width <= 0 || probe.height <= 0 || probe.durationMillis <= 0 { Issue.record("\(probe)") }
                _ = probe.outputSize
            } catch { Self.expectClientError(error, input) }
        }
        let video = try VideoFixtures.mov(width: 64, height: 48, seconds: 0.5)
        Fuzz.run("video sniffing", seeds: [Array(video.prefix(64)), [0x1A, 0x45, 0xDF, 0xA3, 0x9F]]) { input, _ in
            _ = VideoFormat.sniff(input)
        }
        let pipeline = try #require(VideoPipeline.make(VideoSettings(), logger: Logger(label: "fuzz")))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("plaza-fuzz-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var mutator = Mutator(seed: Fuzz.seed)
        for i in 0..<max(1, Fuzz.cases / 2_000) {
            let bytes = mutator.mutate(video)
            let path = directory.appendingPathComponent("\(i)").path
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
            if let format = VideoFormat.sniff(bytes) {
                do { _ = try await pipeline.probe(path, format: format, workDirectory: directory.path) } catch {
                    Self.expectClientError(error, Array(bytes.prefix(64)))
                }
            }
            unlink(path)
        }
    }

    // MARK: the whole app

    /// Mutated requests through the real router and every middleware: never a 5xx, and the
    /// app still answers afterwards. Bytes the HTTP parser would refuse (a bare CR in a header)
    /// are the e2e fuzzer's, which sends raw bytes to the binary.
    @Test func requestsThroughTheRouter() async throws {
        try await withApp { api in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "hello #fuzz")
            let templates: [(HTTPRequest.Method, String, String?)] = [
                (.get, "/api/v1/feed/global?limit=5&kind=text&since=2026-01-01T00:00:00Z", nil),
                (.get, "/api/v1/posts/\(post.id)/comments?cursor=\(Cursor(time: 1, id: 2).encoded)", nil),
                (.post, "/api/v1/posts/\(post.id)/comments", #"{"body":"hi @ana"}"#),
                (.patch, "/api/v1/posts/\(post.id)", #"{"title":"t","activity":{"type":"run","progress":20}}"#),
                (.put, "/api/v1/posts/\(post.id)/like", nil),
                (.get, "/api/v1/search/posts?q=hello&near=1,2&radiusKm=3&in=body", nil),
                (.get, "/api/v1/users/ana/activity?days=30", nil),
                (.patch, "/api/v1/me", #"{"bio":"b","status":{"kind":"safe","text":"x"}}"#),
                (.post, "/api/v1/collections", #"{"name":"c"}"#),
                (.get, "/api/v1/me/history?sort=views&q=x&in=title", nil),
                (.post, "/login", "login=ana&password=x&_csrf=y"),
                (.get, "/search?q=x&kind=photo", nil),
            ]
            var mutator = Mutator(
                seed: Fuzz.seed,
                dictionary: ["%", "%00", "../", "?", "&", "=", "\"", "{", "}", "null", "-1", "99999999999999999999"])
            var statuses: [Int: Int] = [:]
            for _ in 0..<max(1, Fuzz.cases / 50) {
                let (method, path, body) = templates[mutator.int(0..<templates.count)]
                let mutatedPath =
                    mutator.int(0..<2) == 0 ? String(decoding: mutator.mutate(Array(path.utf8)), as: UTF8.self) : path
                let mutatedBody = body.map { mutator.mutate(Array($0.utf8)) }
                var headers: HTTPFields = [
                    .contentType: path.hasPrefix("/api") ? "application/json" : "application/x-www-form-urlencoded"
                ]
                switch mutator.int(0..<4) {
                case 0:
                    headers[.authorization] = String(
                        decoding: mutator.mutate(Array("Bearer \(ana.token)".utf8)), as: UTF8.self)
                case 1:
                    headers[.cookie] = String(
                        decoding: mutator.mutate(Array("plaza_session=\(ana.token)".utf8)), as: UTF8.self)
                case 2: headers[.authorization] = "Bearer \(ana.token)"
                default: break
                }
                guard mutatedPath.hasPrefix("/") else { continue }
                let status = try await Self.send(method, mutatedPath, mutatedBody, headers: headers, to: api)
                statuses[status, default: 0] += 1
            }
            #expect(try await api.get("/feed/global").status == .ok)
            #expect(
                statuses.keys.contains { (200..<300).contains($0) }
                    && statuses.keys.contains { (400..<500).contains($0) }, "\(statuses)")
        }
    }

    // MARK: Mastodon

    /// Mastodon's parameters (forms), scopes, streaming commands and the text-to-HTML of
    /// statuses: 4xx or a value, never a trap; the HTML never carries a raw `<` from the text.
    @Test func mastodonParametersAndText() throws {
        let seeds = Fuzz.seeds(
            "status=caf%C3%A9+%40ana+https%3A%2F%2Fx.example%2Fa%3Fb%3D1&media_ids[]=1&media_ids%5B%5D=2&sensitive=1",
            "subscription[keys][p256dh]=AQ%3D%3D&data[alerts][follow]=true&policy=all",
            "scope=read+write:statuses+follow&grant_type=authorization_code")
        Fuzz.run(
            "mastodon parameters", seeds: seeds,
            dictionary: ["&", "=", "%", "%00", "%ff", "+", "[]", "[", "]", "#", "https://", "@", "<", "&amp;"]
        ) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            do {
                let params = try MastodonParams(form: text)
                _ = try? params.id("max_id")
                _ = try? params.limit(default: 20, max: 40)
                _ = params.bool("sensitive")
                _ = OAuthScopes(params.string("scope"))
            } catch {
                Self.expectClientError(error, input)
            }
            _ = MastodonWebSocket.command(text)
            if let id = RequestIDMiddleware.valid(text) {
                #expect(id == text && id.utf8.count <= RequestIDMiddleware.maxLength && !id.contains(" "))
            }
            _ = OAuthStore.challenge(verifier: text)
        }
        // Foundation's URL and string work is slower: a tenth of the cases.
        Fuzz.run(
            "mastodon text", seeds: seeds,
            dictionary: ["\n", "\n\n", "https://", "http://", "#", "@", "@bob", "#東京", "<", ">", "&", ":", "(", ")"],
            count: Fuzz.cases / 10
        ) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            _ = OAuthController.isRedirectURI(text)
            // Every piece is read back as written, in order: nothing lost, nothing added.
            let segments = PostText.segments(of: text)
            let written = segments.map { segment -> String in
                switch segment {
                case .text(let plain): plain
                case .link(let url): url
                case .mention(let name): "@" + name
                case .hashtag(let name): "#" + name
                }
            }
            #expect(written.joined() == text)
            for case .hashtag(let name) in segments {
                #expect(Hashtag(name) != nil || SearchFolding.fold(name).isEmpty)
            }
            // Only the renderer's own tags are markup; every `<` of the text is escaped.
            let html = PostTextHTML.render(text, links: PublicLinks(base: "https://plaza.test"))
            var stripped = html
            for tag in [
                #"<a href=""#, "<p>", "</p>", "<br>", "</a>", #"<span class="h-card">"#, "<span>", "</span>",
            ] {
                stripped = stripped.replacingOccurrences(of: tag, with: "")
            }
            #expect(!stripped.contains("<"), "\(text) -> \(html)")
        }
    }

    /// Any text in a feed's elements and attributes leaves it well-formed (Foundation's parser
    /// reads it), and reads back as written less what XML 1.0 does not allow.
    @Test func feedXML() throws {
        let seeds = Fuzz.seeds(
            "plain", "<script>a & b</script>", "]]> <![CDATA[ x ]]>", "\u{1}\u{8}\u{B}\u{C}\u{1F}\u{7F}",
            "tab\tline\ncr\r\nend", "😀 مرحبا \u{202E}rtl\u{FFFE}\u{FFFF}", "&amp; &#0; &#x1; &lt;", "'\"")
        // Foundation's parser is slower than the other parsers here: a tenth of the cases.
        Fuzz.run(
            "feed xml", seeds: seeds, dictionary: ["&", "<", ">", "]]>", "\u{0}", "\u{1}", "\r", "\"", "'", "&#"],
            count: Fuzz.cases / 10
        ) { input, _ in
            let text = String(decoding: input, as: UTF8.self)
            var xml = XMLWriter()
            xml.open("feed", [("a", text)])
            xml.element("t", text, [("b", text)])
            xml.close("feed")
            guard let root = ParsedXML.parse(Array(xml.text.utf8)) else {
                Issue.record("not well-formed for \(input): \(xml.text)")
                return
            }
            let kept = String(String.UnicodeScalarView(text.unicodeScalars.filter(XMLText.isAllowed)))
            #expect(root.attributes["a"] == kept && root.first("t")?.text == kept, "\(input)")
            #expect(root.first("t")?.attributes["b"] == kept, "\(input)")
        }
    }

    @Test func mastodonRequestsThroughTheRouter() async throws {
        try await withApp { api in
            let ana = try await api.register("ana")
            let post = try await api.textPost(ana, "hello #fuzz")
            let form = "application/x-www-form-urlencoded"
            let json = "application/json"
            let templates: [(HTTPRequest.Method, String, String?, String)] = [
                (
                    .post, "/api/v1/apps", "client_name=x&redirect_uris=https%3A%2F%2Fa.example%2F&scopes=read+write",
                    form
                ),
                (.post, "/api/v1/apps", #"{"client_name":"x","redirect_uris":["x://y"],"scopes":"read"}"#, json),
                (.post, "/api/v1/statuses", "status=hi+%40ana&visibility=private&media_ids[]=1", form),
                (.post, "/api/v1/statuses", #"{"status":"re","in_reply_to_id":"\#(post.id)"}"#, json),
                (.put, "/api/v1/statuses/\(post.id)", "status=edited", form),
                (.get, "/api/v1/timelines/home?limit=2&max_id=\(post.id)&since_id=1", nil, form),
                (.get, "/api/v1/timelines/public?min_id=1&only_media=true", nil, form),
                (.get, "/api/v1/accounts/relationships?id[]=\(ana.id)&id[]=x", nil, form),
                (.get, "/api/v2/search?q=hello&type=statuses&offset=1", nil, form),
                (.post, "/api/v1/markers", "home[last_read_id]=\(post.id)", form),
                (
                    .post, "/api/v1/push/subscription",
                    "subscription[endpoint]=https%3A%2F%2Fp.example%2F&data[policy]=all", form
                ),
                (.get, "/api/v2/notifications?types[]=favourite&max_id=1", nil, form),
                (.post, "/oauth/token", "grant_type=authorization_code&code=x&client_id=y&code_verifier=z", form),
                (.post, "/oauth/revoke", #"{"token":"x","client_id":"y"}"#, json),
                (
                    .get, "/oauth/authorize?response_type=code&client_id=x&redirect_uri=x%3A%2F%2Fy&scope=read", nil,
                    form
                ),
            ]
            var mutator = Mutator(
                seed: Fuzz.seed,
                dictionary: [
                    "%", "%00", "[]", "[", "?", "&", "=", "\"", "{", "}", "null", "-1", "99999999999999999999", "1e308",
                ])
            var statuses: [Int: Int] = [:]
            for _ in 0..<max(1, Fuzz.cases / 50) {
                let (method, path, body, contentType) = templates[mutator.int(0..<templates.count)]
                let mutatedPath =
                    mutator.int(0..<2) == 0 ? String(decoding: mutator.mutate(Array(path.utf8)), as: UTF8.self) : path
                let mutatedBody = body.map { mutator.mutate(Array($0.utf8)) }
                var headers: HTTPFields = [.contentType: contentType]
                if mutator.int(0..<4) != 0 { headers[.authorization] = "Bearer \(ana.token)" }
                guard mutatedPath.hasPrefix("/") else { continue }
                let status = try await Self.send(method, mutatedPath, mutatedBody, headers: headers, to: api)
                statuses[status, default: 0] += 1
            }
            #expect(
                statuses.keys.contains { (200..<300).contains($0) }
                    && statuses.keys.contains { (400..<500).contains($0) }, "\(statuses)")
        }
    }

    /// Sends one mutated request and expects an answer below 500; its status.
    private static func send(
        _ method: HTTPRequest.Method, _ path: String, _ body: [UInt8]?, headers: HTTPFields, to api: TestAPI
    ) async throws -> Int {
        let response = try await api.client.execute(
            uri: path, method: method, headers: headers, body: body.map { ByteBuffer(bytes: $0) })
        #expect(
            response.status.code < 500,
            "\(method) \(path) \(body.map { String(decoding: $0, as: UTF8.self) } ?? "") -> \(response.status) \(String(buffer: response.body))"
        )
        return response.status.code
    }
}
