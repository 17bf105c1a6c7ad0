// Step 22's social features as PocketBase collections, for the social scenarios of the benchmark
// (bench/README.md): hashtags as a multiple relation of posts, boosts, and poll votes.
//
// Rules as in 1700000000_plaza_equivalent.js: public reads; a signed-in user creates (and
// deletes) only their own boosts and votes. A vote is once per person and poll: the unique
// (poll, user) index refuses a second one.
migrate((app) => {
  const users = app.findCollectionByNameOrId("users");
  const posts = app.findCollectionByNameOrId("posts");
  const owner = (field) => `@request.auth.id != '' && ${field} = @request.auth.id`;

  const tags = new Collection({
    type: "base",
    name: "tags",
    listRule: "",
    viewRule: "",
    createRule: "@request.auth.id != ''",
    updateRule: null,
    deleteRule: null,
    fields: [
      { name: "name", type: "text", required: true, max: 100 },
    ],
    indexes: [
      "CREATE UNIQUE INDEX idx_tags_name ON tags (name)",
    ],
  });
  app.save(tags);

  // A post's tags (`tags ?= 'ID'` finds its posts) and its poll (options; the votes count them).
  posts.fields.add(new RelationField({ name: "tags", maxSelect: 10, collectionId: tags.id }));
  posts.fields.add(new JSONField({ name: "poll", maxSize: 10000 }));
  app.save(posts);

  const boosts = new Collection({
    type: "base",
    name: "boosts",
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
      "CREATE UNIQUE INDEX idx_boosts_pair ON boosts (post, user)",
      "CREATE INDEX idx_boosts_user_created ON boosts (user, created)",
    ],
  });
  app.save(boosts);

  const votes = new Collection({
    type: "base",
    name: "votes",
    listRule: "",
    viewRule: "",
    createRule: owner("@request.body.user"),
    updateRule: null,
    deleteRule: null,
    fields: [
      { name: "poll", type: "relation", required: true, maxSelect: 1, collectionId: posts.id, cascadeDelete: true },
      { name: "user", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "choices", type: "json", required: true, maxSize: 1000 },
      { name: "created", type: "autodate", onCreate: true, onUpdate: false },
    ],
    indexes: [
      "CREATE UNIQUE INDEX idx_votes_pair ON votes (poll, user)",
    ],
  });
  app.save(votes);
}, (app) => {
  for (const name of ["votes", "boosts"]) {
    app.delete(app.findCollectionByNameOrId(name));
  }
  const posts = app.findCollectionByNameOrId("posts");
  posts.fields.removeByName("tags");
  posts.fields.removeByName("poll");
  app.save(posts);
  app.delete(app.findCollectionByNameOrId("tags"));
});
