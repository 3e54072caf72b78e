import Curlew

/// Collects a subscription's events until `count` of `kind` have arrived (CurlewTests'
/// `EventTests.collect`, for this target).
func collectEvents(_ stream: AsyncStream<ClientEvent>, until count: Int, of kind: ClientEvent.Kind) async -> [ClientEvent] {
    var seen: [ClientEvent] = []
    var matched = 0
    for await event in stream {
        seen.append(event)
        if event.kind == kind { matched += 1 }
        if matched == count { break }
    }
    return seen
}
