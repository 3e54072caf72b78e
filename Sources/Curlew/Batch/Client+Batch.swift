extension APIClient {
    /// Sends requests of one type together in a task group and returns every result in input order.
    ///
    /// ```swift
    /// let batch = await client.batch((1...20).map { PictureRequest(id: $0) },
    ///                                options: .init(maximumConcurrency: 4))
    /// print(batch.values.count, "loaded;", batch.failedRequests.map(\.id), "failed")
    /// ```
    /// - Parameters:
    ///   - requests: The requests.
    ///   - options: Collect-all or fail-fast, a concurrency cap, a deadline.
    ///   - onEach: Called as each request completes, with its index and result.
    /// - Returns: The combined result; it never throws — each member carries its own outcome.
    public nonisolated func batch<R: Endpoint>(
        _ requests: [R],
        options: BatchOptions = BatchOptions(),
        onEach: ((Int, Result<R.Response, any Error>) -> Void)? = nil
    ) async -> BatchResult<R> {
        let activity = Activity(kind: .batch, name: "batch of \(requests.count) \(R.self)", memberCount: requests.count)
        let results = await reportingBatch(activity) {
            await BatchRunner.run(
                count: requests.count, options: options,
                operation: { index in try await self.send(requests[index]) },
                onEach: onEach.map { callback in { index, result in callback(index, result.mapError(BatchRunner.memberError)) } },
                describe: { index in self.memberSummary(requests[index]) }
            )
        }
        return BatchResult(requests: requests, results: results.map { $0.mapError(BatchRunner.memberError) })
    }

    /// A member's request as the client builds it (method, URL with its parameters, secrets
    /// redacted; `willSend` is not run), for the error of a member the batch's deadline stopped.
    private nonisolated func memberSummary<R: Endpoint>(_ request: R) -> RequestSummary {
        let baseURL = request.options.baseURL ?? configuration.baseURL
        let url =
            (try? encodeParameters(of: request)).flatMap { encoded in
                try? RequestURLBuilder(baseURL: baseURL, path: encoded.path, query: request.query + encoded.query, method: request.method).build()
            } ?? RequestURLBuilder.visible((baseURL ?? "") + request.path)
        return RequestSummary(method: request.method, url: url, secretKeyFragments: configuration.secretQueryKeyFragments)
    }

    /// Runs arbitrary operations — chains, nested batches, custom sequences — as one batch.
    /// - Parameters:
    ///   - operations: The work; each receives this client.
    ///   - options: Collect-all or fail-fast, a concurrency cap, a deadline.
    /// - Returns: Each operation's result, in input order.
    public nonisolated func batch<T: Sendable>(
        operations: [@Sendable (APIClient) async throws -> T],
        options: BatchOptions = BatchOptions()
    ) async -> [Result<T, any Error>] {
        await reportingBatch(Activity(kind: .batch, name: "batch of \(operations.count) operations", memberCount: operations.count)) {
            await BatchRunner.run(count: operations.count, options: options) { index in try await operations[index](self) }
        }
    }

    /// Reports a whole batch to the client's accessories as one unit; members stay quiet.
    private nonisolated func reportingBatch<T>(
        _ activity: Activity, _ work: () async -> [Result<T, any Error>]
    ) async -> [Result<T, any Error>] {
        // The batch's outcome carries the code of its first member that failed other than by
        // being cancelled (a fail-fast batch cancels the rest), so an accessory tells a server's
        // refusal from a network failure; cancelled members count as failed.
        let outcome: ([Result<T, any Error>]) -> (any Error)? = { results in
            let failures = results.compactMap { if case .failure(let error) = $0 { return error } else { return nil } }
            guard let first = failures.first(where: { !BatchRunner.isCancellation($0) }) ?? failures.first else { return nil }
            var error = CurlewError.wrappingOperation(first)
            error.message = "\(failures.count) of \(results.count) batch members failed; the first: \(error.message)"
            return error
        }
        // `work` never throws, so neither does the scope.
        return (try? await AccessoryScope.run(activity, accessories: configuration.accessories, group: true, isFailure: outcome, work)) ?? []
    }

    /// Sends requests of different types together and returns their results as a tuple.
    ///
    /// ```swift
    /// let (profile, pictures) = await client.batch(ProfileRequest(), SearchRequest(key: "fog"))
    /// ```
    /// Each member is the value, a ``/CurlewCore/CurlewError``, or `CancellationError` when it was cancelled.
    public nonisolated func batch<each R: Endpoint>(_ requests: repeat each R) async -> (repeat Result<(each R).Response, any Error>) {
        let slots = (repeat Self.slot(for: each requests))
        var count = 0
        for _ in repeat each requests { count += 1 }
        _ = await reportingBatch(Activity(kind: .batch, name: "batch of \(count) requests", memberCount: count)) { () async -> [Result<Void, any Error>] in
            await withTaskGroup(of: Void.self) { group in
                repeat addMember(each requests, slot: each slots, to: &group)
            }
            var outcomes: [Result<Void, any Error>] = []
            for slot in repeat each slots { outcomes.append(slot.peekFailure().map { .failure($0) } ?? .success(())) }
            return outcomes
        }
        return (repeat (each slots).take())
    }

    private static func slot<R: Endpoint>(for request: R) -> ResultSlot<R.Response> {
        ResultSlot()
    }

    private nonisolated func addMember<R: Endpoint>(_ request: R, slot: ResultSlot<R.Response>, to group: inout TaskGroup<Void>) {
        group.addTask {
            do {
                slot.store(.success(try await self.send(request)))
            } catch {
                slot.store(.failure(BatchRunner.memberError(error)))
            }
        }
    }
}
