import Logging
import PlazaAPI

/// What people do to posts, their comments and likes, decided once for every door: the JSON
/// API, the web app and Mastodon apps call these and only translate their input and answers.
/// Each action takes the acting person and typed input, decides who may do it (the stores'
/// queries apply who may see what), writes, and runs what follows the commit: a new post's link
/// preview is fetched, a deleted post's media files are removed.
package struct PostActions: Sendable {
    let posts: PostStore
    let comments: CommentStore
    let likes: LikeStore
    package let boosts: BoostStore
    let polls: PollStore
    let storage: any MediaStorage
    /// Wakes the link preview worker.
    let previews: WorkSignal

    static let notAuthorEdit = PlazaError(.forbidden, "not_author", "Only the author can edit this post.")
    static let notAuthorDelete = PlazaError(.forbidden, "not_author", "Only the author can delete this post.")
    static let notCommentOwner = PlazaError(
        .forbidden, "not_allowed", "Only the comment's author or the post's author can delete it.")

    /// A new post by `author`, as they see it.
    package func create(by author: Int64, _ draft: PostStore.Draft, at time: Timestamp = .now) async throws -> Post {
        let post = try await posts.create(author: author, draft, at: time)
        if post.link != nil, post.link?.fetchedAt == nil { previews.wake() }
        return post
    }

    /// The author's change to post `id`, made from the post as it is (`changes` may refuse it);
    /// the post as the author now sees it. 404 for a post `person` may not read, 403 for another's.
    package func update(_ id: Int64, by person: Int64, _ changes: (Post) throws -> PostStore.Changes) async throws
        -> Post
    {
        let record = try await own(id, by: person, otherwise: Self.notAuthorEdit)
        try await posts.update(record, try changes(record.post))
        return try await posts.post(id: id, viewer: person)
    }

    /// Deletes post `id`, then its media files; returns the post as it was. 404 for a post
    /// `person` may not read, 403 for another's.
    @discardableResult
    package func delete(_ id: Int64, by person: Int64, logger: Logger) async throws -> Post {
        let record = try await own(id, by: person, otherwise: Self.notAuthorDelete)
        let media = try await posts.delete(id: id, author: person)
        await storage.deleteFiles(ofMedia: media, logger: logger)
        return record.post
    }

    private func own(_ id: Int64, by person: Int64, otherwise refusal: PlazaError) async throws -> PostRecord {
        guard let record = try await posts.record(id: id, viewer: person) else { throw PlazaError.notFound("Post") }
        guard record.authorID == person else { throw refusal }
        return record
    }

    /// A comment by `author` on post `post` (404 when they may not read it). `body` is validated text.
    package func comment(on post: Int64, by author: Int64, body: String) async throws -> Comment {
        try await comments.create(post: post, author: author, body: body)
    }

    /// Deletes comment `id`: its author or the post's author may. 404 for a comment `person`
    /// may not see, 403 for one that is not theirs to delete.
    package func deleteComment(_ id: Int64, by person: Int64) async throws {
        guard let owners = try await comments.owners(comment: id, viewer: person) else {
            throw PlazaError.notFound("Comment")
        }
        guard owners.commentAuthor == person || owners.postAuthor == person else { throw Self.notCommentOwner }
        guard try await comments.delete(comment: id, by: person) else { throw PlazaError.notFound("Comment") }
    }

    /// `person` boosts (or no longer boosts) post `post` to their followers, and sees the post as it
    /// is now; 404 when they may not read it, 422 `not_boostable` for a post that is not public.
    package func boost(_ post: Int64, by person: Int64, _ boosted: Bool) async throws -> Post {
        try await boosts.set(post: post, user: person, boosted: boosted)
        return try await posts.post(id: post, viewer: person)
    }

    /// `person` votes in post `post`'s poll (see `PollStore.vote` for its refusals) and sees the poll as it is now.
    package func vote(in post: Int64, by person: Int64, choices: [Int]) async throws -> Poll {
        try await polls.vote(post: post, by: person, choices: choices)
    }

    /// Post `post`'s poll as `viewer` sees it; 404 when they may not read the post or it has none.
    package func poll(of post: Int64, viewer: Int64?) async throws -> Poll {
        guard let poll = try await posts.post(id: post, viewer: viewer).poll else { throw PollStore.noPoll }
        return poll
    }

    /// `person` likes (or no longer likes) post `post`; 404 when they may not read it.
    package func like(_ post: Int64, by person: Int64, _ liked: Bool) async throws -> LikeState {
        try await likes.set(post: post, user: person, liked: liked)
    }
}
