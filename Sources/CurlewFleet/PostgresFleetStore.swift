internal import Foundation
public import CurlewCore
public import Logging
public import PostgresNIO
public import ServiceLifecycle
internal import Synchronization

/// A ``FleetStore`` in PostgreSQL through postgres-nio: the fleet's second cache tier in an
/// UNLOGGED table (fast, emptied by a crash — it is a cache), locks in another, limit leases in
/// logged tables, invalidations over `LISTEN`/`NOTIFY`.
///
/// The store creates and migrates its tables itself (under an advisory lock, so instances
/// starting together do not race) in ``Configuration/schema``. It is a `Service`: run it in the
/// application's `ServiceGroup` before the ``FleetCacheStorage`` that uses it, so that on
/// shutdown the storage flushes its queued writes while the store still runs.
///
/// ```swift
/// let store = PostgresFleetStore(configuration: try .init(
///     client: .init(host: "127.0.0.1", port: 5432, username: "app", password: secret, database: "app", tls: .disable)))
/// let storage = try FleetCacheStorage(local: MemoryCacheStorage(), store: store)
/// let group = ServiceGroup(services: [store, storage], logger: logger)
/// ```
public final class PostgresFleetStore: FleetStore, Service, Sendable {
    /// How to reach PostgreSQL and where the tables live.
    public struct Configuration: Sendable {
        /// postgres-nio's client configuration (host, credentials, TLS, pool size). The store keeps
        /// two of the pool's connections for itself (the backplane's `LISTEN` and the reads'
        /// connection): a pool of at most 2 leaves nothing for writes, locks and leases.
        public var client: PostgresClient.Configuration
        /// The PostgreSQL schema holding the tables, created when missing; one per fleet.
        /// ASCII letters (lowercased, as PostgreSQL folds a name), digits and `_`, 1 to 40 of
        /// them; a keyword such as `order` or a leading digit is fine. Any other name (empty,
        /// longer, or with another character) is refused by the initializers with
        /// `CurlewError.Code.invalidConnectionSettings`. Default: `curlew_fleet`.
        public private(set) var schema: String
        /// Logs connection trouble (never the password or the payloads).
        public var logger: Logger

        /// A configuration.
        /// - Throws: `CurlewError` with `CurlewError.Code.invalidConnectionSettings` (stage
        ///   `configuration`) for a ``schema`` that is empty, longer than 40 characters, or has a
        ///   character other than an ASCII letter, a digit or `_`.
        public init(client: PostgresClient.Configuration, schema: String = "curlew_fleet", logger: Logger = Logger(label: "curlew.fleet.postgres")) throws(CurlewError) {
            self.client = client
            self.schema = try Self.checkedSchema(schema)
            self.logger = logger
            self.client.options.additionalStartupParameters.append(("search_path", self.schema))
        }

        /// A configuration from a `postgres://user:password@host:port/database` URL (also
        /// `postgresql://`; user name and password percent-encoded; an IPv6 host in brackets).
        /// TLS is off, for loopback and private networks, unless the URL asks with libpq's
        /// `sslmode`: `disable`; `prefer` or `allow` (TLS when the server offers it, certificate
        /// not verified); `require` (TLS, certificate not verified); `verify-ca` (the chain
        /// verified against the system's roots); `verify-full` (the chain and the host name).
        /// - Throws: `CurlewError` (stage `configuration`) whose message says what is wrong,
        ///   never with the password in it: `CurlewError.Code.malformedURL` when it is not a URL,
        ///   names no host or user name, or has a port outside 1…65535;
        ///   `CurlewError.Code.unsupportedScheme` for a scheme other than `postgres` or
        ///   `postgresql`; `CurlewError.Code.invalidConnectionSettings` for an unknown `sslmode`,
        ///   another query parameter (none is ignored silently) or a ``schema`` the store cannot use.
        public init(url: String, schema: String = "curlew_fleet") throws(CurlewError) {
            guard let parts = URLComponents(string: url), parts.scheme != nil else {
                throw Self.refusal(.malformedURL, "it is not a URL")
            }
            guard let scheme = parts.scheme?.lowercased(), scheme == "postgres" || scheme == "postgresql" else {
                throw Self.refusal(.unsupportedScheme, "its scheme must be postgres or postgresql, not \(parts.scheme ?? "")")
            }
            var host = parts.host ?? ""
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            guard !host.isEmpty else { throw Self.refusal(.malformedURL, "it names no host") }
            guard let user = parts.user, !user.isEmpty else { throw Self.refusal(.malformedURL, "it names no user (postgres://user@host/database)") }
            let port = parts.port ?? 5432
            guard (1...65_535).contains(port) else { throw Self.refusal(.malformedURL, "its port \(port) is not between 1 and 65535") }
            var tls = PostgresClient.Configuration.TLS.disable
            for item in parts.queryItems ?? [] {
                guard item.name == "sslmode" else {
                    throw Self.refusal(.invalidConnectionSettings, "its parameter \(item.name) is not supported (only sslmode is)")
                }
                tls = try Self.tls(sslmode: item.value ?? "")
            }
            let database = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : nil
            try self.init(
                client: PostgresClient.Configuration(
                    host: host, port: port, username: user, password: parts.password,
                    database: database?.isEmpty == false ? database : nil, tls: tls),
                schema: schema)
        }

        /// What libpq's `sslmode` asks for, in postgres-nio's terms.
        private static func tls(sslmode: String) throws(CurlewError) -> PostgresClient.Configuration.TLS {
            var configuration = TLSConfiguration.makeClientConfiguration()
            switch sslmode {
            case "disable":
                return .disable
            case "allow", "prefer":
                configuration.certificateVerification = .none
                return .prefer(configuration)
            case "require":
                configuration.certificateVerification = .none
                return .require(configuration)
            case "verify-ca":
                configuration.certificateVerification = .noHostnameVerification
                return .require(configuration)
            case "verify-full":
                configuration.certificateVerification = .fullVerification
                return .require(configuration)
            default:
                throw refusal(
                    .invalidConnectionSettings, "its sslmode \(sslmode) is none of disable, allow, prefer, require, verify-ca, verify-full")
            }
        }

        /// The schema lowercased, or the reason it cannot be one: it is quoted in SQL and part of
        /// the backplane's channel name (at most 63 bytes), so only ASCII letters, digits and `_`,
        /// at most 40 of them.
        private static func checkedSchema(_ schema: String) throws(CurlewError) -> String {
            let allowed = schema.unicodeScalars.allSatisfy { $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "_") }
            guard !schema.isEmpty, schema.unicodeScalars.count <= 40, allowed else {
                var error = CurlewError(
                    code: .invalidConnectionSettings,
                    message: "the fleet store's schema \"\(schema)\" is refused: it must be 1 to 40 ASCII letters, digits or _")
                error.stage = .configuration
                throw error
            }
            return schema.lowercased()
        }

        /// A refused URL: `code`, stage `configuration`, "the PostgreSQL URL is refused: " and
        /// the explanation (which never holds the password).
        private static func refusal(_ code: CurlewError.Code, _ explanation: String) -> CurlewError {
            var error = CurlewError(code: code, message: "the PostgreSQL URL is refused: \(explanation)")
            error.stage = .configuration
            return error
        }
    }

    /// How the store was set up.
    public let configuration: Configuration
    /// postgres-nio's pooled client (run by ``run()``).
    public let client: PostgresClient
    private let channel: String
    private let state = Mutex(State())
    private let subscribers = InvalidationBroadcast()
    /// The connection second-tier reads prefer (``read(_:timeout:)``).
    private let reader = ReadConnection()

    private struct State {
        var migrated = false
        var migration: Task<Void, any Error>?
        var listening = false
        var listenWaiters: [CheckedContinuation<Void, Never>] = []
        /// The key of this store's liveness lock while the listener's connection holds it.
        var livenessToken: Int32?
        /// The key it held last: taken again after a reconnection, so the locks stamped with it
        /// count as alive again.
        var lastLivenessToken: Int32?
    }

    /// The first key of every store's liveness lock (`pg_advisory_lock(class, token)`): "CFLT".
    static let livenessClass: Int32 = 0x4346_4C54

    /// A store; nothing connects until ``run()``.
    public init(configuration: Configuration) {
        self.configuration = configuration
        self.client = PostgresClient(configuration: configuration.client, backgroundLogger: configuration.logger)
        self.channel = "curlew_fleet_" + configuration.schema
    }

    // MARK: Service

    /// Runs postgres-nio's client and the invalidation listener until graceful shutdown or
    /// cancellation; then ends every ``invalidations()`` subscription.
    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                group.addTask { await self.client.run() }
                group.addTask { await self.listen() }
                group.addTask { await self.keepReader() }
                group.addTask { await self.keepSweeping() }
            }
        }
        subscribers.finish()
    }

    /// Returns once the listener has subscribed to the backplane channel (after ``run()`` has
    /// started and the database answered): invalidations sent from then on reach this instance.
    public func waitUntilListening() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let ready = state.withLock { state -> Bool in
                if state.listening { return true }
                state.listenWaiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Listens on the backplane channel, reconnecting after a lost connection. After a
    /// reconnection, notifications sent meanwhile are lost: subscribers hear ``FleetInvalidation/all``
    /// so no first tier keeps an entry another instance purged.
    private func listen() async {
        var connectedBefore = false
        var pause = Duration.milliseconds(50)
        while !Task.isCancelled {
            do {
                try await migrateIfNeeded()
                try await client.withConnection { connection in
                    try await holdLiveness(on: connection)
                    // No unlock afterwards: the listener ends with its connection (lost, or
                    // closed at shutdown), which releases the lock; a query on it then was seen to
                    // hang the shutdown. A lock left on a pooled connection only keeps the old
                    // key looking alive: locks carrying it last their time to live.
                    defer { state.withLock { $0.livenessToken = nil } }
                    try await connection.listen(on: channel) { notifications in
                        let waiters = state.withLock { state in
                            state.listening = true
                            defer { state.listenWaiters = [] }
                            return state.listenWaiters
                        }
                        waiters.forEach { $0.resume() }
                        if connectedBefore { publish(.all) }
                        connectedBefore = true
                        pause = .milliseconds(50)
                        for try await notification in notifications {
                            if let invalidation = FleetInvalidation(message: notification.payload) { publish(invalidation) }
                        }
                    }
                }
            } catch {
                if Task.isCancelled { break }
                configuration.logger.debug("fleet store: backplane listener lost its connection (\(String(reflecting: type(of: error)))); retrying in \(pause)")
            }
            state.withLock { $0.listening = false }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
    }

    /// Keeps one pooled connection for second-tier reads (see ``read(_:timeout:)``), taking
    /// another after a failed read or a lost connection.
    private func keepReader() async {
        var pause = Duration.milliseconds(50)
        while !Task.isCancelled {
            do {
                try await migrateIfNeeded()
                try await client.withConnection { connection in
                    reader.hold(connection)
                    pause = .milliseconds(50)
                    // Until shutdown, the connection's end, or a failed read dropping it. (A wait
                    // on `closeFuture` could not be cancelled.)
                    while !Task.isCancelled, !connection.isClosed, reader.holds(connection) {
                        try? await Task.sleep(for: .milliseconds(100))
                    }
                    reader.drop(connection)
                }
            } catch {
                if Task.isCancelled { break }
                configuration.logger.debug("fleet store: read connection lost (\(String(reflecting: type(of: error)))); retrying in \(pause)")
            }
            try? await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
    }

    /// How often ``sweep()`` runs while the store runs.
    static let sweepInterval: Duration = .seconds(60)

    /// Sweeps every ``sweepInterval`` until shutdown; a failed sweep waits for the next one.
    private func keepSweeping() async {
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.sweepInterval)
            guard !Task.isCancelled else { return }
            do {
                try await sweep()
            } catch {
                configuration.logger.debug("fleet store: sweep failed (\(String(reflecting: type(of: error)))); trying again in \(Self.sweepInterval)")
            }
        }
    }

    /// Deletes what no read returns any more: expired entries, locks that ran out and
    /// invalidations older than ``FleetInvalidation/memory``. Reads skip them already; without a
    /// sweep the tables would only grow. Every instance sweeps; the deletes do not conflict.
    func sweep() async throws {
        try await withSchema {
            let memory = Int(nanoseconds(FleetInvalidation.memory) / 1_000_000)
            _ = try await client.query("DELETE FROM curlew_fleet_entries WHERE expires_at <= now()")
            _ = try await client.query("DELETE FROM curlew_fleet_locks WHERE expires_at <= now()")
            _ = try await client.query("DELETE FROM curlew_fleet_purges WHERE purged_at <= now() - \(memory) * interval '1 millisecond'")
        }
    }

    /// Takes this store's liveness lock, a session-level advisory lock on the listener's
    /// connection under a random key: PostgreSQL releases it the moment that connection ends —
    /// the process died, was killed, or lost the database — so the single-flight locks this store
    /// takes (which carry the key) are free for others at once rather than after their time to
    /// live (see ``tryLock(_:owner:ttl:)``). After a reconnection it takes the same key again
    /// when it can, so this store's locks count as alive again (between the two, another instance
    /// may take them: a second fetch, never a failed call).
    private func holdLiveness(on connection: PostgresConnection) async throws {
        let logger = configuration.logger
        let previous = state.withLock { $0.lastLivenessToken }
        for attempt in 0..<8 {
            let token = attempt == 0 ? previous ?? Int32.random(in: 1...Int32.max) : Int32.random(in: 1...Int32.max)
            for try await taken in try await connection.query("SELECT pg_try_advisory_lock(\(Self.livenessClass), \(token))", logger: logger).decode(Bool.self)
            where taken {
                state.withLock { state in
                    state.livenessToken = token
                    state.lastLivenessToken = token
                }
                return
            }
        }
        throw FleetStoreError("no free liveness lock key")
    }

    private func publish(_ invalidation: FleetInvalidation) {
        subscribers.publish(invalidation)
    }

    // MARK: Schema

    /// The migrations, in order; the schema's `curlew_fleet_version` table records how many ran.
    static let migrations: [[String]] = [
        [
            // The second tier: a cache, so UNLOGGED (no WAL; emptied after a crash).
            """
            CREATE UNLOGGED TABLE IF NOT EXISTS curlew_fleet_entries (
                key text PRIMARY KEY, tags text[] NOT NULL DEFAULT '{}', etag text, last_modified text,
                expires_at timestamptz, payload bytea NOT NULL, written_at timestamptz NOT NULL DEFAULT now())
            """,
            "CREATE INDEX IF NOT EXISTS curlew_fleet_entries_tags ON curlew_fleet_entries USING gin (tags)",
            "CREATE UNLOGGED TABLE IF NOT EXISTS curlew_fleet_locks (key text PRIMARY KEY, owner text NOT NULL, expires_at timestamptz NOT NULL)",
            // Limits and their leases survive a crash: logged.
            "CREATE TABLE IF NOT EXISTS curlew_fleet_limits (name text PRIMARY KEY, capacity integer NOT NULL)",
            """
            CREATE TABLE IF NOT EXISTS curlew_fleet_leases (
                name text NOT NULL, holder text NOT NULL, slots integer NOT NULL, wanted integer NOT NULL,
                expires_at timestamptz NOT NULL, PRIMARY KEY (name, holder))
            """,
        ],
        [
            // The key of the holder's liveness lock: a lock whose holder's connection has ended
            // is free before its time to live runs out.
            "ALTER TABLE curlew_fleet_locks ADD COLUMN IF NOT EXISTS holder_token integer"
        ],
        [
            // When an entry's request was sent, and the invalidations of the last hour: a write
            // never brings back an older answer (``write(_:)``).
            "ALTER TABLE curlew_fleet_entries ADD COLUMN IF NOT EXISTS requested_at timestamptz",
            """
            CREATE UNLOGGED TABLE IF NOT EXISTS curlew_fleet_purges (
                kind text NOT NULL, argument text NOT NULL, purged_at timestamptz NOT NULL DEFAULT now())
            """,
            // A hash index: a key of any length (a btree entry is limited to about 2.7 kB).
            "CREATE INDEX IF NOT EXISTS curlew_fleet_purges_keys ON curlew_fleet_purges USING hash (argument) WHERE kind = 'k'",
            "CREATE INDEX IF NOT EXISTS curlew_fleet_purges_time ON curlew_fleet_purges (purged_at)",
        ],
    ]

    /// Creates the schema and runs the migrations not yet applied, once per store: concurrent
    /// callers share one migration, which runs in a task of its own (a caller's cancellation
    /// never leaves a migration's transaction half done).
    public func migrateIfNeeded() async throws {
        let migration = state.withLock { state -> Task<Void, any Error>? in
            guard !state.migrated else { return nil }
            if let running = state.migration { return running }
            let task = Task { try await self.migrate() }
            state.migration = task
            return task
        }
        guard let migration else { return }
        do {
            try await migration.value
        } catch {
            state.withLock { $0.migration = nil }
            throw error
        }
    }

    private func migrate() async throws {
        let schema = configuration.schema
        // Quoted: a schema may be a keyword of SQL (`order`) or start with a digit. It holds
        // only lowercase ASCII letters, digits and `_` (``Configuration``), so quoting is exact.
        let quoted = "\"\(schema)\""
        let logger = configuration.logger
        try await client.withTransaction(logger: logger) { connection in
            // One instance migrates at a time; the others wait, then find nothing to do.
            try await connection.query("SELECT pg_advisory_xact_lock(hashtext(\(schema)))", logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE SCHEMA IF NOT EXISTS \(quoted)"), logger: logger)
            try await connection.query(PostgresQuery(unsafeSQL: "CREATE TABLE IF NOT EXISTS \(quoted).curlew_fleet_version (version integer NOT NULL)"), logger: logger)
            var applied = 0
            for try await (version) in try await connection.query(PostgresQuery(unsafeSQL: "SELECT version FROM \(quoted).curlew_fleet_version"), logger: logger).decode(Int.self) {
                applied = version
            }
            guard applied < Self.migrations.count else { return }
            for migration in Self.migrations.dropFirst(applied) {
                for statement in migration {
                    try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL search_path TO \(quoted)"), logger: logger)
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            }
            try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(quoted).curlew_fleet_version"), logger: logger)
            let count = Self.migrations.count
            try await connection.query("INSERT INTO \(unescaped: quoted).curlew_fleet_version (version) VALUES (\(count))", logger: logger)
        }
        state.withLock { state in
            state.migrated = true
            state.migration = nil
        }
    }

    /// Runs `body` once the schema is there. A missing table or schema (dropped, or lost with a
    /// crashed server's last transactions) makes the next call create it again.
    private func withSchema<Value: Sendable>(_ body: () async throws -> Value) async throws -> Value {
        try await migrateIfNeeded()
        do {
            return try await body()
        } catch {
            forgetSchemaIfMissing(error)
            throw error
        }
    }

    /// After an error saying the table or the schema is missing, the next call migrates again.
    private func forgetSchemaIfMissing(_ error: any Error) {
        if let error = error as? PSQLError, let code = error.serverInfo?[.sqlState], code == "42P01" || code == "3F000" {
            state.withLock { $0.migrated = false }
        }
    }

    // MARK: FleetStore

    /// The unexpired entry under `key`, or `nil`.
    public func read(_ key: String) async throws -> FleetEntry? {
        try await withSchema {
            for try await row in try await client.execute(ReadEntry(key: key)) {
                return ReadEntry.entry(key: key, row: row)
            }
            return nil
        }
    }

    /// The unexpired entry under `key`, or `nil`; throws ``FleetStoreError/timedOut`` once
    /// `timeout` has passed without an answer.
    ///
    /// The hot path of a second-tier hit. When no other read runs on it, the read goes to the
    /// store's read connection: one pooled connection kept for reads (postgres-nio prepares the
    /// read on it once), so no pool lease per read; the timeout is a timer on that connection's event loop
    /// rather than a task of its own. Otherwise (a read already running there, the connection
    /// not ready yet) it reads through the pool under a soft timeout.
    public func read(_ key: String, timeout: Duration) async throws -> FleetEntry? {
        guard let connection = reader.claim() else { return try await readUnderSoftTimeout(self, key, timeout) }
        let reader = reader
        let logger = configuration.logger
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<FleetEntry?, any Error>, Never>) in
            let once = ResumeOnce(continuation)
            let timer = connection.eventLoop.scheduleTask(in: .nanoseconds(nanoseconds(timeout))) { once.resume(.failure(FleetStoreError.timedOut)) }
            // The read runs on after a timeout; its late answer is dropped, but it still frees
            // the connection for the next read.
            Task {
                do {
                    var entry: FleetEntry?
                    for try await row in try await connection.execute(ReadEntry(key: key), logger: logger) {
                        entry = ReadEntry.entry(key: key, row: row)
                    }
                    reader.release()
                    if once.resume(.success(entry)) { timer.cancel() }
                } catch {
                    // The next read takes another connection and prepares again (a dropped
                    // table invalidates the statement).
                    reader.drop(connection)
                    if once.resume(.failure(error)) { timer.cancel() }
                }
            }
        }
        do {
            return try outcome.get()
        } catch {
            forgetSchemaIfMissing(error)
            throw error
        }
    }

    /// Stores the entry, replacing any previous one under its key, unless that would bring back
    /// an older answer (see ``FleetStore/write(_:)``): in one statement, the insert is skipped when
    /// a remembered invalidation covers the entry and came after its request, and the update when
    /// the stored entry was requested later.
    /// - Throws: ``FleetStoreError/refused(_:)`` when PostgreSQL refuses the entry itself (a
    ///   key or tags too long to index, a NUL character in text); the error of postgres-nio
    ///   otherwise.
    public func write(_ entry: FleetEntry) async throws {
        try await withSchema {
            let requested = entry.requestedAt
            let query: PostgresQuery = try """
            INSERT INTO curlew_fleet_entries (key, tags, etag, last_modified, expires_at, payload, written_at, requested_at)
            SELECT \(entry.key), \(entry.tags), \(entry.etag), \(entry.lastModified), \(entry.expiresAt), \(entry.payload), now(), \(requested)
            WHERE \(requested)::timestamptz IS NULL OR NOT EXISTS (
                SELECT 1 FROM curlew_fleet_purges p
                WHERE p.purged_at > \(requested) AND (
                    (p.kind = 'k' AND p.argument = \(entry.key)) OR p.kind = '*'
                    OR (p.kind = 'p' AND starts_with(\(entry.key), p.argument)) OR (p.kind = 't' AND p.argument = ANY(\(entry.tags)::text[]))))
            ON CONFLICT (key) DO UPDATE SET tags = EXCLUDED.tags, etag = EXCLUDED.etag, last_modified = EXCLUDED.last_modified,
                expires_at = EXCLUDED.expires_at, payload = EXCLUDED.payload, written_at = EXCLUDED.written_at, requested_at = EXCLUDED.requested_at
            WHERE curlew_fleet_entries.requested_at IS NULL OR EXCLUDED.requested_at IS NULL
                OR curlew_fleet_entries.requested_at <= EXCLUDED.requested_at
            """
            do {
                try await client.query(query)
            } catch let error as PSQLError where Self.isRefusal(error) {
                throw FleetStoreError.refused("PostgreSQL refused the entry (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))")
            }
        }
    }

    /// Whether PostgreSQL refused a statement for the values it carries — a data exception
    /// (class 22: a NUL in text, a payload too long) or a program limit (class 54: an index row
    /// too large) — rather than for being unreachable or broken.
    static func isRefusal(_ error: PSQLError) -> Bool {
        guard let state = error.serverInfo?[.sqlState] else { return false }
        return state.hasPrefix("22") || state.hasPrefix("54")
    }

    /// Removes the matching entries and tells every subscriber.
    public func invalidate(_ target: FleetInvalidation) async throws {
        try await withSchema {
            // A NOTIFY payload holds at most 7,999 bytes: a longer invalidation (a long key or
            // prefix) is announced as `*`, which evicts more from the first tiers but never less.
            let message = target.message.utf8.count < 8_000 ? target.message : FleetInvalidation.all.message
            let (kind, argument): (String, String) =
                switch target {
                case .key(let key): ("k", key)
                case .prefix(let prefix): ("p", prefix)
                case .tag(let tag): ("t", tag)
                case .all: ("*", "")
                }
            let delete =
                switch target {
                case .key: "DELETE FROM curlew_fleet_entries WHERE key = $2"
                case .prefix: "DELETE FROM curlew_fleet_entries WHERE starts_with(key, $2)"
                case .tag: "DELETE FROM curlew_fleet_entries WHERE tags @> ARRAY[$2]::text[]"
                case .all: "DELETE FROM curlew_fleet_entries WHERE $2::text IS NOT NULL"
                }
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(kind)
            bindings.append(argument)
            bindings.append(channel)
            bindings.append(message)
            // One statement: the rows go, the invalidation is remembered for later writes, and
            // the notification leaves when it commits.
            let sql = """
                WITH gone AS (\(delete)), noted AS (INSERT INTO curlew_fleet_purges (kind, argument) VALUES ($1, $2))
                SELECT pg_notify($3, $4)
                """
            try await client.query(PostgresQuery(unsafeSQL: sql, binds: bindings))
        }
    }

    /// A new subscription to every instance's invalidations.
    public func invalidations() -> AsyncStream<FleetInvalidation> {
        subscribers.subscribe()
    }

    /// Takes the lock unless another owner holds an unexpired one whose store is alive; returns
    /// whether `owner` holds it.
    ///
    /// A lock carries the key of its store's liveness lock (a session-level advisory lock on the
    /// store's listener connection, taken by ``run()``): once that connection has ended — the
    /// holder's process died or was killed — PostgreSQL has released the advisory lock and the
    /// lock is free at once, whatever its time to live. A lock taken while the store's listener
    /// is not connected carries no key and lasts its time to live.
    public func tryLock(_ key: String, owner: String, ttl: Duration) async throws -> Bool {
        try await withSchema {
            let milliseconds = Int(nanoseconds(ttl) / 1_000_000)
            let token = state.withLock { $0.livenessToken }
            let query: PostgresQuery = """
                INSERT INTO curlew_fleet_locks (key, owner, expires_at, holder_token)
                VALUES (\(key), \(owner), now() + \(milliseconds) * interval '1 millisecond', \(token))
                ON CONFLICT (key) DO UPDATE SET owner = EXCLUDED.owner, expires_at = EXCLUDED.expires_at, holder_token = EXCLUDED.holder_token
                WHERE curlew_fleet_locks.expires_at <= now() OR curlew_fleet_locks.owner = EXCLUDED.owner
                    OR (curlew_fleet_locks.holder_token IS NOT NULL AND NOT EXISTS (
                        SELECT 1 FROM pg_locks l
                        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
                            AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
                            AND l.classid = \(Self.livenessClass)::oid AND l.objid = curlew_fleet_locks.holder_token::oid))
                RETURNING owner
                """
            do {
                for try await _ in try await client.query(query) { return true }
                return false
            } catch let error as PSQLError where Self.isRefusal(error) {
                throw FleetStoreError.refused("PostgreSQL refused the lock (SQLSTATE \(error.serverInfo?[.sqlState] ?? "?"))")
            }
        }
    }

    /// Gives the lock back when `owner` holds it.
    public func unlock(_ key: String, owner: String) async throws {
        try await withSchema {
            _ = try await client.query("DELETE FROM curlew_fleet_locks WHERE key = \(key) AND owner = \(owner)")
        }
    }

    /// Renews `holder`'s lease (see ``FleetStore/lease(_:capacity:holder:wanted:inUse:ttl:)``).
    public func lease(_ limit: String, capacity: Int, holder: String, wanted: Int, inUse: Int, ttl: Duration) async throws -> FleetLease {
        try await withSchema {
            let milliseconds = Int(nanoseconds(ttl) / 1_000_000)
            let logger = configuration.logger
            return try await client.withTransaction(logger: logger) { connection in
                // The limit's row is the lock that orders concurrent lease changes.
                try await connection.query(
                    """
                    INSERT INTO curlew_fleet_limits (name, capacity) VALUES (\(limit), \(capacity))
                    ON CONFLICT (name) DO UPDATE SET capacity = EXCLUDED.capacity
                    """, logger: logger)
                try await connection.query("DELETE FROM curlew_fleet_leases WHERE name = \(limit) AND expires_at <= now()", logger: logger)
                var othersHeld = 0
                var othersWanting = 0
                var holders = 1
                let rows = try await connection.query("SELECT slots, wanted FROM curlew_fleet_leases WHERE name = \(limit) AND holder <> \(holder)", logger: logger)
                for try await (slots, otherWanted) in rows.decode((Int, Int).self) {
                    othersHeld += slots
                    if otherWanted > 0 { othersWanting += 1 }
                    holders += 1
                }
                let granted = FleetLeaseRules.grant(capacity: capacity, wanted: wanted, othersHeld: othersHeld, othersWanting: othersWanting)
                try await connection.query(
                    """
                    INSERT INTO curlew_fleet_leases (name, holder, slots, wanted, expires_at)
                    VALUES (\(limit), \(holder), \(max(granted, inUse)), \(wanted), now() + \(milliseconds) * interval '1 millisecond')
                    ON CONFLICT (name, holder) DO UPDATE SET slots = EXCLUDED.slots, wanted = EXCLUDED.wanted, expires_at = EXCLUDED.expires_at
                    """, logger: logger)
                return FleetLease(granted: granted, holders: holders)
            }
        }
    }
}

/// The second-tier read, prepared once per connection (the hot path: one round trip, no parse).
struct ReadEntry: PostgresPreparedStatement {
    static let name = "curlew_fleet_read_v2"
    static let sql = """
        SELECT payload, tags, etag, last_modified, expires_at, requested_at FROM curlew_fleet_entries
        WHERE key = $1 AND (expires_at IS NULL OR expires_at > now())
        """
    typealias Row = (Data, [String], String?, String?, Date?, Date?)

    var key: String

    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(key)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row {
        try row.decode(Row.self)
    }

    static func entry(key: String, row: Row) -> FleetEntry {
        FleetEntry(key: key, tags: row.1, etag: row.2, lastModified: row.3, expiresAt: row.4, payload: row.0, requestedAt: row.5)
    }
}

/// The connection reads prefer: one read at a time on it, the others go through the pool.
/// `Sendable` through the `Mutex` guarding its ``State``.
final class ReadConnection: Sendable {
    private struct State {
        var connection: PostgresConnection?
        var busy = false
    }

    private let state = Mutex(State())

    /// The connection when it is ready and no read runs on it; the caller gives it back with
    /// ``release()`` or ``drop(_:)``.
    func claim() -> PostgresConnection? {
        state.withLock { state in
            guard !state.busy, let connection = state.connection, !connection.isClosed else { return nil }
            state.busy = true
            return connection
        }
    }

    func release() {
        state.withLock { $0.busy = false }
    }

    /// From now on reads use `connection`.
    func hold(_ connection: PostgresConnection) {
        state.withLock { $0 = State(connection: connection) }
    }

    /// Whether reads still use `connection`.
    func holds(_ connection: PostgresConnection) -> Bool {
        state.withLock { $0.connection === connection }
    }

    /// Reads stop using `connection` (its holder gives it back to the pool).
    func drop(_ connection: PostgresConnection) {
        state.withLock { state in
            if state.connection === connection { state = State() }
        }
    }
}
