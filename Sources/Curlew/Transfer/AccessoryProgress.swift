/// Lets a call's accessories draw its progress (``Accessory/didProgress(_:progress:)``): the
/// call reports progress through a ``ProgressMiddleware`` whose monitor also tells the
/// accessories about every value it delivers, so they see exactly what a
/// ``TransferProgressMonitor`` yields.
///
/// Which middleware report progress is read from their declared ``APIMiddleware/kind``, and the
/// accessories' observer reaches the reporter as a fact of the call's options (``ObserverKey``),
/// never by looking for or changing a middleware of a concrete type.
enum AccessoryProgress {
    /// The accessories' observer, for the outermost middleware that reports progress
    /// (``ProgressMiddleware``); `nil` when no accessory draws the call.
    enum ObserverKey: RequestOptionKey {
        static let defaultValue: TransferProgressMonitor.Observer? = nil
    }

    /// `options` with progress going to `accessories`, when the call moves a body: its response
    /// goes to a file, it sends a body, or it already reports progress to a monitor (that monitor
    /// is shared). Unchanged inside a batch or chain, whose members do not report to accessories.
    static func options(
        _ options: RequestOptions, drawingTo accessories: [any Accessory], activity: Activity,
        request: PreparedRequest, responseBody: ResponseBodyDisposition
    ) -> RequestOptions {
        guard !accessories.isEmpty, !AccessoryScope.insideGroup else { return options }
        let reportsProgress = options.middleware.contains { $0.kind == ProgressMiddleware.kind }
        let toDisk: Bool
        switch responseBody.storage {
        case .download, .file: toDisk = true
        case .collect, .stream: toDisk = false
        }
        guard toDisk || request.content != nil || reportsProgress else { return options }
        var adjusted = options
        adjusted[ObserverKey.self] = { update in
            for accessory in accessories { accessory.didProgress(activity, progress: update) }
        }
        if !reportsProgress { adjusted.middleware.append(ProgressMiddleware(monitor: TransferProgressMonitor())) }
        return adjusted
    }
}
