extension QueueActor {
    /// One queue actor for the whole app: give it to every client
    /// (`APIClient(configuration: config, queues: .shared)`) and their named queues share limits,
    /// holds and events (an app-wide queue limit is
    /// `await QueueActor.shared.setLimit(2, for: "imageDownloadQueue")`). A client created
    /// without `queues:` has queues of its own.
    public static let shared = QueueActor()
}
