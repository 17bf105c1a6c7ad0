/// Which releases of Plaza have run on this database, with the schema each left it at: the
/// release is recorded at every start (`Migrations.run`), so an operator (and `plaza migrate
/// --check`) can tell which binary last upgraded it.
enum Migration022 {
    static let migration = Migration(
        version: 22,
        name: "releases that ran",
        statements: [
            "CREATE TABLE plaza_releases (release TEXT PRIMARY KEY, schema_version BIGINT NOT NULL, first_run_at BIGINT NOT NULL)"
        ])
}
