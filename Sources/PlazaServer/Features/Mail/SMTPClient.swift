import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// Where and how mail is handed over: `PLAZA_SMTP_URL`, e.g. `smtp://user:pass@host:587`.
///
/// - `smtp://` upgrades with STARTTLS and refuses to go on when the server does not offer it;
///   `?starttls=off` sends in the clear (a relay on the same machine).
/// - `smtps://` speaks TLS from the first byte (port 465).
/// - A user and password in the URL (percent-encoded) sign in with AUTH PLAIN, or LOGIN when the
///   server offers only that.
public struct SMTPSettings: Sendable, Equatable {
    public enum Security: String, Sendable { case startTLS, implicitTLS, none }
    public var host: String
    public var port: Int
    public var security: Security
    public var username: String?
    public var password: String?
    /// A PEM file of certificates to trust instead of the system's (a private CA).
    public var caFile: String?
    /// The longest a whole delivery (connect to QUIT) may take.
    public var timeout: Duration = .seconds(60)

    public init(host: String, port: Int, security: Security, username: String? = nil, password: String? = nil) {
        self.host = host
        self.port = port
        self.security = security
        self.username = username
        self.password = password
    }

    /// Parses `smtp://[user[:password]@]host[:port][?starttls=off]` or `smtps://…`.
    public static func parse(_ text: String) throws -> SMTPSettings {
        guard let url = URLComponents(string: text), let scheme = url.scheme?.lowercased(),
            let host = url.host, !host.isEmpty
        else { throw ConfigurationError("smtp-url must look like smtp://user:password@host:587, not \(text).") }
        let security: Security
        switch scheme {
        case "smtp":
            switch url.queryItems?.first(where: { $0.name == "starttls" })?.value?.lowercased() {
            case nil, "on": security = .startTLS
            case "off": security = .none
            case let other?: throw ConfigurationError("smtp-url's starttls must be on or off, not \(other).")
            }
        case "smtps": security = .implicitTLS
        default: throw ConfigurationError("smtp-url must start with smtp:// or smtps://, not \(scheme)://.")
        }
        let port = url.port ?? (security == .implicitTLS ? 465 : 587)
        guard (1...65535).contains(port) else { throw ConfigurationError("smtp-url's port must be from 1 to 65535.") }
        var settings = SMTPSettings(
            host: host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host, port: port, security: security)
        settings.username = url.percentEncodedUser.flatMap { $0.removingPercentEncoding }.flatMap {
            $0.isEmpty ? nil : $0
        }
        settings.password = url.percentEncodedPassword.flatMap { $0.removingPercentEncoding }
        return settings
    }
}

/// Why a message was not delivered. `permanent` ones (a 5xx answer) are not tried again.
enum SMTPError: Error, CustomStringConvertible {
    case rejected(code: Int, text: String, during: String)
    case protocolError(String)
    case timedOut

    var permanent: Bool {
        if case .rejected(let code, _, _) = self { return code >= 500 }
        return false
    }

    var description: String {
        switch self {
        case .rejected(let code, let text, let during): "\(during): \(code) \(text)"
        case .protocolError(let text): text
        case .timedOut: "the SMTP server did not finish in time"
        }
    }
}

/// One answer of an SMTP server: its code and the text of its lines (RFC 5321, 4.2).
struct SMTPReply: Equatable {
    var code: Int
    var lines: [String]
    var text: String { lines.joined(separator: " ") }
}

/// Reads SMTP replies from the bytes a server sends, which are untrusted: every line must be a
/// three-digit code, then `-` (more lines follow) or a space or nothing, then text; all lines
/// of one reply carry the same code. Lines and replies are capped.
struct SMTPReplyReader {
    static let maxLineBytes = 2048
    static let maxLines = 100
    private var buffer: [UInt8] = []
    private var lines: [String] = []
    private var code: Int?

    mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// The next complete reply, nil when more bytes are needed.
    mutating func next() throws(SMTPError) -> SMTPReply? {
        while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = buffer[..<newline]
            buffer.removeSubrange(...newline)
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            guard line.count <= Self.maxLineBytes else { throw .protocolError("an SMTP reply line is too long") }
            let bytes = Array(line)
            guard bytes.count >= 3, bytes[0..<3].allSatisfy({ (0x30...0x39).contains($0) }),
                (0x32...0x35).contains(bytes[0])
            else { throw .protocolError("the SMTP server sent something that is not a reply") }
            let lineCode = bytes[0..<3].reduce(0) { $0 * 10 + Int($1 - 0x30) }
            if let code, code != lineCode { throw .protocolError("an SMTP reply changed its code midway") }
            let more: Bool
            switch bytes.count > 3 ? bytes[3] : UInt8(ascii: " ") {
            case UInt8(ascii: "-"): more = true
            case UInt8(ascii: " "): more = false
            default: throw .protocolError("the SMTP server sent something that is not a reply")
            }
            code = lineCode
            lines.append(String(decoding: bytes.dropFirst(4), as: UTF8.self))
            guard lines.count <= Self.maxLines else { throw .protocolError("an SMTP reply has too many lines") }
            if !more {
                defer { (lines, code) = ([], nil) }
                return SMTPReply(code: lineCode, lines: lines)
            }
        }
        guard buffer.count <= Self.maxLineBytes + 2 else { throw .protocolError("an SMTP reply line is too long") }
        return nil
    }
}

/// Sends one message per connection, the way a small transactional sender does: greeting, EHLO,
/// STARTTLS and EHLO again, AUTH, MAIL FROM, RCPT TO, DATA, QUIT.
struct SMTPClient: Sendable {
    let settings: SMTPSettings
    /// The name Plaza gives itself in EHLO.
    let heloName: String
    private let tls: NIOSSLContext?

    init(settings: SMTPSettings, heloName: String) throws {
        self.settings = settings
        self.heloName = heloName
        if settings.security == .none {
            tls = nil
        } else {
            var configuration = TLSConfiguration.makeClientConfiguration()
            if let caFile = settings.caFile {
                configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(caFile))
            }
            tls = try NIOSSLContext(configuration: configuration)
        }
    }

    /// Delivers `message` (a complete RFC 5322 message, CRLF line ends) from `sender` to `recipient`.
    func send(_ message: [UInt8], from sender: String, to recipient: String) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await deliver(message, from: sender, to: recipient) }
            group.addTask {
                try await Task.sleep(for: settings.timeout)
                throw SMTPError.timedOut
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// The name sent for SNI: none for an address literal, whose certificate is checked against the address.
    private var serverName: String? {
        IPAddress(settings.host) == nil ? settings.host : nil
    }

    private func deliver(_ message: [UInt8], from sender: String, to recipient: String) async throws {
        let (tls, serverName, implicit) = (tls, serverName, settings.security == .implicitTLS)
        let channel = try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .connectTimeout(.seconds(15))
            .connect(host: settings.host, port: settings.port) { channel in
                channel.eventLoop.makeCompletedFuture {
                    if implicit, let tls {
                        try channel.pipeline.syncOperations.addHandler(
                            NIOSSLClientHandler(context: tls, serverHostname: serverName))
                    }
                    return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        try await channel.executeThenClose { inbound, outbound in
            var conversation = Conversation(inbound: inbound.makeAsyncIterator(), outbound: outbound)
            try await conversation.expect(220, during: "greeting")
            var capabilities = try await conversation.command("EHLO \(heloName)", expect: 250)
            if settings.security == .startTLS {
                guard capabilities.lines.contains(where: { $0.uppercased().hasPrefix("STARTTLS") }), let tls else {
                    throw SMTPError.protocolError(
                        "the SMTP server does not offer STARTTLS (add ?starttls=off to smtp-url to send in the clear)")
                }
                try await conversation.command("STARTTLS", expect: 220)
                let underlying = channel.channel
                try await underlying.eventLoop.submit {
                    try underlying.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: tls, serverHostname: serverName), position: .first)
                }.get()
                capabilities = try await conversation.command("EHLO \(heloName)", expect: 250)
            }
            if let username = settings.username {
                try await conversation.authenticate(
                    username: username, password: settings.password ?? "", capabilities: capabilities)
            }
            try await conversation.command("MAIL FROM:<\(sender)>", expect: 250)
            try await conversation.command("RCPT TO:<\(recipient)>", expect: 250, 251)
            try await conversation.command("DATA", expect: 354)
            try await outbound.write(ByteBuffer(bytes: Self.dotStuffed(message)))
            try await conversation.expect(250, during: "DATA")
            _ = try? await conversation.command("QUIT", expect: 221)
        }
    }

    /// The message as DATA sends it: a line starting with "." gets another, and it ends with CRLF.CRLF.
    static func dotStuffed(_ message: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(message.count + 16)
        var lineStart = true
        for byte in message {
            if lineStart && byte == UInt8(ascii: ".") { out.append(byte) }
            out.append(byte)
            lineStart = byte == UInt8(ascii: "\n")
        }
        if !lineStart { out.append(contentsOf: Array("\r\n".utf8)) }
        out.append(contentsOf: Array(".\r\n".utf8))
        return out
    }

    private struct Conversation {
        var inbound: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator
        let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
        var reader = SMTPReplyReader()

        mutating func reply() async throws -> SMTPReply {
            while true {
                if let reply = try reader.next() { return reply }
                guard let bytes = try await inbound.next() else {
                    throw SMTPError.protocolError("the SMTP server closed the connection")
                }
                reader.append(bytes.readableBytesView)
            }
        }

        @discardableResult
        mutating func expect(_ codes: Int..., during step: String) async throws -> SMTPReply {
            let reply = try await reply()
            guard codes.contains(reply.code) else {
                throw SMTPError.rejected(code: reply.code, text: reply.text, during: step)
            }
            return reply
        }

        @discardableResult
        mutating func command(_ line: String, step: String? = nil, expect codes: Int...) async throws -> SMTPReply {
            try await outbound.write(ByteBuffer(string: line + "\r\n"))
            let reply = try await reply()
            guard codes.contains(reply.code) else {
                let step = step ?? String(line.prefix(while: { $0 != ":" && $0 != " " }))
                throw SMTPError.rejected(code: reply.code, text: reply.text, during: step)
            }
            return reply
        }

        mutating func authenticate(username: String, password: String, capabilities: SMTPReply) async throws {
            let mechanisms = Set(
                capabilities.lines.filter { $0.uppercased().hasPrefix("AUTH") }
                    .flatMap { $0.uppercased().split(whereSeparator: { $0 == " " || $0 == "=" }).dropFirst() }
                    .map(String.init))
            if mechanisms.contains("PLAIN") || !mechanisms.contains("LOGIN") {
                let credentials = Data(([0] + Array(username.utf8) + [0] + Array(password.utf8)))
                try await command("AUTH PLAIN \(credentials.base64EncodedString())", step: "AUTH", expect: 235)
            } else {
                try await command("AUTH LOGIN", expect: 334)
                try await command(Data(username.utf8).base64EncodedString(), step: "AUTH", expect: 334)
                try await command(Data(password.utf8).base64EncodedString(), step: "AUTH", expect: 235)
            }
        }
    }
}
