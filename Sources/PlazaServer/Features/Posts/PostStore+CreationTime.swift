import PlazaAPI

extension PostStore {
    /// The creation time of the post `id` (a cursor's time), nil when it is gone.
    package func creationTime(of id: Int64) async throws -> Int64? {
        try await db.read { db in
            try await db.first("SELECT created_at FROM posts WHERE id = \(bind: id)")
        }.map { try $0.decode(column: "created_at", as: Int64.self) }
    }
}
