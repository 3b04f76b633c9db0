import ActiveObjects
import Hummingbird

/// Turns the library's errors that are the client's doing into 4xx answers with a JSON
/// message (`{"error":{"message":"…"}}`, Hummingbird's `HTTPError` format):
///
/// - `ActiveObjectError.validationFailed` (and a bare `ValidationError`) → 422, naming the field;
/// - `ActiveObjectError.recordNotFound` (the row was deleted between the find and the save) → 404;
/// - `DatabaseError` `.busy` (the write lock stayed taken longer than the busy timeout) → 503.
///
/// Everything else stays an internal error (500), logged by Hummingbird.
public struct DatabaseErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    /// Creates the middleware.
    public init() {}

    /// Runs the rest of the chain, translating its errors as described above.
    /// - Throws: `HTTPError` for the errors above; any other error of `next` unchanged.
    public func handle(
        _ request: Request,
        context: Context,
        next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as ActiveObjectError {
            switch error {
            case .validationFailed(let validation):
                throw HTTPError(.unprocessableContent, message: validation.description)
            case .recordNotFound:
                throw HTTPError(.notFound, message: error.description)
            default:
                throw error
            }
        } catch let error as ValidationError {
            throw HTTPError(.unprocessableContent, message: error.description)
        } catch let error as DatabaseError where error.resultCode == .busy {
            throw HTTPError(.serviceUnavailable, message: "the database is busy, try again")
        }
    }
}
