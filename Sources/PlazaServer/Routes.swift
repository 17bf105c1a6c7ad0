import Hummingbird

/// A feature's routes, built from only what the feature uses. The door that serves them adds
/// them under its path and behind its middleware (`addRoutes(_:atPath:)`): a feature never sees
/// the router, the other features or the door's authentication.
package protocol FeatureRoutes {
    var routes: RouteCollection<PlazaContext> { get }
}

extension RouteCollection<PlazaContext> {
    /// A feature's routes, and on them the group of those for signed-in people only.
    static func withSignedIn() -> (RouteCollection<PlazaContext>, RouterGroup<SignedInContext>) {
        let routes = RouteCollection(context: PlazaContext.self)
        return (routes, routes.signedIn)
    }
}

extension RouterMethods where Context == PlazaContext {
    /// The same routes, for signed-in people only (`SignedInContext`).
    package var signedIn: RouterGroup<SignedInContext> { group(context: SignedInContext.self) }

    /// These routes behind the rate limiter's address buckets, `authentication`, then the
    /// signed-in person's own buckets (without a limiter, `authentication` alone). One limiter
    /// serves every door, so a client cannot double its budget by changing doors, and an
    /// invalid token pays its address's bucket before it is looked at.
    @discardableResult
    package func authenticated(by authentication: some RouterMiddleware<PlazaContext>, limiter: RateLimiter?) -> Self {
        if let limiter { _ = add(middleware: RateLimitMiddleware(limiter: limiter, step: .beforeAuthentication)) }
        _ = add(middleware: authentication)
        if let limiter { _ = add(middleware: RateLimitMiddleware(limiter: limiter, step: .afterAuthentication)) }
        return self
    }

    /// Adds each feature's routes here.
    @discardableResult
    func addRoutes(of features: [any FeatureRoutes]) -> Self {
        for feature in features { addRoutes(feature.routes) }
        return self
    }
}
