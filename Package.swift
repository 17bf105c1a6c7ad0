// swift-tools-version:6.1
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny")
]

let package = Package(
    name: "plaza",
    platforms: [.macOS(.v14), .iOS(.v17)],
    products: [
        .library(name: "PlazaServer", targets: ["PlazaServer"]),
        .library(name: "PlazaKitAsyncHTTPClient", targets: ["PlazaKitAsyncHTTPClient"]),
        .executable(name: "plaza", targets: ["plaza"]),
    ],
    dependencies: [
        // The Swift SDK and the API's types, a package of its own that apps add (docs/sdk.md).
        .package(path: "sdk"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/hummingbird-project/hummingbird-auth.git", from: "2.5.0"),
        // Mastodon's streaming WebSocket (`/api/v1/streaming`).
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket.git", from: "2.8.1"),
        // Plaza calls its internal C target (VaporCSQLite, the bundled SQLite) directly: not its public API, so no minor upgrades.
        .package(url: "https://github.com/vapor/sqlite-nio.git", .upToNextMinor(from: "1.13.2")),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-configuration.git", from: "1.4.0"),
        // FilePath, in which swift-configuration names a settings file (`--env-file`).
        .package(url: "https://github.com/apple/swift-system.git", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        // `GET /metrics`: swift-metrics' API over a Prometheus registry of the server's own.
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/hummingbird-project/swift-mustache.git", from: "2.1.1"),
        // ID tokens of sign-in providers (JWKS, RS256/ES256) and Sign in with Apple's client secret.
        .package(url: "https://github.com/vapor/jwt-kit.git", from: "5.7.1"),
        // The served OpenAPI document, as typed values. Without its default trait (ExternalLoading,
        // loading documents' external references), which Plaza does not use and which builds slower.
        .package(url: "https://github.com/mattpolzin/OpenAPIKit.git", from: "6.4.0", traits: []),
        // People's data archives (`plaza export`, "Download my data"): ZIP with Zip64 for large media.
        .package(url: "https://github.com/weichsel/ZIPFoundation.git", from: "0.9.20"),
    ],
    targets: [
        // A transport over AsyncHTTPClient, for servers and the `plaza` command line.
        .target(
            name: "PlazaKitAsyncHTTPClient",
            dependencies: [
                .product(name: "PlazaKitCore", package: "sdk"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings),
        .target(name: "CSQLiteShim"),
        // libvips, loaded at the first image (dlopen): neither its headers nor a link are needed to build.
        .target(name: "CVips", linkerSettings: [.linkedLibrary("dl", .when(platforms: [.linux]))]),
        // gzip for the web app's scripts and styles (zlib, on every Linux and macOS).
        .target(name: "CPlazaZlib", linkerSettings: [.linkedLibrary("z")]),
        .target(
            name: "PlazaServer",
            dependencies: [
                .product(name: "PlazaAPI", package: "sdk"),
                "CSQLiteShim",
                "CVips",
                "CPlazaZlib",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdBcrypt", package: "hummingbird-auth"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
                .product(name: "SQLiteNIO", package: "sqlite-nio"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Configuration", package: "swift-configuration"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                .product(name: "JWTKit", package: "jwt-kit"),
            ],
            // The web app's templates and static files, read once at start-up.
            resources: [.copy("Features/Web/Templates"), .copy("Features/Web/Assets"), .copy("Features/Web/Locales")],
            swiftSettings: swiftSettings
        ),
        // Mastodon's client API, an adapter over the core: it sees only what the core declares
        // `package` (its actions, read queries, API types), so the compiler keeps it one.
        .target(
            name: "PlazaMastodon",
            dependencies: [
                .product(name: "PlazaAPI", package: "sdk"),
                "PlazaServer",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "plaza",
            dependencies: [
                "PlazaServer",
                "PlazaMastodon",
                .product(name: "PlazaKitCore", package: "sdk"),
                "PlazaKitAsyncHTTPClient",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "SystemPackage", package: "swift-system"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PlazaServerTests",
            dependencies: [
                "PlazaServer",
                "PlazaMastodon",
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "OpenAPIKit", package: "OpenAPIKit"),
                // Signs the ID tokens of the test's OpenID Connect issuer.
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Configuration", package: "swift-configuration"),
                // A WebSocket client for Mastodon's streaming API.
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                // The receiving side of Web Push's legacy encryption.
                .product(name: "Crypto", package: "swift-crypto"),
                // Reads the archives of `plaza export`.
                .product(name: "ZIPFoundation", package: "ZIPFoundation"),
            ],
            // Read from their paths by the tests, not bundled.
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PlazaKitTests",
            dependencies: [
                .product(name: "PlazaKit", package: "sdk"), "PlazaKitAsyncHTTPClient",
                // An authenticator app's codes, for the two-factor sign-in test.
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
