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
/// - on a network error, a 5xx, a 408, a 429, or a 409 `idempotency_key_in_use` the queue stops
///   and keeps everything, to try again later (`WriteEvent.waiting`): on `sync()`, `run()`'s next
///   round, or after the app restarts.
///
/// The queue lives in a folder of its own (`directory`): `queue.json` with the writes in order,
/// and beside it the files of uploads and the bodies of writes once sent.
public actor WriteQueue {
    public nonisolated let client: PlazaClient
    /// The queue's folder: `queue.json`, uploads' files and sent bodies.
    public nonisolated let directory: URL
    /// Newest last, in the order they will be sent.
    public private(set) var pending: [PendingWrite] = []
    /// Server ids of writes that landed, for writes that name them (`pending:` references).
    private var landed: [String: String] = [:]
    /// Writes the server refused, whose dependants are refused in turn.
    private var refused: Set<String> = []
    private var sending = false
    /// The events of the `sync()` running, if one is.
    private var round: [WriteEvent]?
    private var subscribers: [UUID: AsyncStream<WriteEvent>.Continuation] = [:]
    /// `run()` waiting for something to send, and whether it was woken while it was not waiting.
    private var waiter: CheckedContinuation<Void, Never>?
    private var woken = false

    struct State: Codable {
        var pending: [PendingWrite]
        var landed: [String: String]
        var refused: Set<String>
    }

    /// The queue kept in `directory` (created if need be), with the writes a previous run left.
    public init(client: PlazaClient, directory: URL) throws {
        self.client = client
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("queue.json")
        if let data = try? Data(contentsOf: file) {
            let state = try PlazaClient.decoder.decode(State.self, from: data)
            (pending, landed, refused) = (state.pending, state.landed, state.refused)
        }
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

    /// Takes a write out before it is sent; false when it is not pending (sent, or being sent now).
    @discardableResult
    public func cancel(_ id: String) throws -> Bool {
        guard let index = pending.firstIndex(where: { $0.id == id }), !(sending && index == 0) else { return false }
        let write = pending.remove(at: index)
        refused.insert(write.id)
        removeFiles(of: write)
        try save()
        publish(.cancelled(write))
        return true
    }

    /// Tries again now: the same as `sync()`, for a "retry" button.
    @discardableResult
    public func retry() async -> SyncResult { await sync() }

    /// Call when the network comes back: `run()` sends at once instead of at its next round.
    public func networkChanged() { wake() }

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

    func save() throws {
        let state = State(pending: pending, landed: landed, refused: refused)
        try PlazaClient.encoder.encode(state).write(
            to: directory.appendingPathComponent("queue.json"), options: .atomic)
    }

    private func removeFiles(of write: PendingWrite) {
        var names: [String] = []
        if case .upload(let file, _, _, _) = write.intent { names.append(file) }
        if let body = write.sent?.bodyFile { names.append(body) }
        for name in names { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
    }

    // MARK: sending

    /// What a `sync()` did: the writes that landed, were refused or must wait, in order.
    public struct SyncResult: Sendable {
        /// True when nothing is left to send.
        public var finished: Bool
        /// `.sent`, `.refused` and `.waiting` events of this round, in order.
        public var events: [WriteEvent]
    }

    /// Sends the pending writes in order until the queue is empty (`finished`) or a write cannot
    /// be sent now (offline, or the server down or busy; the writes are kept). A `sync()` while
    /// another runs returns at once, unfinished.
    @discardableResult
    public func sync() async -> SyncResult {
        guard !sending else { return SyncResult(finished: false, events: []) }
        sending = true
        round = []
        defer {
            sending = false
            round = nil
        }
        while let write = pending.first {
            guard await send(write) else { return SyncResult(finished: false, events: round ?? []) }
        }
        return SyncResult(finished: true, events: round ?? [])
    }

    /// Sends `write`; false when it must wait.
    private func send(_ write: PendingWrite) async -> Bool {
        var write = write
        let request: PendingWrite.SentRequest
        do {
            request = try prepared(&write)
        } catch let error as PlazaClientError {
            finish(write, refusedWith: error)
            return true
        } catch {
            return wait(write, reason: "Could not keep the request: \(error)")
        }
        let sending = write
        do {
            let body = try request.bodyFile.map { try Data(contentsOf: directory.appendingPathComponent($0)) }
            let response = try await client.send(
                request.method, request.path, raw: body.map { ($0, request.contentType ?? "application/json") },
                headers: ["Idempotency-Key": write.id],
                uploadProgress: { [weak self] fraction in
                    guard let self else { return }
                    Task { await self.publish(.progress(sending, fraction)) }
                })
            let outcome = write.intent.outcome(from: response.body)
            if let id = outcome.createdID { landed[write.id] = id }
            finish(write, event: .sent(write, outcome))
            return true
        } catch let error as PlazaClientError where !Self.isTransient(error) {
            finish(write, refusedWith: error)
            return true
        } catch {
            return wait(write, reason: String(describing: error))
        }
    }

    /// Whether a failed write may land later: the server was down, busy or slow, or another
    /// copy of it is still being answered, or the person must sign in again.
    static func isTransient(_ error: PlazaClientError) -> Bool {
        error.status >= 500 || [408, 429].contains(error.status) || error.code == "idempotency_key_in_use"
            || error.status == 401
    }

    private func wait(_ write: PendingWrite, reason: String) -> Bool {
        var write = write
        write.attempts += 1
        write.lastError = reason
        if let index = pending.firstIndex(where: { $0.id == write.id }) { pending[index] = write }
        try? save()
        publish(.waiting(write, reason: reason))
        return false
    }

    private func finish(_ write: PendingWrite, refusedWith error: PlazaClientError) {
        refused.insert(write.id)
        finish(write, event: .refused(write, error))
    }

    private func finish(_ write: PendingWrite, event: WriteEvent) {
        pending.removeAll { $0.id == write.id }
        removeFiles(of: write)
        // Ids nothing pending names any more are forgotten.
        let named = Set(pending.flatMap(\.intent.references))
        landed = landed.filter { named.contains($0.key) }
        refused = refused.filter { named.contains($0) }
        try? save()
        publish(event)
    }

    /// The request of `write`, built and kept on disk the first time it is sent.
    private func prepared(_ write: inout PendingWrite) throws -> PendingWrite.SentRequest {
        if let sent = write.sent { return sent }
        let request = try write.intent.request(resolving: resolve)
        var sent = PendingWrite.SentRequest(method: request.method, path: request.path)
        var body = request.body
        if case .upload(let file, let filename, let contentType, let description) = write.intent {
            let form = try MultipartForm.upload(
                file: directory.appendingPathComponent(file), filename: filename, contentType: contentType,
                description: description)
            body = form.data
            sent.contentType = form.contentType
        }
        if let body {
            let name = "body-" + write.id
            try body.write(to: directory.appendingPathComponent(name), options: .atomic)
            sent.bodyFile = name
            sent.contentType = sent.contentType ?? "application/json"
        }
        write.sent = sent
        if let index = pending.firstIndex(where: { $0.id == write.id }) { pending[index] = write }
        try save()
        return sent
    }

    /// A `pending:` reference as the server's id, once its write has landed.
    private func resolve(_ id: String) throws -> String {
        guard let pendingID = PendingWrite.pendingID(id) else { return id }
        if let landed = landed[pendingID] { return landed }
        throw PlazaClientError(
            status: 422, code: refused.contains(pendingID) ? "depends_on_refused" : "unknown_pending_write",
            message: refused.contains(pendingID)
                ? "This depended on a write that was refused or cancelled." : "This names a write that is not queued.")
    }

    // MARK: running

    /// Sends what is pending now, and again whenever something is queued, the network comes back
    /// (`networkChanged()`) or, while writes wait, after a pause that doubles from one second to a
    /// minute. Runs until its task is cancelled.
    public func run() async {
        var pause: Duration = .seconds(1)
        while !Task.isCancelled {
            let done = await sync().finished
            if done { pause = .seconds(1) }
            await waitForWakeUp(timeout: done ? nil : pause)
            if !done { pause = min(pause * 2, .seconds(60)) }
        }
    }

    private func wake() {
        if let waiter {
            self.waiter = nil
            waiter.resume()
        } else {
            woken = true
        }
    }

    private func waitForWakeUp(timeout: Duration?) async {
        defer { woken = false }
        guard !woken, !Task.isCancelled else { return }
        let timer = timeout.map { timeout in
            Task {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                self.wake()
            }
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { waiter = $0 }
        } onCancel: {
            Task { await self.wake() }
        }
        timer?.cancel()
    }
}

/// A multipart form with one file, as `PlazaClient.upload` sends it.
enum MultipartForm {
    static func upload(file: URL, filename: String, contentType: String, description: String?) throws
        -> (data: Data, contentType: String)
    {
        try upload(Data(contentsOf: file), filename: filename, contentType: contentType, description: description)
    }

    static func upload(_ data: Data, filename: String, contentType: String, description: String?)
        -> (data: Data, contentType: String)
    {
        let boundary = "plaza-\(UUID().uuidString)"
        let name = filename.replacingOccurrences(of: "\"", with: "").replacingOccurrences(of: "\r", with: "")
            .replacingOccurrences(of: "\n", with: "")
        var body = Data(
            "--\(boundary)\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\(name)\"\r\n".utf8)
        body.append(Data("Content-Type: \(contentType)\r\n\r\n".utf8))
        body.append(data)
        if let description {
            body.append(Data("\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"description\"\r\n\r\n".utf8))
            body.append(Data(description.utf8))
        }
        body.append(Data("\r\n--\(boundary)--\r\n".utf8))
        return (body, "multipart/form-data; boundary=\(boundary)")
    }
}
