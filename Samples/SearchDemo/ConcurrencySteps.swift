import Curlew
import Foundation

/// Image downloads through a queue of two, with an "all done" notification (HAccess's
/// `initQueueWithName:maxMaxConcurrent:` and `queue:finish:`).
struct QueuedDownloadsStep: TourStep {
    let title = "Download every sunset through a queue of 2, then hear when it drains"

    func run(with client: APIClient) async throws {
        let queues = client.queues
        await queues.setLimit(2, for: "images")
        let drained = Task {
            for await event in queues.events where event.kind == .queueDrained && event.queue == "images" { return true }
            return false
        }
        let pictures = try await client.send(SearchRequest(key: "sunset")).data.pictures
        await withTaskGroup(of: Void.self) { group in
            for picture in pictures {
                group.addTask {
                    let bytes = try? await client.send(ImageRequest(path: picture.imageURL), queue: "images")
                    say("  \(picture.imageURL): \(bytes?.count ?? 0) bytes")
                }
            }
            await queues.waitUntilIdle("images")
        }
        say(await drained.value ? "queue \"images\" drained: all done" : "queue never drained")
    }
}

/// A batch: all at once, each with its own outcome, one combined result.
struct BatchStep: TourStep {
    let title = "A batch of six detail requests (one of them for a missing picture)"

    func run(with client: APIClient) async throws {
        let ids = [1, 2, 3, 4, 5, 42]
        let batch = await client.batch(ids.map { PictureRequest(id: $0) }, options: BatchOptions(maximumConcurrency: 3)) { index, result in
            if case .failure(let error as CurlewError) = result { say("  #\(ids[index]) failed: \(error.code)") }
        }
        say("\(batch.values.count) loaded, failed: \(batch.failedRequests.map(\.id))")
        let (search, details) = await client.batch(SearchRequest(key: "fog"), PictureRequest(id: 3))
        say("heterogeneous batch: \((try? search.get())?.data.total ?? 0) fog picture(s); #3 is \((try? details.get())?.data.title ?? "?")")
    }
}

/// A chain: log in, then load the profile with the token the first step returned.
struct ChainStep: TourStep {
    let title = "Log in, then load the profile (a chain)"

    func run(with client: APIClient) async throws {
        let profile =
            try await client
            .chain(LoginRequest(user: "ines", password: "curlew"), name: "login", onComplete: { say("  logged in as \($0.data.user)") })
            .then("profile") { session in ProfileRequest(token: session.data.token) }
            .run()
        say("\(profile.data.user)'s favourites: \(profile.data.favourites)")
        do {
            _ =
                try await client
                .chain(LoginRequest(user: "ines", password: "wrong"), name: "login")
                .then("profile") { session in ProfileRequest(token: session.data.token) }
                .run()
        } catch let error as CurlewError {
            say("with a wrong password the chain stops at \(error.stage.map(String.init(describing:)) ?? "?") (\(error.code)); the profile is never requested")
        }
    }
}
