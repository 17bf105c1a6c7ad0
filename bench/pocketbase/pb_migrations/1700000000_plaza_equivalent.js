// Plaza's schema, expressed as PocketBase collections, for the side-by-side benchmark
// (bench/README.md). Uses PocketBase's built-in `users` auth collection.
//
// Rules: everything is publicly readable (like Plaza's public posts); writing needs a
// signed-in user who must be the record's author/user/follower; only the owner updates
// or deletes. PocketBase indexes no relation or autodate field by itself; these indexes cover
// every filter and sort the benchmark sends (listed in bench/README.md).
migrate((app) => {
  const users = app.findCollectionByNameOrId("users");
  // Profiles are public in Plaza, so `expand=author` must be able to read them.
  users.listRule = "";
  users.viewRule = "";
  app.save(users);

  const owner = (field) => `@request.auth.id != '' && ${field} = @request.auth.id`;

  const posts = new Collection({
    type: "base",
    name: "posts",
    listRule: "",
    viewRule: "",
    createRule: owner("@request.body.author"),
    updateRule: owner("author") + " && (@request.body.author:isset = false || @request.body.author = @request.auth.id)",
    deleteRule: owner("author"),
    fields: [
      { name: "author", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "title", type: "text", max: 300 },
      { name: "body", type: "text", max: 10000 },
      { name: "created", type: "autodate", onCreate: true, onUpdate: false },
      { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
    ],
    indexes: [
      "CREATE INDEX idx_posts_created ON posts (created)",
      "CREATE INDEX idx_posts_author_created ON posts (author, created)",
    ],
  });
  app.save(posts);

  const follows = new Collection({
    type: "base",
    name: "follows",
    listRule: "",
    viewRule: "",
    createRule: owner("@request.body.follower"),
    updateRule: null, // a follow is created or deleted, never edited
    deleteRule: owner("follower"),
    fields: [
      { name: "follower", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "followee", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "created", type: "autodate", onCreate: true, onUpdate: false },
    ],
    indexes: [
      "CREATE UNIQUE INDEX idx_follows_pair ON follows (follower, followee)",
      "CREATE INDEX idx_follows_followee ON follows (followee)",
    ],
  });
  app.save(follows);

  const likes = new Collection({
    type: "base",
    name: "likes",
    listRule: "",
    viewRule: "",
    createRule: owner("@request.body.user"),
    updateRule: null,
    deleteRule: owner("user"),
    fields: [
      { name: "post", type: "relation", required: true, maxSelect: 1, collectionId: posts.id, cascadeDelete: true },
      { name: "user", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "created", type: "autodate", onCreate: true, onUpdate: false },
    ],
    indexes: [
      "CREATE UNIQUE INDEX idx_likes_pair ON likes (post, user)",
      "CREATE INDEX idx_likes_user ON likes (user)",
    ],
  });
  app.save(likes);

  const comments = new Collection({
    type: "base",
    name: "comments",
    listRule: "",
    viewRule: "",
    createRule: owner("@request.body.author"),
    updateRule: owner("author") + " && (@request.body.author:isset = false || @request.body.author = @request.auth.id)",
    deleteRule: owner("author"),
    fields: [
      { name: "post", type: "relation", required: true, maxSelect: 1, collectionId: posts.id, cascadeDelete: true },
      { name: "author", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "body", type: "text", required: true, max: 5000 },
      { name: "created", type: "autodate", onCreate: true, onUpdate: false },
      { name: "updated", type: "autodate", onCreate: true, onUpdate: true },
    ],
    indexes: [
      "CREATE INDEX idx_comments_post_created ON comments (post, created)",
    ],
  });
  app.save(comments);

  // The batch API is PocketBase's documented bulk path; it is off by default.
  const settings = app.settings();
  settings.batch.enabled = true;
  settings.batch.maxRequests = 1000;
  settings.batch.timeout = 600;
  app.save(settings);
}, (app) => {
  for (const name of ["comments", "likes", "follows", "posts"]) {
    app.delete(app.findCollectionByNameOrId(name));
  }
});
