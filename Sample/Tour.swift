// A tour of ActiveObjects: `swift run Sample`.
@main
enum Tour {
    static func main() async throws {
        try runSynchronousTour()
        try runRolesTour()
        try runSearchTour()
        try await runAsyncTour()
        try await runSyncTour()
        print("\nDone.")
    }
}
