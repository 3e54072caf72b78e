/// Lets a call's accessories draw its progress (``Accessory/didProgress(_:progress:)``): the
/// call reports progress through a ``ProgressMiddleware`` whose monitor also tells the
/// accessories about every value it delivers, so they see exactly what a
/// ``TransferProgressMonitor`` yields.
enum AccessoryProgress {
    /// `options` with progress going to `accessories`, when the call moves a body: its response
    /// goes to a file, it sends a body, or it already reports progress to a monitor (that monitor
    /// is shared). Unchanged inside a batch or chain, whose members do not report to accessories.
    static func options(
        _ options: RequestOptions, drawingTo accessories: [any Accessory], activity: Activity,
        request: PreparedRequest, responseBody: ResponseBodyDisposition
    ) -> RequestOptions {
        guard !accessories.isEmpty, !AccessoryScope.insideGroup else { return options }
        let existing = options.middleware.firstIndex { $0 is ProgressMiddleware }
        let toDisk: Bool
        switch responseBody.storage {
        case .download, .file: toDisk = true
        case .collect, .stream: toDisk = false
        }
        guard toDisk || request.content != nil || existing != nil else { return options }
        let observer: TransferProgressMonitor.Observer = { update in
            for accessory in accessories { accessory.didProgress(activity, progress: update) }
        }
        var adjusted = options
        if let existing, var middleware = adjusted.middleware[existing] as? ProgressMiddleware {
            middleware.observer = observer
            adjusted.middleware[existing] = middleware
        } else {
            adjusted.middleware.append(ProgressMiddleware(monitor: TransferProgressMonitor(), observer: observer))
        }
        return adjusted
    }
}
