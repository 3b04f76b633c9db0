// A tour of ActiveObjects: `swift run Sample`.
@main
enum Tour {
    static func main() async throws {
        try runSynchronousTour()
        try await runAsyncTour()
        print("\nDone.")
    }
}
