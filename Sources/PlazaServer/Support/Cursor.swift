import Foundation

/// An opaque keyset cursor: the sort key of the last item of a page, `(time, id)`.
struct Cursor: Equatable {
    var time: Int64
    var id: Int64

    var encoded: String {
        Data("\(time):\(id)".utf8).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    init(time: Int64, id: Int64) {
        self.time = time
        self.id = id
    }

    init?(encoded: String) {
        guard encoded.count <= 64 else { return nil }
        var base64 = encoded.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let data = Data(base64Encoded: base64), let text = String(data: data, encoding: .utf8) else { return nil }
        let parts = text.split(separator: ":")
        guard parts.count == 2, let time = Int64(parts[0]), let id = Int64(parts[1]) else { return nil }
        self.time = time
        self.id = id
    }
}

/// `?limit=&cursor=` of a list request.
struct PageRequest {
    static let defaultLimit = 20
    static let maxLimit = 100
    var limit: Int
    var cursor: Cursor?
}
