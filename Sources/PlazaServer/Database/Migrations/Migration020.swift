/// Search in every script (SearchFolding): the indexes hold text as `plaza_search_text` makes
/// it — folded (compatibility forms, case, accents, ß, Turkish i, Arabic marks) and with each
/// run of Chinese, Japanese, Korean, Thai, Lao, Khmer or Myanmar as its character pairs, so a
/// word inside such a run is found. SQLite's function is Swift's `SearchFolding.indexText`,
/// registered on every connection; its FTS5 tables are built again with a tokenizer that keeps
/// marks (Thai vowels) and symbols (emoji) in words. PostgreSQL gets the same steps in SQL
/// (ICU's `und` lower-casing, as Swift's); only posts whose index held a non-ASCII word can
/// change, so only those are indexed again, and the accounts' generated column is remade.
enum Migration020 {
    static let tokenizer = "tokenize=\"unicode61 remove_diacritics 2 categories 'L* N* Co M* So'\""

    static let migration = Migration(
        version: 20,
        name: "search in every script",
        statements: [],
        sqlite: [
            "DROP TRIGGER posts_search_insert",
            "DROP TRIGGER posts_search_update",
            "DROP TRIGGER posts_search_delete",
            "DROP TABLE posts_search",
            """
            CREATE VIRTUAL TABLE posts_search USING fts5(
                title, body, author, spaces, place, content='', contentless_delete=1, \(tokenizer))
            """,
            """
            INSERT INTO posts_search (rowid, title, body, author, spaces, place)
            SELECT p.id, plaza_search_text(coalesce(p.title, '')), plaza_search_text(coalesce(p.body, '')),
                plaza_search_text(u.username || ' ' || u.display_name),
                plaza_search_text(coalesce((SELECT group_concat(s.name || ' ' || s.slug, ' ') FROM post_spaces ps JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = p.id), '')),
                plaza_search_text(coalesce(p.location_name, ''))
            FROM posts p JOIN users u ON u.id = p.author_id
            """,
            """
            CREATE TRIGGER posts_search_insert AFTER INSERT ON posts BEGIN
                INSERT INTO posts_search (rowid, title, body, author, spaces, place)
                VALUES (NEW.id, plaza_search_text(coalesce(NEW.title, '')), plaza_search_text(coalesce(NEW.body, '')),
                    (SELECT plaza_search_text(username || ' ' || display_name) FROM users WHERE id = NEW.author_id), '',
                    plaza_search_text(coalesce(NEW.location_name, '')));
            END
            """,
            """
            CREATE TRIGGER posts_search_update AFTER UPDATE OF title, body, location_name ON posts BEGIN
                DELETE FROM posts_search WHERE rowid = OLD.id;
                INSERT INTO posts_search (rowid, title, body, author, spaces, place)
                VALUES (NEW.id, plaza_search_text(coalesce(NEW.title, '')), plaza_search_text(coalesce(NEW.body, '')),
                    (SELECT plaza_search_text(username || ' ' || display_name) FROM users WHERE id = NEW.author_id),
                    plaza_search_text(coalesce((SELECT group_concat(s.name || ' ' || s.slug, ' ') FROM post_spaces ps
                        JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = NEW.id), '')),
                    plaza_search_text(coalesce(NEW.location_name, '')));
            END
            """,
            "CREATE TRIGGER posts_search_delete AFTER DELETE ON posts BEGIN DELETE FROM posts_search WHERE rowid = OLD.id; END",
            "DROP TRIGGER users_search_insert",
            "DROP TRIGGER users_search_update",
            "DROP TRIGGER users_search_delete",
            "DROP TABLE users_search",
            """
            CREATE VIRTUAL TABLE users_search USING fts5(
                username, display_name, content='', contentless_delete=1, \(tokenizer))
            """,
            """
            INSERT INTO users_search (rowid, username, display_name)
            SELECT id, plaza_search_text(username), plaza_search_text(display_name) FROM users
            """,
            """
            CREATE TRIGGER users_search_insert AFTER INSERT ON users BEGIN
                INSERT INTO users_search (rowid, username, display_name)
                VALUES (NEW.id, plaza_search_text(NEW.username), plaza_search_text(NEW.display_name));
            END
            """,
            """
            CREATE TRIGGER users_search_update AFTER UPDATE OF username, display_name ON users BEGIN
                DELETE FROM users_search WHERE rowid = OLD.id;
                INSERT INTO users_search (rowid, username, display_name)
                VALUES (NEW.id, plaza_search_text(NEW.username), plaza_search_text(NEW.display_name));
            END
            """,
            "CREATE TRIGGER users_search_delete AFTER DELETE ON users BEGIN DELETE FROM users_search WHERE rowid = OLD.id; END",
        ],
        postgres: [
            """
            CREATE FUNCTION plaza_search_unspaced(code int) RETURNS boolean LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
                SELECT code BETWEEN 3584 AND 3839 OR code BETWEEN 4096 AND 4255 OR code BETWEEN 4352 AND 4607 OR code BETWEEN 6016 AND 6143 OR code BETWEEN 12352 AND 12538 OR code BETWEEN 12540 AND 12543 OR code BETWEEN 12544 AND 12591 OR code BETWEEN 12592 AND 12687 OR code BETWEEN 12784 AND 12799 OR code BETWEEN 13312 AND 19903 OR code BETWEEN 19968 AND 40959 OR code BETWEEN 43360 AND 43391 OR code BETWEEN 44032 AND 55215 OR code BETWEEN 63744 AND 64255 OR code BETWEEN 131072 AND 262143
            $$
            """,
            #"""
            CREATE FUNCTION plaza_search_text(source text) RETURNS text LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
            DECLARE
                folded text;
                chars text[];
                parts text[] := '{}';
                code int;
                n int;
            BEGIN
                IF source IS NULL THEN RETURN NULL; END IF;
                -- Most text is ASCII, which only needs lower case (every other step leaves it as it is).
                IF source ~ '^[\x01-\x7f]*$' THEN RETURN lower(source COLLATE "C"); END IF;
                folded := normalize(lower(normalize(source, NFKC) COLLATE "und-x-icu"), NFD);
                folded := regexp_replace(folded,
                    '[\u0300-\u036f\u064b-\u065f\u0670\u0640\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufe00-\ufe0f\ufeff]', '', 'g');
                folded := translate(replace(normalize(folded, NFC), 'ß', 'ss'), 'ıςىة', 'iσيه');
                IF folded !~ '[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30fa\u30fc-\u30ff\u3100-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7af\uf900-\ufaff\U00020000-\U0003ffff\u00a9\u00ae\u2190-\u2bff\U0001f000-\U0001faff]' THEN
                    RETURN folded;
                END IF;
                chars := regexp_split_to_array(folded, '');
                n := coalesce(array_length(chars, 1), 0);
                FOR i IN 1..n LOOP
                    code := ascii(chars[i]);
                    IF plaza_search_unspaced(code) THEN
                        IF i < n AND plaza_search_unspaced(ascii(chars[i + 1])) THEN
                            parts := array_append(parts, ' ' || chars[i] || chars[i + 1]);
                        ELSE
                            parts := array_append(parts, ' ' || chars[i] || ' ');
                        END IF;
                    ELSIF code IN (169, 174) OR code BETWEEN 8592 AND 11263 OR code BETWEEN 126976 AND 129791 THEN
                        parts := array_append(parts, ' ' || chars[i] || ' ');
                    ELSE
                        parts := array_append(parts, chars[i]);
                    END IF;
                END LOOP;
                RETURN array_to_string(parts, '');
            END $$
            """#,
            """
            CREATE OR REPLACE FUNCTION posts_search_vector(post_id bigint, title text, body text, author_id bigint, place text)
            RETURNS tsvector LANGUAGE sql STABLE AS $$
                SELECT setweight(to_tsvector('plaza_search', plaza_search_text(coalesce(title, ''))), 'A')
                    || setweight(to_tsvector('plaza_search', plaza_search_text(coalesce(body, ''))), 'B')
                    || setweight(to_tsvector('plaza_search', plaza_search_text(coalesce((SELECT username || ' ' || display_name FROM users WHERE id = author_id), ''))), 'C')
                    || setweight(to_tsvector('plaza_search', plaza_search_text(coalesce((SELECT string_agg(s.name || ' ' || s.slug, ' ') FROM post_spaces ps
                        JOIN spaces s ON s.id = ps.space_id WHERE ps.post_id = posts_search_vector.post_id), '')
                        || ' ' || coalesce(place, ''))), 'D')
            $$
            """,
            #"UPDATE posts SET search = posts_search_vector(id, title, body, author_id, location_name) WHERE search::text ~ '[^\x01-\x7f]'"#,
            "ALTER TABLE users DROP COLUMN search",
            """
            ALTER TABLE users ADD COLUMN search tsvector GENERATED ALWAYS AS (
                setweight(to_tsvector('plaza_search', plaza_search_text(username)), 'A')
                || setweight(to_tsvector('plaza_search', plaza_search_text(display_name)), 'B')) STORED
            """,
            "CREATE INDEX users_search ON users USING GIN (search)",
        ]
    )
}
