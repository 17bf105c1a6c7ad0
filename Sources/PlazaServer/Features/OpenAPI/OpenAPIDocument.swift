import Foundation

enum OpenAPIDocument {
    static let json: [UInt8] = Array("{}".utf8)
}
