import Hummingbird
import PlazaAPI
import PlazaServer

/// Mastodon's client API as a door to the core: its routes at Mastodon's paths, with its own
/// errors and tokens, its OAuth, its streaming WebSocket, the pushes of its subscriptions and its
/// part of the OpenAPI document. It translates; the core decides.
package struct MastodonDoor: Door {
    package init() {}

    package func register(on router: Router<PlazaContext>, core: Doors) {
        let services = core.services
        let mastodon = router.group("api")
            .authenticated(
                by: MastodonAuthMiddleware(accounts: services.accounts, oauth: services.oauth),
                limiter: core.rateLimiter)
        let v1 = mastodon.group("v1")
        let mapper = MastodonMapper(baseURL: core.config.baseURL)
        OAuthController(oauth: services.oauth, accounts: services.accounts, baseURL: core.config.baseURL)
            .register(mastodon: v1, router: router)
        MastodonController(
            core: core, mapper: mapper,
            config: .init(
                name: core.config.instanceName, baseURL: core.config.baseURL, registrations: true,
                contactEmail: core.config.mailSender.address, uploads: core.uploadLimits)
        ).register(v1: v1, v2: mastodon.group("v2"))
        MastodonStreaming(hub: core.hub, mapper: mapper).register(v1: v1)
        MastodonPushController(
            devices: services.pushDevices, vapid: services.vapid, policy: core.config.push.allowed
        ).register(v1: v1)
    }

    package func webSocket(core: Doors) -> WebSocketUpgrade? {
        let socket = MastodonWebSocket(
            streaming: MastodonStreaming(hub: core.hub, mapper: MastodonMapper(baseURL: core.config.baseURL)),
            accounts: core.services.accounts)
        return { request in await socket.shouldUpgrade(request) }
    }

    package func pushFormat() -> (any AppPushFormat)? { MastodonPushFormat() }

    package var openAPI: OpenAPIDocument.Part {
        OpenAPIDocument.Part(
            operations: { OpenAPIDocument.mastodonOperations }, schemas: { OpenAPIDocument.mastodonSchemas })
    }
}
