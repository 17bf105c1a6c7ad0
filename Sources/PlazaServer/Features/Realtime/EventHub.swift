import Logging
import NIOConcurrencyHelpers
import NIOCore
import PlazaAPI
import ServiceLifecycle

/// This server's open streams, fed from the event log. Woken by `EventSignal` (a local commit,
/// or PostgreSQL's `NOTIFY` from any server), it reads the log past its position once for all
/// its subscribers, with the rules of who may see what applied as it reads (`EventFeed`), so
/// what a reader gets follows their blocks, mutes, follows, memberships and suspension as they
/// are when the event is delivered. It makes one typed event per log event and hands the same
/// one to every stream it goes to; each door encodes it in its own format, once (`StreamEvent`).
/// A stream whose buffer is full is closed (its client resumes with `Last-Event-ID`), so a
/// slow reader costs a bounded amount of memory and never holds up the others.
package final class EventHub: Service, Sendable {
    struct Limits: Sendable {
        var perUser = 8
        var total = 10_000
        /// Events buffered for one stream before it is closed as too slow.
        var buffer = 512
        var heartbeat: Duration = .seconds(15)
    }

    /// What a stream is handed: an event, or a heartbeat (a sign of life to write when idle).
    package enum Delivery: Sendable {
        case event(StreamEvent)
        case heartbeat
    }

    package typealias Channel = EventFeed.Channel

    private struct Key: Hashable {
        let person: Int64
        let channel: Channel
    }

    private struct Subscriber {
        let session: Int64
        let continuation: AsyncStream<Delivery>.Continuation
    }

    private struct State {
        var streams: [Key: [Int: Subscriber]] = [:]
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

    /// A subscriber's deliveries; `close()` (or the end of iteration) unsubscribes.
    package struct Subscription: Sendable {
        package let deliveries: AsyncStream<Delivery>
        fileprivate let continuation: AsyncStream<Delivery>.Continuation
        package func close() { continuation.finish() }
    }

    static let tooManyStreams = PlazaError(
        .tooManyRequests, "too_many_streams", "Too many open streams. Close one and try again.")

    /// Subscribes `person`'s `channel`. At the per-person cap (per channel), the person's open
    /// streams are probed first: a browser that moved to another page has closed its connection,
    /// but a half-closed socket is only found dead by writing to it (the second write fails once
    /// the peer has answered the first with a reset), so a few heartbeats over up to ~0.6 s free
    /// those places before the request is refused.
    package func subscribe(person: Int64, session: Int64, channel: Channel = .own) async throws -> Subscription {
        let key = Key(person: person, channel: channel)
        for attempt in 0...6 {
            if let subscription = try add(key, session: session) { return subscription }
            guard attempt < 6 else { break }
            let streams = state.withLockedValue { Array(($0.streams[key] ?? [:]).values) }
            for subscriber in streams { subscriber.continuation.yield(.heartbeat) }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Self.tooManyStreams
    }

    /// The new subscription, or nil when the person is at the per-person cap.
    private func add(_ key: Key, session: Int64) throws -> Subscription? {
        let (deliveries, continuation) = AsyncStream.makeStream(
            of: Delivery.self, bufferingPolicy: .bufferingOldest(limits.buffer))
        let id = try state.withLockedValue { state -> Int? in
            guard !state.closed else {
                throw PlazaError(.serviceUnavailable, "shutting_down", "The server is shutting down.")
            }
            guard state.count < limits.total else { throw Self.tooManyStreams }
            guard (state.streams[key]?.count ?? 0) < limits.perUser else { return nil }
            state.nextID += 1
            state.count += 1
            state.streams[key, default: [:]][state.nextID] = Subscriber(session: session, continuation: continuation)
            return state.nextID
        }
        guard let id else { return nil }
        continuation.onTermination = { [weak self] _ in self?.remove(key, id: id) }
        return Subscription(deliveries: deliveries, continuation: continuation)
    }

    private func remove(_ key: Key, id: Int) {
        state.withLockedValue { state in
            guard state.streams[key]?.removeValue(forKey: id) != nil else { return }
            state.count -= 1
            if state.streams[key]?.isEmpty == true { state.streams[key] = nil }
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

    package func run() async throws {
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
                let publicReaders = state.withLockedValue { state in
                    state.streams.keys.filter { $0.channel == .everyone }.map(\.person)
                }
                let (entries, through) = try await feed.entries(
                    after: position, through: head, publicReaders: publicReaders)
                let local = state.withLockedValue { state in
                    entries.filter { state.streams[Key(person: $0.recipient, channel: $0.channel)] != nil }
                }
                for (entry, event) in try await feed.events(local) {
                    deliver(event, to: Key(person: entry.recipient, channel: entry.channel))
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

    private func deliver(_ event: StreamEvent, to key: Key) {
        let slow = state.withLockedValue { state -> [AsyncStream<Delivery>.Continuation] in
            (state.streams[key]?.values).map { subscribers in
                subscribers.compactMap { subscriber in
                    if case .dropped = subscriber.continuation.yield(.event(event)) { return subscriber.continuation }
                    return nil
                }
            } ?? []
        }
        for continuation in slow {
            logger.info(
                "Closing a stream that fell \(limits.buffer) events behind", metadata: ["user": "\(key.person)"])
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
