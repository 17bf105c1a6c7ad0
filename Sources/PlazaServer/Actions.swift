/// The core's actions: every state change people make, decided once for every door. The
/// JSON API's controllers, the web app's pages and the Mastodon adapter translate their input
/// into an action's typed input and its answer into theirs; the action decides who may do it
/// (with the stores' queries), writes, and runs what follows the commit (files removed,
/// previews fetched). Reads go through the stores' visibility-aware queries.
package struct Actions: Sendable {
    package let posts: PostActions
    package let tags: TagActions
    package let people: PeopleActions
    package let collections: CollectionActions
    package let media: MediaActions
    let spaces: SpaceActions
    package let moderation: ModerationActions
    package let filters: KeywordFilterActions
    package let pins: PinActions
    package let lists: ListActions
    package let notes: AccountNoteActions
}

extension AppServices {
    var actions: Actions {
        Actions(
            posts: PostActions(
                posts: posts, comments: comments, likes: likes, boosts: boosts, polls: polls, storage: mediaStorage,
                previews: linkPreviewQueue),
            tags: TagActions(tags: tags),
            people: PeopleActions(people: people),
            collections: CollectionActions(collections: collections, posts: posts, previews: linkPreviewQueue),
            media: MediaActions(
                media: media, storage: mediaStorage, ingest: ingest, ids: ids, uploadDirectory: uploadDirectory,
                quotas: quotas),
            spaces: SpaceActions(spaces: spaces, storage: mediaStorage),
            moderation: ModerationActions(moderation: moderation, instance: instance, storage: mediaStorage),
            filters: KeywordFilterActions(filters: KeywordFilterStore(db: db, ids: ids)),
            pins: PinActions(pins: PinStore(db: db), posts: posts, people: people, spaces: spaces),
            lists: ListActions(lists: ListStore(db: db, ids: ids)),
            notes: AccountNoteActions(db: db, people: people))
    }
}
