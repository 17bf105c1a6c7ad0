/// Full-text search over posts: title, body, the author's username and display name, and the
/// names and slugs of the post's spaces. SQLite keeps a contentless FTS5 table keyed by post id;
/// PostgreSQL a weighted `tsvector` column (A title, B body, C author, D spaces) with a GIN
/// index (text search configuration `plaza_search`: simple, plus unaccent). Triggers keep both in
/// step in the writing transaction: on a post's insert, an edit of
/// its title or body, a change of its spaces, and a rename of its author or of a space (those
/// touch `title` to make the post's own trigger recompute). Likes and comment counts, which
/// update posts all the time, do not touch the index.
enum Migration004 {

    static let migration = Migration(
        version: 4,
        name: "search_history",
        statements: [
            // Reading history: one row per person and post. `post_created_at` is the post's, so
            // each of the three sorts is one walk of an index.
            """
            CREATE TABLE post_views (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                post_id BIGINT NOT NULL REFERENCES posts(id) ON DELETE CASCADE,
                post_created_at BIGINT NOT NULL,
                first_viewed_at BIGINT NOT NULL,
                last_viewed_at BIGINT NOT NULL,
                views BIGINT NOT NULL DEFAULT 1,
                clicks BIGINT NOT NULL DEFAULT 0,
                PRIMARY KEY (user_id, post_id)
            ) {without_rowid}
            """,
            "CREATE INDEX post_views_viewed ON post_views (user_id, last_viewed_at, post_id)",
            "CREATE INDEX post_views_posted ON post_views (user_id, post_created_at, post_id)",
            "CREATE INDEX post_views_count ON post_views (user_id, views, post_id)",
            "CREATE INDEX collection_items_owner_time ON collection_items (owner_id, saved_at, id)",
            // Each person's term model: the words of the posts they viewed (`model` 0) and of
            // those they picked from search results (`model` 1), updated when they view or click.
            """
            CREATE TABLE user_terms (
                user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
                model BIGINT NOT NULL,
                term TEXT NOT NULL,
                weight DOUBLE PRECISION NOT NULL,
                PRIMARY KEY (user_id, model, term)
            ) {without_rowid}
            """,
        ],
        sqlite: [
            """
            CREATE VIRTUAL TABLE posts_search USING fts5(
                title, body, author, spaces, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')
            """,
            """
            INSERT INTO posts_search (rowid, title, body, author, spaces)
            SELECT p.id, coalesce(p.title, ''), coalesce(p.body, ''), u.username || ' ' || u.display_name,
                coalesce((SELECT group_concat(s.name || ' ' || s.slug, ' ') FROM post_spaces ps JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = p.id), '')
            FROM posts p JOIN users u ON u.id = p.author_id
            """,
            """
            CREATE TRIGGER posts_search_insert AFTER INSERT ON posts BEGIN
                INSERT INTO posts_search (rowid, title, body, author, spaces)
                VALUES (NEW.id, coalesce(NEW.title, ''), coalesce(NEW.body, ''),
                    (SELECT username || ' ' || display_name FROM users WHERE id = NEW.author_id), '');
            END
            """,
            """
            CREATE TRIGGER posts_search_update AFTER UPDATE OF title, body ON posts BEGIN
                DELETE FROM posts_search WHERE rowid = OLD.id;
                INSERT INTO posts_search (rowid, title, body, author, spaces)
                VALUES (NEW.id, coalesce(NEW.title, ''), coalesce(NEW.body, ''),
                    (SELECT username || ' ' || display_name FROM users WHERE id = NEW.author_id),
                    coalesce((SELECT group_concat(s.name || ' ' || s.slug, ' ') FROM post_spaces ps JOIN spaces s ON s.id = ps.space_id
                        WHERE ps.post_id = NEW.id), ''));
            END
            """,
            "CREATE TRIGGER posts_search_delete AFTER DELETE ON posts BEGIN DELETE FROM posts_search WHERE rowid = OLD.id; END",
            // Posts with a location, for `near=`: an R*Tree of points.
            "CREATE VIRTUAL TABLE posts_geo USING rtree(id, min_lat, max_lat, min_lon, max_lon)",
            "INSERT INTO posts_geo SELECT id, latitude, latitude, longitude, longitude FROM posts WHERE latitude IS NOT NULL AND longitude IS NOT NULL",
            """
            CREATE TRIGGER posts_geo_insert AFTER INSERT ON posts WHEN NEW.latitude IS NOT NULL AND NEW.longitude IS NOT NULL BEGIN
                INSERT INTO posts_geo VALUES (NEW.id, NEW.latitude, NEW.latitude, NEW.longitude, NEW.longitude);
            END
            """,
            """
            CREATE TRIGGER posts_geo_update AFTER UPDATE OF latitude, longitude ON posts BEGIN
                DELETE FROM posts_geo WHERE id = OLD.id;
                INSERT INTO posts_geo SELECT NEW.id, NEW.latitude, NEW.latitude, NEW.longitude, NEW.longitude
                WHERE NEW.latitude IS NOT NULL AND NEW.longitude IS NOT NULL;
            END
            """,
            "CREATE TRIGGER posts_geo_delete AFTER DELETE ON posts BEGIN DELETE FROM posts_geo WHERE id = OLD.id; END",
            // Accounts, by username and display name.
            """
            CREATE VIRTUAL TABLE users_search USING fts5(
                username, display_name, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2')
            """,
            "INSERT INTO users_search (rowid, username, display_name) SELECT id, username, display_name FROM users",
            "CREATE TRIGGER users_search_insert AFTER INSERT ON users BEGIN INSERT INTO users_search (rowid, username, display_name) VALUES (NEW.id, NEW.username, NEW.display_name); END",
            """
            CREATE TRIGGER users_search_update AFTER UPDATE OF username, display_name ON users BEGIN
                DELETE FROM users_search WHERE rowid = OLD.id;
                INSERT INTO users_search (rowid, username, display_name) VALUES (NEW.id, NEW.username, NEW.display_name);
            END
            """,
            "CREATE TRIGGER users_search_delete AFTER DELETE ON users BEGIN DELETE FROM users_search WHERE rowid = OLD.id; END",
            "CREATE TRIGGER post_spaces_search_insert AFTER INSERT ON post_spaces BEGIN UPDATE posts SET title = title WHERE id = NEW.post_id; END",
            "CREATE TRIGGER post_spaces_search_delete AFTER DELETE ON post_spaces BEGIN UPDATE posts SET title = title WHERE id = OLD.post_id; END",
            """
            CREATE TRIGGER users_search_rename AFTER UPDATE OF username, display_name ON users BEGIN
                UPDATE posts SET title = title WHERE author_id = NEW.id;
            END
            """,
            """
            CREATE TRIGGER spaces_search_rename AFTER UPDATE OF name ON spaces BEGIN
                UPDATE posts SET title = title WHERE id IN (SELECT post_id FROM post_spaces WHERE space_id = NEW.id);
            END
            """,
        ],
        postgres: [
            // Lower-cased, accents folded, no stemming or stop words: the posts are in any language.
            "CREATE EXTENSION IF NOT EXISTS unaccent",
            "CREATE TEXT SEARCH CONFIGURATION plaza_search (COPY = simple)",
            "ALTER TEXT SEARCH CONFIGURATION plaza_search ALTER MAPPING FOR hword, hword_part, word WITH unaccent, simple",
            "ALTER TABLE posts ADD COLUMN search tsvector",
            """
            CREATE FUNCTION posts_search_vector(post_id bigint, title text, body text, author_id bigint) RETURNS tsvector LANGUAGE sql STABLE AS $$
                SELECT setweight(to_tsvector('plaza_search', coalesce(title, '')), 'A')
                    || setweight(to_tsvector('plaza_search', coalesce(body, '')), 'B')
                    || setweight(to_tsvector('plaza_search', coalesce((SELECT username || ' ' || display_name FROM users WHERE id = author_id), '')), 'C')
                    || setweight(to_tsvector('plaza_search', coalesce((SELECT string_agg(s.name || ' ' || s.slug, ' ') FROM post_spaces ps
                        JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = posts_search_vector.post_id), '')), 'D')
            $$
            """,
            "UPDATE posts SET search = posts_search_vector(id, title, body, author_id)",
            "CREATE INDEX posts_search ON posts USING GIN (search)",
            """
            ALTER TABLE users ADD COLUMN search tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('plaza_search', username), 'A') || setweight(to_tsvector('plaza_search', display_name), 'B')) STORED
            """,
            "CREATE INDEX users_search ON users USING GIN (search)",
            "CREATE INDEX posts_location ON posts (latitude, longitude) WHERE latitude IS NOT NULL AND longitude IS NOT NULL",
            """
            CREATE FUNCTION plaza_distance_km(lat1 float8, lon1 float8, lat2 float8, lon2 float8) RETURNS float8
            LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT 6371.0088 * 2 * asin(least(1.0, sqrt(power(sin(radians(lat2 - lat1) / 2), 2)
                    + cos(radians(lat1)) * cos(radians(lat2)) * power(sin(radians(lon2 - lon1) / 2), 2))))
            $$
            """,
            """
            CREATE FUNCTION posts_search_refresh() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                NEW.search := posts_search_vector(NEW.id, NEW.title, NEW.body, NEW.author_id);
                RETURN NEW;
            END $$
            """,
            "CREATE TRIGGER posts_search_refresh BEFORE INSERT OR UPDATE OF title, body ON posts FOR EACH ROW EXECUTE FUNCTION posts_search_refresh()",
            """
            CREATE FUNCTION post_spaces_search() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'INSERT' THEN UPDATE posts SET title = title WHERE id = NEW.post_id;
                ELSE UPDATE posts SET title = title WHERE id = OLD.post_id; END IF;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER post_spaces_search AFTER INSERT OR DELETE ON post_spaces FOR EACH ROW EXECUTE FUNCTION post_spaces_search()",
            """
            CREATE FUNCTION users_search_rename() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE posts SET title = title WHERE author_id = NEW.id;
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER users_search_rename AFTER UPDATE OF username, display_name ON users FOR EACH ROW EXECUTE FUNCTION users_search_rename()",
            """
            CREATE FUNCTION spaces_search_rename() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                UPDATE posts SET title = title WHERE id IN (SELECT post_id FROM post_spaces WHERE space_id = NEW.id);
                RETURN NULL;
            END $$
            """,
            "CREATE TRIGGER spaces_search_rename AFTER UPDATE OF name ON spaces FOR EACH ROW EXECUTE FUNCTION spaces_search_rename()",
        ]
    )
}
