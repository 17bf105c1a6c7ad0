import Foundation
import PlazaAPI

extension WriteQueue {
    /// What a `sync()` did: the writes that landed, were refused or must wait, in order.
    public struct SyncResult: Sendable {
        /// True when nothing is left to send.
        public var finished: Bool
        /// `.sent`, `.refused` and `.waiting` events of this round, in order.
        public var events: [WriteEvent]
    }

    /// Sends the pending writes in order until the queue is empty (`finished`) or a write cannot
    /// be sent now (offline, the server down or busy, another account signed in; the writes are
    /// kept). A `sync()` while another runs returns at once, unfinished.
    @discardableResult
    public func sync() async -> SyncResult {
        guard !sending else { return SyncResult(finished: false, events: []) }
        sending = true
        round = []
        defer {
            sending = false
            round = nil
        }
        guard let first = pending.first else { return SyncResult(finished: true, events: []) }
        if let reason = await signedInElsewhere() {
            _ = wait(first, reason: reason)
            return SyncResult(finished: false, events: round ?? [])
        }
        while let write = pending.first {
            guard await send(write) else { return SyncResult(finished: false, events: round ?? []) }
        }
        return SyncResult(finished: true, events: round ?? [])
    }

    /// Why the writes cannot go now, if the person signed in is not the queue's (or unknown).
    private func signedInElsewhere() async -> String? {
        do {
            let me = try await client.me()
            return me.user.id == owner
                ? nil : "@\(me.user.username) is signed in, not the account these writes are from"
        } catch {
            return String(describing: error)
        }
    }

    /// Sends `write`; false when it must wait.
    private func send(_ write: PendingWrite) async -> Bool {
        var write = write
        let request: PendingWrite.SentRequest
        let body: Data?
        do {
            request = try prepared(&write)
            body = try request.bodyFile.map {
                try Data(contentsOf: directory.appendingPathComponent($0), options: .alwaysMapped)
            }
        } catch let error as PlazaClientError {
            finish(write, refusedWith: error)
            return true
        } catch {
            // Its files are gone or unreadable: it can never be sent as it was made.
            finish(
                write,
                refusedWith: PlazaClientError(
                    status: 0, code: "write_unreadable", message: "The queued write's files cannot be read: \(error)"))
            return true
        }
        let sending = write
        do {
            let response = try await client.send(
                request.method, request.path, raw: body.map { ($0, request.contentType ?? "application/json") },
                headers: ["Idempotency-Key": write.id],
                uploadProgress: { [weak self] fraction in
                    guard let self else { return }
                    Task { await self.publish(.progress(sending, fraction)) }
                })
            guard (200..<300).contains(response.status),
                response.headers["content-type"]?.lowercased().hasPrefix("application/json") == true
            else {
                // A redirect followed to a page, a captive portal's page: not Plaza's answer.
                return wait(write, reason: "The answer (\(response.status)) was not Plaza's")
            }
            let outcome = write.intent.outcome(from: response.body)
            if let id = outcome.createdID { landed[write.id] = Landed(id: id, at: Date()) }
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
        try? save()
        removeFiles(of: write)
        publish(event)
    }

    /// The request of `write`, built and kept on disk the first time it is sent.
    private func prepared(_ write: inout PendingWrite) throws -> PendingWrite.SentRequest {
        if let sent = write.sent { return sent }
        let request = try write.intent.request(resolving: resolve)
        var sent = PendingWrite.SentRequest(method: request.method, path: request.path)
        let name = "body-" + write.id
        let file = directory.appendingPathComponent(name)
        if case .upload(let upload, let filename, let contentType, let description) = write.intent {
            sent.contentType = try MultipartForm.write(
                directory.appendingPathComponent(upload), filename: filename, contentType: contentType,
                description: description, to: file)
            sent.bodyFile = name
        } else if let body = request.body {
            try body.write(to: file, options: .atomic)
            sent.bodyFile = name
            sent.contentType = "application/json"
        }
        write.sent = sent
        if let index = pending.firstIndex(where: { $0.id == write.id }) { pending[index] = write }
        try save()
        return sent
    }

    /// A `pending:` reference as the server's id, once its write has landed.
    private func resolve(_ id: String) throws -> String {
        guard let pendingID = PendingWrite.pendingID(id) else { return id }
        if let landed = landed[pendingID] { return landed.id }
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

    func wake() {
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
