import ActiveObjects
import Foundation
import Hummingbird

/// The sync endpoint, in front of a ``SyncHub``:
///
/// | request | answer |
/// |---|---|
/// | `POST /sync`, `Authorization: Bearer TOKEN`, the body a `SyncEngine`'s request | 200: the hub's reply, `application/json` |
/// | no `Authorization`, another scheme, or a token the ``TokenFile`` does not have | 401 |
/// | a request the hub refused (`ActiveObjectError.syncRefused`: unreadable, another protocol version, an unknown model or column…) | 400, its reason |
/// | a body over the hub's `maximumRequestSize` | 413 |
/// | the hub's database busy longer than its timeout | 503 |
///
/// The user is the token's, never anything the request says: a device sees only its user's
/// notes. Every error answer is `{"error":{"message":"…"}}` (Hummingbird's `HTTPError`).
public struct SyncRoutes<Context: RequestContext>: Sendable {
    /// The hub that stores and merges the changes.
    public let hub: SyncHub
    /// The tokens accepted.
    public let tokens: TokenFile

    /// Routes for `hub`, authenticating with `tokens`.
    public init(hub: SyncHub, tokens: TokenFile) {
        self.hub = hub
        self.tokens = tokens
    }

    /// Adds `POST /sync` to `router`.
    public func add(to router: Router<Context>) {
        router.post("sync", use: sync)
    }

    @Sendable func sync(_ request: Request, context: Context) async throws -> Response {
        let user = try authenticate(request)
        let limit = hub.maximumRequestSize
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw Self.tooLarge(limit)
        }
        let body: ByteBuffer
        do {
            body = try await request.body.collect(upTo: limit)
        } catch is any HTTPResponseError {
            // NIOTooManyBytesError: the body went past the limit (sent without a length).
            throw Self.tooLarge(limit)
        }
        let reply: Data
        do {
            reply = try await hub.handle(request: Data(body.readableBytesView), user: user)
        } catch let error as ActiveObjectError {
            guard case .syncRefused = error else { throw error }
            throw HTTPError(.badRequest, message: error.description)
        } catch let error as DatabaseError where error.resultCode == .busy {
            throw HTTPError(.serviceUnavailable, message: "The hub's database is busy; try again.")
        }
        return Response(
            status: .ok,
            headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply))
        )
    }

    /// The user of the request's bearer token.
    /// - Throws: `HTTPError` 401 (with `WWW-Authenticate: Bearer`) when there is none or it is unknown.
    func authenticate(_ request: Request) throws -> String {
        guard let header = request.headers[.authorization] else {
            throw Self.unauthorized("The request has no Authorization header; send `Authorization: Bearer TOKEN`.")
        }
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else {
            throw Self.unauthorized("The Authorization header is not `Bearer TOKEN`.")
        }
        let token = parts[1].trimmingCharacters(in: .whitespaces)
        guard let user = tokens.user(for: token) else {
            throw Self.unauthorized("The token is not valid.")
        }
        return user
    }

    static func unauthorized(_ message: String) -> HTTPError {
        HTTPError(.unauthorized, headers: [.wwwAuthenticate: "Bearer"], message: message)
    }

    static func tooLarge(_ limit: Int) -> HTTPError {
        HTTPError(.contentTooLarge, message: "The request body is larger than this hub's limit of \(limit) bytes.")
    }
}
