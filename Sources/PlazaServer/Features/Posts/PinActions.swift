import PlazaAPI

/// Pins, decided once for every door (the JSON API, the web app, Mastodon apps): an author pins
/// their own posts to their profile, a space's moderators pin posts in it to its top. The stores
/// check who may, in the transaction that writes; lists are read through `Visibility`.
package struct PinActions: Sendable {
    let pins: PinStore
    let posts: PostStore
    let people: PeopleStore
    let spaces: SpaceStore

    /// `person` pins (or unpins) post `post` to their profile, or with `space` (a slug) to that
    /// space's top, and sees the post as it is now (`pinned` as it is in that place). 404 for a
    /// post or space they may not see, 403 `not_author` / `not_moderator`, 422 `not_in_space` or
    /// `too_many_pins`. Pinning twice, or unpinning what is not pinned, changes nothing.
    package func pin(_ post: Int64, by person: Int64, inSpace space: String? = nil, _ pinned: Bool) async throws
        -> Post
    {
        guard let space else {
            try await pins.setProfilePin(post: post, user: person, pinned: pinned)
            return try await posts.post(id: post, viewer: person)
        }
        let key = try await spaces.key(slug: space, viewer: person)
        try await pins.setSpacePin(post: post, space: key.id, moderator: person, pinned: pinned)
        var shown = try await posts.post(id: post, viewer: person)
        shown.pinned = pinned
        return shown
    }

    /// The posts the person named `username` pinned to their profile, as `viewer` may see them:
    /// 404 when the profile is hidden from the viewer.
    package func profilePins(username: String, viewer: Int64?) async throws -> [Post] {
        let author = try await people.userID(username: username, viewer: viewer)
        return try await pins.profilePins(author: author, viewer: viewer)
    }

    /// The posts person `author` pinned to their profile that `viewer` may read (the caller found
    /// the person as the viewer may see them).
    package func profilePins(author: Int64, viewer: Int64?) async throws -> [Post] {
        try await pins.profilePins(author: author, viewer: viewer)
    }

    /// The announcements pinned to the top of the space `slug`, when `viewer` may read its feed
    /// (none otherwise, as its feed); 404 for a space hidden from them.
    package func spacePins(slug: String, viewer: Int64?) async throws -> [Post] {
        let space = try await spaces.key(slug: slug, viewer: viewer)
        guard space.visibility == .open || space.role != nil else { return [] }
        return try await pins.spacePins(space: space.id, viewer: viewer)
    }
}
