import Logging
import PlazaAPI

/// What people do to spaces, decided once for every door: make one, edit it (its owner),
/// join and leave it. The store's queries decide who may see a space (404 otherwise); an
/// edit's replaced image goes once nothing else uses it.
struct SpaceActions: Sendable {
    let spaces: SpaceStore
    let storage: any MediaStorage

    static let notOwner = PlazaError(.forbidden, "not_owner", "Only the space's owner can edit it.")

    func create(by owner: Int64, _ draft: SpaceStore.Draft) async throws -> Space {
        try await spaces.create(owner: owner, draft)
    }

    /// The owner's change to the space at `slug`; 404 for a space `person` may not see, 403
    /// for another's. The space as they now see it.
    func update(_ slug: String, by person: Int64, _ changes: SpaceStore.Changes, logger: Logger) async throws -> Space {
        let key = try await spaces.key(slug: slug, viewer: person)
        guard key.owner == person else { throw Self.notOwner }
        let unused = try await spaces.update(id: key.id, owner: person, changes)
        await storage.deleteFiles(ofMedia: unused, logger: logger)
        return try await spaces.space(id: key.id, viewer: person)
    }

    /// Joins the space at `slug` (or asks to, when it takes requests); the space as `person` now sees it.
    func join(_ slug: String, by person: Int64) async throws -> Space {
        let key = try await spaces.key(slug: slug, viewer: person)
        try await spaces.join(key, user: person)
        return try await spaces.space(id: key.id, viewer: person)
    }

    /// Leaves the space at `slug`; the space as it was seen, now without `person` as a member
    /// (a private space is gone from their view once they left).
    func leave(_ slug: String, by person: Int64) async throws -> Space {
        let key = try await spaces.key(slug: slug, viewer: person)
        var space = try await spaces.space(id: key.id, viewer: person)
        try await spaces.leave(key, user: person)
        if space.viewer.member { space.counts.members -= 1 }
        space.viewer = Space.Viewer(member: false, owner: false)
        return space
    }
}
