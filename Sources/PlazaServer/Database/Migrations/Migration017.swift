/// Search by place: a post's place name (`location_name`) joins its search index. SQLite's FTS5
/// table gains a `place` column (a contentless table takes no new column, so it is built again);
/// on PostgreSQL the place goes with the spaces into weight D ("where it is"), and `in=space` and
/// `in=place` tell them apart by checking the matching rows' own text. Editing a post's place
/// updates its index entry like an edit of its text.
enum Migration017 {
    static let migration = Migration(
        version: 17,
        name: "search by place",
        statements: [],
        sqlite: [
            "DROP TRIGGER posts_search_insert",
            "DROP TRIGGER posts_search_update",
            "DROP TRIGGER posts_search_delete",
            "DROP TABLE posts_search",
            """
            CREATE VIRTUAL TABLE posts_search USING fts5(
                title, body, author, spaces, place, content='', contentless_delete=1,
                tokenize='unicode61 remove_diacritics 2')
            """,
            """
            INSERT INTO posts_search (rowid, title, body, author, spaces, place)
            SELECT p.id, coalesce(p.title, ''), coalesce(p.body, ''), u.username || ' ' || u.display_name,
                coalesce((SELECT group_concat(s.name || ' ' || s.slug, ' ') FROM post_spaces ps JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = p.id), ''),
                coalesce(p.location_name, '')
            FROM posts p JOIN users u ON u.id = p.author_id
            """,
            """
            CREATE TRIGGER posts_search_insert AFTER INSERT ON posts BEGIN
                INSERT INTO posts_search (rowid, title, body, author, spaces, place)
                VALUES (NEW.id, coalesce(NEW.title, ''), coalesce(NEW.body, ''),
                    (SELECT username || ' ' || display_name FROM users WHERE id = NEW.author_id), '',
                    coalesce(NEW.location_name, ''));
            END
            """,
            """
            CREATE TRIGGER posts_search_update AFTER UPDATE OF title, body, location_name ON posts BEGIN
                DELETE FROM posts_search WHERE rowid = OLD.id;
                INSERT INTO posts_search (rowid, title, body, author, spaces, place)
                VALUES (NEW.id, coalesce(NEW.title, ''), coalesce(NEW.body, ''),
                    (SELECT username || ' ' || display_name FROM users WHERE id = NEW.author_id),
                    coalesce((SELECT group_concat(s.name || ' ' || s.slug, ' ') FROM post_spaces ps JOIN spaces s ON s.id = ps.space_id
                        WHERE ps.post_id = NEW.id), ''),
                    coalesce(NEW.location_name, ''));
            END
            """,
            "CREATE TRIGGER posts_search_delete AFTER DELETE ON posts BEGIN DELETE FROM posts_search WHERE rowid = OLD.id; END",
        ],
        postgres: [
            """
            CREATE FUNCTION posts_search_vector(post_id bigint, title text, body text, author_id bigint, place text)
            RETURNS tsvector LANGUAGE sql STABLE AS $$
                SELECT setweight(to_tsvector('plaza_search', coalesce(title, '')), 'A')
                    || setweight(to_tsvector('plaza_search', coalesce(body, '')), 'B')
                    || setweight(to_tsvector('plaza_search', coalesce((SELECT username || ' ' || display_name FROM users WHERE id = author_id), '')), 'C')
                    || setweight(to_tsvector('plaza_search', coalesce((SELECT string_agg(s.name || ' ' || s.slug, ' ') FROM post_spaces ps
                        JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = posts_search_vector.post_id), '')
                        || ' ' || coalesce(place, '')), 'D')
            $$
            """,
            """
            CREATE OR REPLACE FUNCTION posts_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                NEW.search := posts_search_vector(NEW.id, NEW.title, NEW.body, NEW.author_id, NEW.location_name);
                RETURN NEW;
            END $$
            """,
            "DROP TRIGGER posts_search_refresh ON posts",
            "CREATE TRIGGER posts_search_refresh BEFORE INSERT OR UPDATE OF title, body, location_name ON posts FOR EACH ROW EXECUTE FUNCTION posts_search_refresh()",
            "DROP FUNCTION posts_search_vector(bigint, text, text, bigint)",
            "UPDATE posts SET search = posts_search_vector(id, title, body, author_id, location_name) WHERE location_name IS NOT NULL",
        ]
    )
}
