internal import Foundation
internal import HTTPTypes
internal import Synchronization

/// Shares one transfer among identical idempotent requests made while one is in flight.
///
/// Wrap any transport to opt in:
///
/// ```swift
/// let client = APIClient(baseURL: base, transport: DeduplicatingTransport(CurlTransport.shared))
/// ```
///
/// Two requests are identical when method, URL, body, every header (so the credential too) and
/// their ``/CurlewCore/TransferOptions`` match — TLS verification and pins, proxy, cookie jar,
/// body limit, timeouts — so no caller receives an answer fetched under settings weaker than its
/// own (an unverified connection, a larger body limit, a longer timeout). Only `GET` and `HEAD`
/// are shared. A call under a deadline (``withDeadline(in:isolation:operation:)``) carries the
/// time it has left as its total timeout, so it shares only with calls of the same deadline. Each caller gets the result. A caller that is
/// cancelled leaves with `.cancelled` without disturbing the others; the transfer itself is
/// cancelled only when no caller is left.
public final class DeduplicatingTransport: Transport {
    private struct Key: Hashable {
        let method: String
        let url: String
        let headers: [String]
        let body: Data?
        let options: TransferOptions
    }

    private typealias Waiter = CheckedContinuation<RawResponse, any Error>

    private struct Flight {
        /// Tells this flight apart from a later one for the same key.
        let generation: UInt64
        var task: Task<Void, Never>?
        var waiters: [UInt64: Waiter] = [:]
    }

    private struct State {
        var flights: [Key: Flight] = [:]
        var nextID: UInt64 = 0
    }

    private let base: any Transport
    /// Guards every in-flight entry and its waiters.
    private let state = Mutex(State())

    /// Wraps a transport.
    public init(_ base: any Transport) {
        self.base = base
    }

    /// Sends the request, joining an identical one already in flight.
    public nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        guard request.method == .get || request.method == .head, context.responseBody == .collect else { return try await base.send(request, context: context) }
        let key = Key(
            method: request.method.rawValue, url: request.url,
            headers: request.headers.map { "\($0.name.canonicalName):\($0.value)" }.sorted(), body: request.body,
            options: request.options)
        guard request.content?.data != nil || request.content == nil else { return try await base.send(request, context: context) }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                if Task.isCancelled {
                    continuation.resume(throwing: CurlEngine.cancellationError(request))
                    return
                }
                state.withLock { state in
                    if state.flights[key] != nil {
                        state.flights[key]?.waiters[id] = continuation
                        return
                    }
                    // The first caller starts the transfer; the task is created under the lock so
                    // a cancellation always finds it.
                    var flight = Flight(generation: id)
                    flight.waiters[id] = continuation
                    flight.task = Task { [base] in
                        let result: Result<RawResponse, any Error>
                        do { result = .success(try await base.send(request, context: context)) } catch { result = .failure(error) }
                        let waiters = self.state.withLock { state -> [Waiter] in
                            guard state.flights[key]?.generation == id else { return [] }
                            return state.flights.removeValue(forKey: key).map { Array($0.waiters.values) } ?? []
                        }
                        for waiter in waiters { waiter.resume(with: result) }
                    }
                    state.flights[key] = flight
                }
            }
        } onCancel: {
            let (waiter, orphanedTask) = state.withLock { state -> (Waiter?, Task<Void, Never>?) in
                guard var flight = state.flights[key], let waiter = flight.waiters.removeValue(forKey: id) else { return (nil, nil) }
                if flight.waiters.isEmpty {
                    state.flights[key] = nil
                    return (waiter, flight.task)
                }
                state.flights[key] = flight
                return (waiter, nil)
            }
            waiter?.resume(throwing: CurlEngine.cancellationError(request))
            orphanedTask?.cancel()
        }
    }
}
