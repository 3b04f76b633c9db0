import Hummingbird

/// Gives every error answer a JSON body, `{"error":{"message":"…"}}` with
/// `Content-Type: application/json` — the format of Hummingbird's `HTTPError` with a message,
/// which the routes and ``DatabaseErrorMiddleware`` already use.
///
/// Hummingbird answers some errors with an empty body: a path or method that no route matches
/// (404; the router answers a wrong method on a known path with 404 as well, not 405), a
/// request body over `context.maxUploadSize` (413, from `NIOTooManyBytesError`), any
/// `HTTPError` thrown without a message, and any other error (500). This middleware turns each of
/// them into an `HTTPError` with a message naming what went wrong. An error that already has a
/// message passes unchanged. An error that is no `HTTPResponseError` is logged (with the request)
/// and answered with a 500 whose message says nothing of the server's internals.
///
/// Add it to the router before any route, so that it wraps the routes and the router's
/// not-found answer: `router.add(middleware: JSONErrorMiddleware())`.
public struct JSONErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    public init() {}

    /// Runs the rest of the chain and gives its error answers a JSON message.
    /// - Throws: `HTTPError` with a message for every error of `next`.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let response: Response
        do {
            response = try await next(request, context)
        } catch let error as HTTPError {
            guard error.body == nil else { throw error }
            throw HTTPError(error.status, headers: error.headers, message: Self.message(for: error.status, request, context))
        } catch let error as any HTTPResponseError {
            // Another error that makes its own answer, such as NIOTooManyBytesError (413):
            // checked below like an answer of a route.
            response = try error.response(from: request, context: context)
        } catch {
            context.logger.error(
                "Internal server error",
                metadata: ["error": "\(String(reflecting: error))", "request": "\(request.method.rawValue) \(request.uri.path)"]
            )
            throw HTTPError(.internalServerError, message: "Internal server error; the server's log has the details.")
        }
        // An error answer with an empty body (one made above, or one a route returned).
        guard response.status.code >= 400, response.body.contentLength == 0 else { return response }
        var headers = response.headers
        headers[.contentLength] = nil
        headers[.contentType] = nil
        throw HTTPError(response.status, headers: headers, message: Self.message(for: response.status, request, context))
    }

    /// The message of an error answer that had none.
    static func message(for status: HTTPResponse.Status, _ request: Request, _ context: Context) -> String {
        switch status {
        case .notFound:
            return "No route for \(request.method.rawValue) \(request.uri.path)."
        case .methodNotAllowed:
            return "\(request.method.rawValue) is not allowed on \(request.uri.path)."
        case .contentTooLarge:
            let limit = context.maxUploadSize
            let shown = limit % (1 << 20) == 0 ? "\(limit >> 20) MiB" : "\(limit) bytes"
            return "The request body is larger than the limit of \(shown)."
        default:
            return "\(status.code) \(status.reasonPhrase)."
        }
    }
}
