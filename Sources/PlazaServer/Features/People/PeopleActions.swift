import PlazaAPI

/// What one person does to another, decided once for every door: follow, block and mute (and
/// undo them), answer a follow request. The store's writes refuse doing these to oneself and
/// write the notifications and timeline changes that follow.
package struct PeopleActions: Sendable {
    let people: PeopleStore

    package enum Change: Sendable {
        case follow, unfollow, block, unblock, mute, unmute

        /// Whom the change may reach: anyone a block either way does not hide for a follow;
        /// one's own block or mute is one's to change whatever one blocked, so only the other's
        /// block hides them.
        var hiding: Visibility.ProfileHiding {
            switch self {
            case .follow, .unfollow: .eitherWay
            case .block, .unblock, .mute, .unmute: .theirBlock
            }
        }
    }

    /// `person`'s change to the person named `username`; 404 when `change.hiding` hides them.
    /// Their profile as `person` now sees it.
    func relate(_ person: Int64, _ change: Change, username: String) async throws -> User {
        let target = try await people.userID(username: username, viewer: person, hiding: change.hiding)
        return try await apply(person, change, target)
    }

    /// `person`'s change to person `target`; 404 when `change.hiding` hides them. Their
    /// profile as `person` now sees it.
    package func relate(_ person: Int64, _ change: Change, _ target: Int64) async throws -> User {
        _ = try await people.profile(userID: target, viewer: person, hiding: change.hiding)
        return try await apply(person, change, target)
    }

    private func apply(_ person: Int64, _ change: Change, _ target: Int64) async throws -> User {
        switch change {
        case .follow: try await people.follow(follower: person, followee: target)
        case .unfollow: try await people.unfollow(follower: person, followee: target)
        case .block: try await people.block(blocker: person, blocked: target)
        case .unblock: try await people.unblock(blocker: person, blocked: target)
        case .mute: try await people.mute(muter: person, muted: target)
        case .unmute: try await people.unmute(muter: person, muted: target)
        }
        return try await people.profile(userID: target, viewer: person, hiding: change.hiding)
    }

    /// `person` approves or denies the follow request of `requester`: 404 when they did not ask.
    package func answerRequest(from requester: Int64, to person: Int64, approve: Bool) async throws {
        if approve {
            try await people.approveRequest(from: requester, to: person)
        } else {
            try await people.denyRequest(from: requester, to: person)
        }
    }

    /// Whether `person`'s account asks before anyone follows it.
    package func setLocked(_ person: Int64, _ locked: Bool) async throws {
        try await people.setLocked(userID: person, locked)
    }
}
