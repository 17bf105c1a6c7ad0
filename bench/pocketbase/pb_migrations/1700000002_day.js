// What the simulated people of `--day` (bench/README.md, "A community's day") need beyond the
// other migrations: photos on posts (a file field; PocketBase keeps the upload as sent and makes
// thumbnails when asked) and saved posts. Rules as in 1700000000_plaza_equivalent.js.
migrate((app) => {
  const users = app.findCollectionByNameOrId("users");
  const posts = app.findCollectionByNameOrId("posts");
  const owner = (field) => `@request.auth.id != '' && ${field} = @request.auth.id`;

  posts.fields.add(new FileField({
    name: "photos", maxSelect: 4, maxSize: 20 * 1024 * 1024,
    mimeTypes: ["image/jpeg", "image/png", "image/webp", "image/gif"], thumbs: ["320x320", "1080x0"],
  }));
  app.save(posts);

  const saves = new Collection({
    type: "base",
    name: "saves",
    listRule: owner("user"),
    viewRule: owner("user"),
    createRule: owner("@request.body.user"),
    updateRule: null,
    deleteRule: owner("user"),
    fields: [
      { name: "post", type: "relation", required: true, maxSelect: 1, collectionId: posts.id, cascadeDelete: true },
      { name: "user", type: "relation", required: true, maxSelect: 1, collectionId: users.id, cascadeDelete: true },
      { name: "created", type: "autodate", onCreate: true, onUpdate: false },
    ],
    indexes: [
      "CREATE UNIQUE INDEX idx_saves_pair ON saves (post, user)",
      "CREATE INDEX idx_saves_user_created ON saves (user, created)",
    ],
  });
  app.save(saves);
}, (app) => {
  app.delete(app.findCollectionByNameOrId("saves"));
  const posts = app.findCollectionByNameOrId("posts");
  posts.fields.removeByName("photos");
  app.save(posts);
});
