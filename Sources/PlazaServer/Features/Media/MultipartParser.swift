/// A strict streaming parser of `multipart/form-data` bodies (RFC 7578 over RFC 2046).
///
/// It accepts a subset of what the RFCs allow, the subset every browser, curl, URLSession and
/// Python's requests send: lines end with CRLF only (a bare CR or LF is an error), header names
/// are tokens, no folded header lines, no NUL or other control bytes in header values, a bounded
/// header block per part and a bounded number of parts, and the body must end with the closing
/// delimiter. A preamble before the first delimiter and an epilogue after the last are ignored,
/// as the RFC says. Bytes arrive in chunks of any size; a delimiter may be split across them.
/// Every byte is checked before it is used, so no input can make it trap.
struct MultipartParser {
    struct Limits {
        var maxParts = 16
        /// The header lines of one part, CRLFs included.
        var maxHeaderBytes = 8 * 1024
    }

    struct Header: Equatable {
        /// Lower-cased.
        var name: String
        var value: String
    }

    enum Event: Equatable {
        /// A part begins; its body follows as `.body` events, then `.partEnd`.
        case headers([Header])
        case body([UInt8])
        case partEnd
    }

    struct Malformed: Error, Equatable {
        let reason: String
    }

    private enum State: Equatable {
        /// Looking for a delimiter: in the preamble (bytes dropped) or in a part's body (bytes kept).
        case scanning(body: Bool)
        /// Just after a delimiter: `--` closes the body, optional spaces and CRLF open a part.
        case afterDelimiter
        case closingDash
        case padding
        case delimiterLineFeed
        case header
        case headerLineFeed
        case epilogue
    }

    private let delimiter: [UInt8]
    /// For each prefix of `delimiter`, the length of its longest proper prefix that is also its suffix (KMP).
    private let fallback: [Int]
    private let limits: Limits
    private var state = State.scanning(body: false)
    /// How many bytes of `delimiter` the input ends with, held back from the body until decided.
    /// It starts as if a CRLF came before the body, so a delimiter on the first line counts.
    private var matched = 2
    private var line: [UInt8] = []
    private var headers: [Header] = []
    private var headerBytes = 0
    private var parts = 0

    /// `boundary` must be valid (see `isValidBoundary`).
    init(boundary: String, limits: Limits = Limits()) {
        delimiter = Array("\r\n--\(boundary)".utf8)
        var fallback = [0]
        var k = 0
        for i in delimiter.indices.dropFirst() {
            while k > 0, delimiter[i] != delimiter[k] { k = fallback[k - 1] }
            if delimiter[i] == delimiter[k] { k += 1 }
            fallback.append(k)
        }
        self.fallback = fallback
        self.limits = limits
    }

    /// RFC 2046: 1–70 of DIGIT, ALPHA and `'()+_,-./:=?` or space, not ending with a space.
    static func isValidBoundary(_ boundary: String) -> Bool {
        let bytes = Array(boundary.utf8)
        guard (1...70).contains(bytes.count), bytes.last != UInt8(ascii: " ") else { return false }
        return bytes.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "A")...UInt8(ascii: "Z"):
                true
            default: Array("'()+_,-./:=? ".utf8).contains(byte)
            }
        }
    }

    /// True once the closing delimiter has been read.
    var isComplete: Bool { state == .epilogue }

    /// Parses the next bytes and returns what they completed, in order. Body bytes come as
    /// soon as they cannot be the start of a delimiter.
    mutating func feed(_ bytes: [UInt8]) throws(Malformed) -> [Event] {
        var events: [Event] = []
        var run: [UInt8] = []
        var i = 0
        while i < bytes.count {
            let byte = bytes[i]
            switch state {
            case .scanning(let body):
                if matched == 0, byte != UInt8(ascii: "\r") {
                    // Nothing held back: everything up to the next CR is body (or preamble).
                    let end = bytes[i...].firstIndex(of: UInt8(ascii: "\r")) ?? bytes.count
                    if body { run.append(contentsOf: bytes[i..<end]) }
                    i = end
                    continue
                }
                scan(byte, body: body, run: &run, events: &events)
            case .epilogue:
                i = bytes.count
                continue
            default:
                try step(byte, events: &events)
            }
            i += 1
        }
        if !run.isEmpty { events.append(.body(run)) }
        return events
    }

    /// One byte that may continue a delimiter: the body bytes that can no longer start one go
    /// to `run`; a whole delimiter ends the part.
    private mutating func scan(_ byte: UInt8, body: Bool, run: inout [UInt8], events: inout [Event]) {
        var k = matched
        while k > 0, byte != delimiter[k] { k = fallback[k - 1] }
        if byte == delimiter[k] { k += 1 }
        if body {
            // The held-back bytes were delimiter[..<matched]; with `byte` appended, the
            // first `matched + 1 - k` of them can no longer start a delimiter.
            let release = matched + 1 - k
            if release <= matched {
                run.append(contentsOf: delimiter[..<release])
            } else {
                run.append(contentsOf: delimiter[..<matched])
                run.append(byte)
            }
        }
        matched = k
        if matched == delimiter.count {
            matched = 0
            if body {
                if !run.isEmpty { events.append(.body(run)) }
                run.removeAll()
                events.append(.partEnd)
            }
            state = .afterDelimiter
        }
    }

    /// One byte after a delimiter or in a part's headers.
    private mutating func step(_ byte: UInt8, events: inout [Event]) throws(Malformed) {
        switch state {
        case .afterDelimiter:
            switch byte {
            case UInt8(ascii: "-"): state = .closingDash
            case UInt8(ascii: "\r"): state = .delimiterLineFeed
            case UInt8(ascii: " "), UInt8(ascii: "\t"): state = .padding
            default: throw Malformed(reason: "a boundary delimiter must be followed by a line break or --")
            }
        case .closingDash:
            guard byte == UInt8(ascii: "-") else {
                throw Malformed(reason: "a boundary delimiter must be followed by a line break or --")
            }
            state = .epilogue
        case .padding:
            switch byte {
            case UInt8(ascii: " "), UInt8(ascii: "\t"): break
            case UInt8(ascii: "\r"): state = .delimiterLineFeed
            default: throw Malformed(reason: "a boundary delimiter must be followed by a line break or --")
            }
        case .delimiterLineFeed:
            guard byte == UInt8(ascii: "\n") else { throw Malformed(reason: "lines must end with CRLF") }
            parts += 1
            guard parts <= limits.maxParts else { throw Malformed(reason: "more than \(limits.maxParts) parts") }
            (state, headers, headerBytes, line) = (.header, [], 0, [])
        case .header:
            headerBytes += 1
            guard headerBytes <= limits.maxHeaderBytes else {
                throw Malformed(reason: "a part's headers are longer than \(limits.maxHeaderBytes) bytes")
            }
            switch byte {
            case UInt8(ascii: "\r"): state = .headerLineFeed
            case UInt8(ascii: "\t"), 0x20...0x7E, 0x80...0xFF: line.append(byte)
            default: throw Malformed(reason: "a part header has a control character")
            }
        case .headerLineFeed:
            guard byte == UInt8(ascii: "\n") else { throw Malformed(reason: "lines must end with CRLF") }
            headerBytes += 1
            if line.isEmpty {
                events.append(.headers(headers))
                (state, matched) = (.scanning(body: true), 0)
            } else {
                headers.append(try Self.header(line))
                line.removeAll(keepingCapacity: true)
                state = .header
            }
        case .scanning, .epilogue:
            break
        }
    }

    /// Call when the body has ended: it is malformed unless the closing delimiter was read.
    func finish() throws(Malformed) {
        guard state == .epilogue else { throw Malformed(reason: "the body ended before its closing boundary") }
    }

    /// `name: value`, where the name is a token (RFC 9110) and the value is trimmed of spaces.
    static func header(_ line: [UInt8]) throws(Malformed) -> Header {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > 0 else {
            throw Malformed(reason: "a part header line has no name")
        }
        guard line[..<colon].allSatisfy(isTokenByte) else {
            throw Malformed(reason: "a part header's name is not a token")
        }
        let isSpace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var value = line[(colon + 1)...]
        while let first = value.first, isSpace(first) { value = value.dropFirst() }
        while let last = value.last, isSpace(last) { value = value.dropLast() }
        return Header(
            name: String(decoding: line[..<colon], as: UTF8.self).lowercased(),
            value: String(decoding: value, as: UTF8.self))
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

/// The parameters of a header value such as `form-data; name="file"; filename="a.jpg"` or
/// `multipart/form-data; boundary=x`: the first item lower-cased, then each `key=value` with
/// lower-cased keys and unquoted values (RFC 9110 quoted-string, backslash escapes). Nil when
/// the value does not follow that grammar.
struct HeaderParameters: Equatable {
    var value: String
    var parameters: [String: String]

    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        func skipSpaces() {
            while let b = bytes.first, b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") { bytes = bytes.dropFirst() }
        }
        skipSpaces()
        let head = bytes.prefix { $0 != UInt8(ascii: ";") }
        bytes = bytes.dropFirst(head.count)
        var headValue = head
        while let last = headValue.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") {
            headValue = headValue.dropLast()
        }
        guard !headValue.isEmpty, headValue.allSatisfy({ MultipartParser.isTokenByte($0) || $0 == UInt8(ascii: "/") })
        else { return nil }
        value = String(decoding: headValue, as: UTF8.self).lowercased()
        parameters = [:]
        while let first = bytes.first {
            guard first == UInt8(ascii: ";") else { return nil }
            bytes = bytes.dropFirst()
            skipSpaces()
            if bytes.isEmpty { break }  // a trailing ";"
            let key = bytes.prefix(while: MultipartParser.isTokenByte)
            bytes = bytes.dropFirst(key.count)
            guard !key.isEmpty, bytes.first == UInt8(ascii: "=") else { return nil }
            bytes = bytes.dropFirst()
            var parameter: [UInt8] = []
            if bytes.first == UInt8(ascii: "\"") {
                bytes = bytes.dropFirst()
                var closed = false
                while let b = bytes.first {
                    bytes = bytes.dropFirst()
                    if b == UInt8(ascii: "\"") {
                        closed = true
                        break
                    }
                    if b == UInt8(ascii: "\\") {
                        guard let escaped = bytes.first else { return nil }
                        bytes = bytes.dropFirst()
                        parameter.append(escaped)
                    } else {
                        parameter.append(b)
                    }
                }
                guard closed else { return nil }
            } else {
                let token = bytes.prefix(while: MultipartParser.isTokenByte)
                guard !token.isEmpty else { return nil }
                bytes = bytes.dropFirst(token.count)
                parameter = Array(token)
            }
            skipSpaces()
            let name = String(decoding: key, as: UTF8.self).lowercased()
            guard parameters[name] == nil else { return nil }  // a repeated parameter is ambiguous
            parameters[name] = String(decoding: parameter, as: UTF8.self)
        }
    }
}
