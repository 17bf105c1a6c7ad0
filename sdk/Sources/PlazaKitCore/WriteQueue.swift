import Foundation
import PlazaAPI

/// The writes an app makes — posts, comments, likes, follows, saves, votes, boosts, uploads —
/// kept on disk in order and sent when the server can be reached, each exactly once.
///
/// Every write carries its id as `Idempotency-Key`, so a write sent again after a dropped
/// connection (the server may have done it and the answer been lost) is answered with the first
/// answer and not done twice. Writes are sent one at a time in the order they were made:
/// - a write the server takes is dropped from the queue (`WriteEvent.sent`, with the answer);
/// - one it refuses (a 4xx: the post was deleted, the text too long) is dropped and the app told
///   why (`WriteEvent.refused`); writes that depend on it are refused too;
/// - on a network error, a 5xx, a 408, a 429, a 409 `idempotency_key_in_use`, a 401 (sign in
///   again), an answer that is not Plaza's (a captive portal's page), or while another account
///   is signed in, the queue stops and keeps everything, to try again later
///   (`WriteEvent.waiting`): on `sync()`, `run()`'s next round, or after the app restarts.
///
/// A queue belongs to one account (`owner`, the person's id): it sends nothing while another is
/// signed in. It lives in a folder of its own (`directory`), which one queue at a time may open
/// (a lock file): `queue.json` with the writes in order, and beside it the files of uploads and
/// the bodies of writes once sent.
public actor WriteQueue {
    public nonisolated let client: PlazaClient
    /// The queue's folder: `queue.json`, uploads' files and sent bodies.
    public nonisolated let directory: URL
    /// The id of the person whose writes these are.
    public nonisolated let owner: String
    /// Newest last, in the order they will be sent.
    public internal(set) var pending: [PendingWrite] = []
    /// Server ids of writes that landed, with when, for writes and screens that name them
    /// (`pending:` references), kept a day.
    var landed: [String: Landed] = [:]
    /// Writes the server refused (or the app cancelled), whose dependants are refused in turn.
    var refused: Set<String> = []
    var sending = false
    /// The events of the `sync()` running, if one is.
    var round: [WriteEvent]?
    private var subscribers: [UUID: AsyncStream<WriteEvent>.Continuation] = [:]
    /// `run()` waiting for something to send, and whether it was woken while it was not waiting.
    var waiter: CheckedContinuation<Void, Never>?
    var woken = false
    private let lock: DirectoryLock

    struct Landed: Codable {
        var id: String
        var at: Date
    }

    struct State: Codable {
        var owner: String
        var pending: [PendingWrite]
        var landed: [String: Landed]
        var refused: Set<String>
    }

    /// Why a queue cannot be opened.
    public enum OpenError: Error, Equatable {
        /// Another `WriteQueue` (in this process or another) has the folder open.
        case inUse
        /// The folder holds another account's queue: give each account a folder of its own.
        case anotherAccount(owner: String)
    }

    /// The queue of `owner` (the signed-in person's id) kept in `directory` (created if need be),
    /// with the writes a previous run left. With `waitingForLock`, waits while another process
    /// has it open (a command-line tool); else that is `OpenError.inUse`.
    public init(client: PlazaClient, directory: URL, owner: String, waitingForLock: Bool = false) throws {
        self.client = client
        self.directory = directory
        self.owner = owner
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        lock = try DirectoryLock(directory.appendingPathComponent("lock"), waiting: waitingForLock)
        let file = directory.appendingPathComponent("queue.json")
        if let data = try? Data(contentsOf: file) {
            let state = try PlazaClient.decoder.decode(State.self, from: data)
            guard state.owner == owner else { throw OpenError.anotherAccount(owner: state.owner) }
            (pending, landed, refused) = (state.pending, state.landed, state.refused)
        }
        Self.removeOrphans(in: directory, keeping: pending)
    }

    // MARK: queueing

    /// Queues `intent` and returns it as pending; `sync()` or `run()` sends it.
    @discardableResult
    public func enqueue(_ intent: WriteIntent) throws -> PendingWrite {
        let write = PendingWrite(id: UUID().uuidString.lowercased(), intent: intent, queuedAt: Date())
        pending.append(write)
        try save()
        publish(.queued(write))
        wake()
        return write
    }

    /// Queues the upload of the file at `url` (copied into the queue's folder, so the app may
    /// delete its own); a post names it by `reference` in `mediaIds`.
    @discardableResult
    public func enqueueUpload(
        of url: URL, filename: String? = nil, contentType: String, description: String? = nil
    ) throws -> PendingWrite {
        let name = "upload-" + UUID().uuidString.lowercased()
        try FileManager.default.copyItem(at: url, to: directory.appendingPathComponent(name))
        return try enqueue(
            .upload(
                file: name, filename: filename ?? url.lastPathComponent, contentType: contentType,
                description: description))
    }

    /// Queues a post with its photos or videos: each file's upload, then the post naming them.
    @discardableResult
    public func enqueuePost(_ post: CreatePostRequest, files: [(url: URL, contentType: String)] = []) throws
        -> PendingWrite
    {
        var post = post
        var ids = post.mediaIds ?? []
        for file in files { ids.append(try enqueueUpload(of: file.url, contentType: file.contentType).reference) }
        post.mediaIds = ids.isEmpty ? nil : ids
        return try enqueue(.createPost(post))
    }

    /// Takes a write out before it is sent; false once it has been sent (it may have reached the
    /// server, whose answer decides) or is not pending.
    @discardableResult
    public func cancel(_ id: String) throws -> Bool {
        guard let index = pending.firstIndex(where: { $0.id == id }), pending[index].sent == nil else { return false }
        let write = pending.remove(at: index)
        refused.insert(write.id)
        try save()
        removeFiles(of: write)
        publish(.cancelled(write))
        return true
    }

    /// Tries again now: the same as `sync()`, for a "retry" button.
    @discardableResult
    public func retry() async -> SyncResult { await sync() }

    /// Call when the network comes back: `run()` sends at once instead of at its next round.
    public func networkChanged() { wake() }

    /// The server's id of what a write made (a post, comment, upload), once it has landed: for a
    /// screen that still shows the write's `reference`. Kept a day.
    public func landedID(of reference: String) -> String? {
        PendingWrite.pendingID(reference).flatMap { landed[$0]?.id }
    }

    // MARK: events

    /// What happens to the writes from now on; the stream ends when the task reading it is cancelled.
    public func events() -> AsyncStream<WriteEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: WriteEvent.self)
        let id = UUID()
        subscribers[id] = continuation
        continuation.onTermination = { _ in Task { await self.unsubscribe(id) } }
        return stream
    }

    private func unsubscribe(_ id: UUID) { subscribers[id] = nil }

    func publish(_ event: WriteEvent) {
        switch event {
        case .sent, .refused, .waiting: round?.append(event)
        default: break
        }
        for continuation in subscribers.values { continuation.yield(event) }
    }

    // MARK: storage

    /// Writes the queue's state; a write's files are removed only after the state that no
    /// longer names them is saved, so a crash leaves files without a write, never the reverse.
    func save() throws {
        let dayAgo = Date().addingTimeInterval(-86_400)
        landed = landed.filter { $0.value.at > dayAgo }
        let named = Set(pending.flatMap(\.intent.references))
        refused = refused.filter { named.contains($0) }
        let state = State(owner: owner, pending: pending, landed: landed, refused: refused)
        try PlazaClient.encoder.encode(state).write(
            to: directory.appendingPathComponent("queue.json"), options: .atomic)
    }

    func removeFiles(of write: PendingWrite) {
        for name in Self.files(of: write) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }

    static func files(of write: PendingWrite) -> [String] {
        var names: [String] = []
        if case .upload(let file, _, _, _) = write.intent { names.append(file) }
        if let body = write.sent?.bodyFile { names.append(body) }
        return names
    }

    /// Removes the uploads' copies and sent bodies no pending write names (a crash between
    /// saving and removing left them).
    static func removeOrphans(in directory: URL, keeping pending: [PendingWrite]) {
        let kept = Set(pending.flatMap(files(of:)))
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where (name.hasPrefix("upload-") || name.hasPrefix("body-")) && !kept.contains(name) {
            try? FileManager.default.removeItem(at: directory.appendingPathComponent(name))
        }
    }
}
