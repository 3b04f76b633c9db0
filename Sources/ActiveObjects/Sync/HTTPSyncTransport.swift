import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A ``SyncTransport`` that posts each request to a server over HTTP(S) with a bearer token,
/// using Foundation's `URLSession` (no package dependency).
///
/// ```swift
/// let transport = HTTPSyncTransport(url: URL(string: "https://sync.example.com/sync")!, token: userToken)
/// let engine = try SyncEngine(database: db, models: [Note.self], transport: transport)
/// ```
///
/// The server answers `200` with the hub's reply as the body. Any other status throws
/// ``StatusError`` with the status and the server's message (`401` for a missing or invalid
/// token, `400` for a request the hub refused, `413` for one too large).
public struct HTTPSyncTransport: SyncTransport {
    /// A response other than `200 OK`.
    public struct StatusError: Error, CustomStringConvertible, LocalizedError, Sendable, Equatable {
        /// The HTTP status code.
        public let statusCode: Int
        /// The response body as text (the server's explanation), possibly empty.
        public let message: String

        /// A status error with `statusCode` and `message`.
        public init(statusCode: Int, message: String) {
            self.statusCode = statusCode
            self.message = message
        }

        /// `The sync server answered 401: invalid token`.
        public var description: String {
            "The sync server answered \(statusCode)" + (message.isEmpty ? "" : ": \(message)")
        }

        /// The same as ``description``.
        public var errorDescription: String? { description }
    }

    /// The server's synchronization endpoint.
    public let url: URL
    /// The bearer token sent in the `Authorization` header.
    public let token: String
    /// How long one exchange may take, in seconds.
    public let timeout: TimeInterval

    /// A transport posting to `url` with `Authorization: Bearer <token>`.
    /// - Parameters:
    ///   - url: the server's synchronization endpoint.
    ///   - token: the user's bearer token, which the server maps to the user.
    ///   - timeout: how long one exchange may take before it fails (default 60 s).
    public init(url: URL, token: String, timeout: TimeInterval = 60) {
        self.url = url
        self.token = token
        self.timeout = timeout
    }

    /// Posts `request` and returns the response body.
    /// - Throws: ``StatusError`` for a status other than 200; `URLError` when the server
    ///   cannot be reached or the exchange times out.
    public func exchange(_ request: Data) async throws -> Data {
        var urlRequest = URLRequest(url: url, timeoutInterval: timeout)
        urlRequest.httpMethod = "POST"
        urlRequest.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
        urlRequest.httpBody = request
        let (data, response) = try await URLSession.shared.data(for: urlRequest)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else {
            throw StatusError(statusCode: status, message: String(decoding: data.prefix(2000), as: UTF8.self))
        }
        return data
    }
}
