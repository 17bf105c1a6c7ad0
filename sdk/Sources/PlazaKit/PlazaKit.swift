import Foundation
@_exported import PlazaKitCore

extension PlazaClient {
    /// A client over URLSession (`URLSessionTransport`).
    public init(baseURL: URL, tokens: any TokenStore = InMemoryTokenStore()) {
        self.init(baseURL: baseURL, transport: URLSessionTransport(), tokens: tokens)
    }
}
