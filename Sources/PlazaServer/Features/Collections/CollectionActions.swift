import PlazaAPI

/// What a collection's name and an item's note may be, for every door's validation and the
/// OpenAPI document.
enum CollectionRules {
    static let maxNameLength = 100
    static let maxNoteLength = 2_000
    /// The collection Mastodon apps' bookmarks are saved in (made at the first one).
    static let bookmarks = "Bookmarks"
}

/// What people do to their collections, decided once for every door: the JSON API, the web
/// app's share target and Mastodon's bookmarks. Each takes the owner and typed input; the
/// store's queries refuse another person's collection or item (404) and a post the owner may
/// not read; a saved link wakes the preview worker.
package struct CollectionActions: Sendable {
    let collections: CollectionStore
    let posts: PostStore
    /// Wakes the link preview worker.
    let previews: WorkSignal

    func create(by owner: Int64, name: String) async throws -> SavedCollection {
        try await collections.create(owner: owner, name: name)
    }

    func rename(_ id: Int64, by owner: Int64, name: String) async throws -> SavedCollection {
        try await collections.rename(id: id, owner: owner, name: name)
    }

    func delete(_ id: Int64, by owner: Int64) async throws {
        try await collections.delete(id: id, owner: owner)
    }

    /// Saves a post or a link into the owner's collection; the new item.
    func save(_ saved: CollectionStore.Saved, note: String, into collection: Int64, by owner: Int64)
        async throws -> CollectionItem
    {
        let id = try await collections.save(saved, note: note, collection: collection, owner: owner)
        if case .link = saved { previews.wake() }
        return try await collections.item(id: id, owner: owner, posts: posts)
    }

    /// Where a shared link goes: one of the owner's collections, or a new one of this name.
    enum Destination: Sendable {
        case collection(Int64)
        case new(name: String)
    }

    /// Saves a link shared to the app; returns the collection it went into. A collection made
    /// for it goes again when the link cannot be saved.
    func save(link url: String, note: String, into destination: Destination, by owner: Int64) async throws -> Int64 {
        switch destination {
        case .collection(let id):
            _ = try await save(.link(url), note: note, into: id, by: owner)
            return id
        case .new(let name):
            let made = try await create(by: owner, name: name)
            guard let id = parseID(made.id) else { throw CollectionStore.notFound }
            do {
                _ = try await save(.link(url), note: note, into: id, by: owner)
            } catch {
                try? await collections.delete(id: id, owner: owner)
                throw error
            }
            return id
        }
    }

    /// Moves an item to another of the owner's collections and/or changes its note.
    func updateItem(_ id: Int64, by owner: Int64, moveTo target: Int64?, note: String?) async throws -> CollectionItem {
        try await collections.updateItem(id: id, owner: owner, moveTo: target, note: note)
        return try await collections.item(id: id, owner: owner, posts: posts)
    }

    func deleteItem(_ id: Int64, by owner: Int64) async throws {
        try await collections.deleteItem(id: id, owner: owner)
    }

    /// Bookmarks (Mastodon's) are saves into the owner's "Bookmarks" collection: bookmarking
    /// twice keeps one, removing one that is not there does nothing. 404 for a post the owner
    /// may not read.
    package func bookmark(_ post: Int64, by owner: Int64, _ bookmarked: Bool) async throws {
        guard
            let collection = try await collections.named(CollectionRules.bookmarks, owner: owner, creating: bookmarked)
        else { return }
        guard bookmarked else {
            try await collections.unsave(post: post, collection: collection, owner: owner)
            return
        }
        do {
            _ = try await collections.save(.post(post), note: "", collection: collection, owner: owner)
        } catch let error as PlazaError where error.status == .conflict {
            // Bookmarked already.
        }
    }
}
