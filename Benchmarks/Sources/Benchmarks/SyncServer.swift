import ActiveObjects
import Foundation
import Hummingbird
import Logging

// The sync workloads' server: a `SyncHub` behind a real HTTP server (Hummingbird 2, HTTP/1.1)
// on 127.0.0.1, on a port the system chooses, inside the benchmark process — what a device's
// `HTTPSyncTransport` talks to. One route, `POST /sync`: the bearer token is checked (one
// token, one user), the body read whole, handed to `hub.handle(request:user:)`, and its reply
// returned as the body (`400` with the reason for a request the hub refused).

/// A running server; ``stop()`` ends it.
final class SyncHTTPServer: Sendable {
    /// The loopback port it listens on.
    let port: Int
    /// The hub requests go to: set for each round (a new hub database each time).
    let hub: LockedBox<SyncHub?>
    /// The bearer token a request must carry, and the user it authenticates.
    static let token = "bench-token"
    static let user = "bench"

    private let task: Task<Void, any Error>

    private init(port: Int, hub: LockedBox<SyncHub?>, task: Task<Void, any Error>) {
        self.port = port
        self.hub = hub
        self.task = task
    }

    /// The URL a device's transport posts to.
    var url: URL { URL(string: "http://127.0.0.1:\(port)/sync")! }

    /// Starts the server and returns once it listens.
    static func start() async throws -> SyncHTTPServer {
        let hub = LockedBox<SyncHub?>(nil)
        let router = Router()
        router.post("sync") { request, _ -> Response in
            guard request.headers[.authorization] == "Bearer \(token)" else {
                throw HTTPError(.unauthorized, message: "invalid token")
            }
            guard let current = hub.current else { throw HTTPError(.serviceUnavailable, message: "no hub") }
            var request = request
            let body = try await request.collectBody(upTo: current.maximumRequestSize + 1)
            let reply: Data
            do {
                reply = try await current.handle(request: Data(body.readableBytesView), user: user)
            } catch let error as ActiveObjectError {
                throw HTTPError(.badRequest, message: "\(error)")
            }
            return Response(status: .ok, headers: [.contentType: "application/json"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: reply)))
        }
        // Quiet: stdout holds only the results.
        var logger = Logger(label: "bench-sync-server")
        logger.logLevel = .critical
        let listening = LockedBox<Int?>(nil)
        let application = Application(
            router: router,
            configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
            onServerRunning: { channel in listening.withLock { $0 = channel.localAddress?.port ?? -1 } },
            logger: logger)
        let task = Task { try await application.run() }
        let deadline = monotonicNanoseconds() + 20_000_000_000
        while listening.current == nil {
            guard monotonicNanoseconds() < deadline else {
                task.cancel()
                throw BenchError("sync server: not listening after 20 s")
            }
            try await Task.sleep(for: .milliseconds(1))
        }
        guard let port = listening.current, port > 0 else {
            task.cancel()
            throw BenchError("sync server: no port")
        }
        return SyncHTTPServer(port: port, hub: hub, task: task)
    }

    /// Stops the server and waits for it to end.
    func stop() async {
        task.cancel()
        _ = await task.result
    }
}
