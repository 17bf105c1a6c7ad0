import Logging
import NIOConcurrencyHelpers
import NIOCore
import PlazaAPI
import ServiceLifecycle

/// This server's open streams, fed from the event log. Woken by `EventSignal` (a local commit,
/// or PostgreSQL's `NOTIFY` from any server), it reads the log past its position once for all
/// its subscribers, renders each event once, and hands the frames to the recipients' streams.
/// A stream whose buffer is full is closed (its client resumes with `Last-Event-ID`), so a
/// slow reader costs a bounded amount of memory and never holds up the others.
final class EventHub: Service, Sendable {
    struct Limits: Sendable {
        var perUser = 8
        var total = 10_000
        /// Frames buffered for one stream before it is closed as too slow.
        var buffer = 512
        var heartbeat: Duration = .seconds(15)
    }

    struct Frame: Sendable {
        /// nil for a heartbeat.
        var seq: Int64?
        var bytes: ByteBuffer
        static let heartbeat = Frame(seq: nil, bytes: ByteBuffer(string: ":\n\n"))
    }

    private struct Subscriber {
        let session: Int64
        /// Who listens: the key's own person, or on the public stream (`everyone`) the reader.
        let person: Int64
        let continuation: AsyncStream<Frame>.Continuation
    }

    /// The key of the public stream's subscribers: every new post's event, whoever may read
    /// it, for a reader that shows only the public ones (Mastodon's `public` stream). User ids
    /// are positive, so no person has this key.
    static let everyone: Int64 = 0

    private struct State {
        var streams: [Int64: [Int: Subscriber]] = [:]
        var count = 0
        var nextID = 0
        var closed = false
        var live = false
        var position: Int64 = 0
    }

    let feed: EventFeed
    let signal: EventSignal
    let sessions: AccountStore
    let limits: Limits
    let logger: Logger
    private let state = NIOLockedValueBox(State())
    /// Yields once the migrations have run: the hub reads the log only after that.
    private let opened = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    init(feed: EventFeed, signal: EventSignal, sessions: AccountStore, limits: Limits, logger: Logger) {
        self.feed = feed
        self.signal = signal
        self.sessions = sessions
        self.limits = limits
        self.logger = logger
    }

    /// A subscriber's frames; `close()` (or the end of iteration) unsubscribes.
    struct Subscription: Sendable {
        let frames: AsyncStream<Frame>
        fileprivate let continuation: AsyncStream<Frame>.Continuation
        func close() { continuation.finish() }
    }

    static let tooManyStreams = PlazaError(
        .tooManyRequests, "too_many_streams", "Too many open streams. Close one and try again.")

    /// Subscribes `user`'s stream. At the per-user cap, the user's open streams are probed
    /// first: a browser that moved to another page has closed its connection, but a
    /// half-closed socket is only found dead by writing to it (the second write fails once the
    /// peer has answered the first with a reset), so a few heartbeats over up to ~0.6 s free
    /// those places before the request is refused.
    /// `person`: who reads the public stream (`user` is `everyone`); each person has the same cap there.
    func subscribe(user: Int64, session: Int64, person: Int64? = nil) async throws -> Subscription {
        for attempt in 0...6 {
            if let subscription = try add(user: user, session: session, person: person ?? user) { return subscription }
            guard attempt < 6 else { break }
            let streams = state.withLockedValue { Array(($0.streams[user] ?? [:]).values) }
            for subscriber in streams { subscriber.continuation.yield(.heartbeat) }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Self.tooManyStreams
    }

    /// The new subscription, or nil when the user is at the per-user cap.
    private func add(user: Int64, session: Int64, person: Int64) throws -> Subscription? {
        let (frames, continuation) = AsyncStream.makeStream(
            of: Frame.self, bufferingPolicy: .bufferingOldest(limits.buffer))
        let id = try state.withLockedValue { state -> Int? in
            guard !state.closed else {
                throw PlazaError(.serviceUnavailable, "shutting_down", "The server is shutting down.")
            }
            guard state.count < limits.total else { throw Self.tooManyStreams }
            let theirs = state.streams[user]?.values.count { $0.person == person } ?? 0
            guard theirs < limits.perUser else { return nil }
            state.nextID += 1
            state.count += 1
            state.streams[user, default: [:]][state.nextID] = Subscriber(
                session: session, person: person, continuation: continuation)
            return state.nextID
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in self?.remove(user: user, id: id) }
        return Subscription(frames: frames, continuation: continuation)
    }

    private func remove(user: Int64, id: Int) {
        state.withLockedValue { state in
            guard state.streams[user]?.removeValue(forKey: id) != nil else { return }
            state.count -= 1
            if state.streams[user]?.isEmpty == true { state.streams[user] = nil }
        }
    }

    /// True once the hub has found the end of the log: events committed from then on reach
    /// subscribers live (earlier ones through replay).
    var isLive: Bool { state.withLockedValue { $0.live } }

    /// The log's seq the hub has delivered through (its lag is the log's head minus this);
    /// nil until it has found the log's head.
    var deliveredThrough: Int64? { state.withLockedValue { $0.live ? $0.position : nil } }

    /// Open streams on this server.
    var openStreams: Int { state.withLockedValue { $0.count } }

    /// Lets `run` start reading the log (called once the migrations have run).
    func open() { opened.continuation.yield() }

    func run() async throws {
        try await cancelWhenGracefulShutdown {
            for await _ in self.opened.stream { break }
            try Task.checkCancellation()
            var position = try await self.feed.bounds().head
            self.state.withLockedValue { state in
                state.live = true
                state.position = position
            }
            await withDiscardingTaskGroup { group in
                group.addTask { await self.heartbeats() }
                if self.feed.db.kind == .postgres { group.addTask { await self.listen() } }
                for await _ in self.signal.pokes {
                    position = await self.drain(from: position)
                    self.state.withLockedValue { [position] in $0.position = position }
                }
                group.cancelAll()
            }
        }
        closeAll()
    }

    /// Delivers everything after `position` (a seq); returns the new position.
    private func drain(from start: Int64) async -> Int64 {
        var position = start
        do {
            // Nobody listens here: move to the head without reading rows no one would get. The
            // head is read before the second check, so a stream that subscribes meanwhile has its
            // own starting point at or after it, and the next drain reads on from here.
            if state.withLockedValue({ $0.count == 0 }) {
                let head = try await feed.bounds().head
                if state.withLockedValue({ $0.count == 0 }) { return max(head, position) }
            }
            let head = try await feed.bounds().head
            while position < head {
                let (entries, through) = try await feed.entries(after: position, through: head)
                var local = state.withLockedValue { state in entries.filter { state.streams[$0.recipient] != nil } }
                // The public stream gets each new or deleted post once (its readers keep the public ones).
                if state.withLockedValue({ $0.streams[Self.everyone] != nil }) {
                    var seen = Set<Int64>()
                    for var entry in entries
                    where entry.kind == .postCreated || entry.kind == .postDeleted || entry.kind == .postUpdated {
                        guard seen.insert(entry.seq).inserted else { continue }
                        entry.recipient = Self.everyone
                        local.append(entry)
                    }
                }
                if !local.isEmpty {
                    for (entry, frame) in try await feed.frames(local) {
                        deliver(Frame(seq: entry.seq, bytes: frame), to: entry.recipient)
                    }
                }
                position = through
            }
        } catch is CancellationError {
            // Shutting down: the streams end with the hub.
        } catch {
            // Try again shortly from the same place; nothing is skipped.
            logger.warning("Reading the event log failed: \(error)")
            Task { [signal] in
                try? await Task.sleep(for: .seconds(1))
                signal.poke()
            }
        }
        return position
    }

    private func deliver(_ frame: Frame, to user: Int64) {
        let slow = state.withLockedValue { state -> [AsyncStream<Frame>.Continuation] in
            (state.streams[user]?.values).map { subscribers in
                subscribers.compactMap { subscriber in
                    if case .dropped = subscriber.continuation.yield(frame) { return subscriber.continuation }
                    return nil
                }
            } ?? []
        }
        for continuation in slow {
            logger.info("Closing a stream that fell \(limits.buffer) events behind", metadata: ["user": "\(user)"])
            continuation.finish()
        }
    }

    /// Every `heartbeat`: a comment on each stream (so proxies and clients see it alive), and
    /// the end of streams whose session was revoked.
    private func heartbeats() async {
        while !Task.isCancelled {
            do { try await Task.sleep(for: limits.heartbeat) } catch { return }
            let subscribers = state.withLockedValue { state in state.streams.values.flatMap(\.values) }
            let sessionIDs = Array(Set(subscribers.map(\.session)))
            var live = Set<Int64>()
            do {
                for chunk in stride(from: 0, to: sessionIDs.count, by: 500) {
                    live.formUnion(
                        try await sessions.existingSessions(
                            Array(sessionIDs[chunk..<min(chunk + 500, sessionIDs.count)])))
                }
            } catch {
                logger.warning("Checking the sessions of open streams failed: \(error)")
                live = Set(sessionIDs)
            }
            for subscriber in subscribers {
                if !live.contains(subscriber.session) {
                    subscriber.continuation.finish()
                } else if case .dropped = subscriber.continuation.yield(.heartbeat) {
                    subscriber.continuation.finish()
                }
            }
        }
    }

    /// PostgreSQL: wakes on every server's commits. Reconnects after a failure, then catches up.
    private func listen() async {
        while !Task.isCancelled {
            do {
                try await feed.db.listen(channel: EventLog.channel, signal: signal)
            } catch {
                if Task.isCancelled { return }
                logger.warning("Listening for events failed, retrying: \(error)")
            }
            do { try await Task.sleep(for: .seconds(1)) } catch { return }
        }
    }

    /// Ends every stream (graceful shutdown); clients reconnect to another server or later.
    private func closeAll() {
        let all = state.withLockedValue { state in
            state.closed = true
            return state.streams.values.flatMap(\.values)
        }
        for subscriber in all { subscriber.continuation.finish() }
    }
}
