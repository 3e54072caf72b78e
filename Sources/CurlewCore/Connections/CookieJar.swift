internal import CCurlShim
internal import Foundation
internal import Synchronization

/// Cookies kept between requests by libcurl's cookie engine: scoped by domain and path,
/// `Secure` cookies sent over https only, a cookie for one site never sent to another, expiry
/// honoured. In memory, or persisted to a file (mode 0600) that a later process loads.
///
/// A client uses one through ``ConnectionOptions/cookies``; give the same jar to several clients
/// to share a session between them, and empty it on logout:
///
/// ```swift
/// let jar = try CookieJar(persistingTo: "/var/lib/myservice/cookies.txt")
/// var options = TransferOptions()
/// options.connection.cookies = jar
/// let client = APIClient(configuration: ClientConfiguration(baseURL: "https://shop.example", transferOptions: options))
/// // …
/// try jar.removeAll() // logout
/// ```
///
/// The jar is a libcurl share handle (`CURLSH`, `CURL_LOCK_DATA_COOKIE`) attached to each
/// exchange, so libcurl itself decides which cookies a request carries and which `Set-Cookie`
/// headers it accepts (a `Secure` cookie only from https, a `Domain` only for the responding
/// host's own domain and never a public suffix).
public final class CookieJar: Sendable, Hashable, CustomStringConvertible {
    /// The file the jar is persisted to; `nil` for a jar in memory.
    public let path: String?
    package let share: CookieShare
    /// The jar's own easy handle (attached to the share, used for listing, loading and clearing)
    /// as a bit pattern, and the file's last written contents; both guarded by the mutex.
    private let state: Mutex<State>

    private struct State {
        var handle: UInt
        var savedLines: [CookieFile.CookieLine]?
    }

    /// An empty jar in memory.
    public convenience init() {
        self.init(path: nil)
    }

    /// A jar persisted to `path`: it starts with the cookies in that file (if it exists), and the
    /// file is rewritten (a new file with mode 0600, renamed into place) after every exchange
    /// that changed the cookies, by ``save()`` and by ``removeAll()``.
    /// - Throws: ``CurlewError/Code/fileUnreadable`` when the file exists but cannot be read or
    ///   is not a regular file.
    public convenience init(persistingTo path: String) throws(CurlewError) {
        self.init(path: path)
        let fileLines = try CookieFile.read(path)
        try withHandle { handle throws(CurlewError) in
            for line in fileLines {
                let cString = line.map { CChar(bitPattern: $0) } + [0]
                guard curlew_easy_setopt_string(handle, CURLOPT_COOKIELIST, cString) == CURLE_OK else {
                    throw CurlewError(code: .fileUnreadable, message: "the cookie file \(path) has a line libcurl refuses")
                }
            }
        }
        let loaded = lines()
        state.withLock { $0.savedLines = loaded }
    }

    private init(path: String?) {
        self.path = path
        self.share = CookieShare()
        var handle: UInt = 0
        if share.share != nil, let easy = curl_easy_init() {
            _ = curlew_easy_setopt_pointer(easy, CURLOPT_SHARE, share.share)
            handle = UInt(bitPattern: easy)
        }
        self.state = Mutex(State(handle: handle, savedLines: nil))
    }

    deinit {
        state.withLock { state in
            guard let handle = UnsafeMutableRawPointer(bitPattern: state.handle) else { return }
            _ = curlew_easy_setopt_pointer(handle, CURLOPT_SHARE, nil)
            curl_easy_cleanup(handle)
        }
    }

    /// Every cookie in the jar, expired ones dropped.
    public func cookies() -> [StoredCookie] {
        lines().compactMap { StoredCookie(netscapeLine: Substring(decoding: $0, as: UTF8.self)) }
    }

    /// Forgets every cookie (logout) and, for a persisted jar, empties its file.
    /// - Throws: ``CurlewError/Code/fileNotWritable`` when the file cannot be rewritten.
    public func removeAll() throws(CurlewError) {
        try withHandle { handle throws(CurlewError) in
            guard curlew_easy_setopt_string(handle, CURLOPT_COOKIELIST, "ALL") == CURLE_OK else {
                throw CurlewError(code: .transportFailure, message: "libcurl could not clear the cookie jar")
            }
        }
        try save()
    }

    /// Writes the cookies to the jar's file now, if they changed since the last write (a
    /// persisted jar also does this after every exchange). Does nothing for a jar in memory.
    /// - Throws: ``CurlewError/Code/fileNotWritable`` when the file cannot be written.
    public func save() throws(CurlewError) {
        guard let path else { return }
        // Read and written under one lock: two exchanges ending at once never write an older
        // list over a newer one.
        try state.withLock { state throws(CurlewError) in
            guard let handle = UnsafeMutableRawPointer(bitPattern: state.handle) else {
                throw CurlewError(code: .transportFailure, message: "libcurl could not create the cookie jar")
            }
            let current = Self.lines(of: handle)
            guard state.savedLines != current else { return }
            try CookieFile.write(current, to: path)
            state.savedLines = current
        }
    }

    /// After an exchange with this jar: persists what changed; a write failure waits for the
    /// next exchange or ``save()``, which reports it.
    package func exchangeEnded() {
        guard path != nil else { return }
        try? save()
    }

    /// The live cookies in libcurl's Netscape format, one a line.
    private func lines() -> [CookieFile.CookieLine] {
        (try? withHandle { handle in Self.lines(of: handle) }) ?? []
    }

    /// `CURLINFO_COOKIELIST` without the cookies that have expired: libcurl keeps a cookie the
    /// server deleted (`Max-Age=0`) in its list, expired, until a later request purges it.
    /// Called under the state's lock.
    private static func lines(of handle: UnsafeMutableRawPointer) -> [CookieFile.CookieLine] {
        var raw: UnsafeMutableRawPointer?
        guard curlew_easy_getinfo_pointer(handle, CURLINFO_COOKIELIST, &raw) == CURLE_OK, let raw else { return [] }
        let list = raw.assumingMemoryBound(to: curl_slist.self)
        defer { curl_slist_free_all(list) }
        let now = Int64(Date().timeIntervalSince1970)
        var lines: [CookieFile.CookieLine] = []
        var node: UnsafeMutablePointer<curl_slist>? = list
        while let current = node {
            if let data = current.pointee.data {
                let line = Array(UnsafeRawBufferPointer(start: data, count: strlen(data)))
                if !isExpired(line, now: now) { lines.append(line) }
            }
            node = current.pointee.next
        }
        return lines
    }

    /// Whether a Netscape line's expiry (its fifth field; 0 for a session cookie) has passed.
    private static func isExpired(_ line: CookieFile.CookieLine, now: Int64) -> Bool {
        let fields = line.split(separator: UInt8(ascii: "\t"), maxSplits: 5, omittingEmptySubsequences: false)
        guard fields.count > 4, let expiry = Int64(String(decoding: fields[4], as: UTF8.self)) else { return false }
        return expiry != 0 && expiry <= now
    }

    private func withHandle<T>(_ body: (UnsafeMutableRawPointer) throws(CurlewError) -> T) throws(CurlewError) -> T {
        try state.withLock { state throws(CurlewError) -> T in
            guard let handle = UnsafeMutableRawPointer(bitPattern: state.handle) else {
                throw CurlewError(code: .transportFailure, message: "libcurl could not create the cookie jar")
            }
            return try body(handle)
        }
    }

    /// The file, or "in memory" — never a cookie.
    public var description: String { "CookieJar(\(path ?? "in memory"))" }

    /// Jars are equal when they are the same jar.
    public static func == (lhs: CookieJar, rhs: CookieJar) -> Bool { lhs === rhs }

    /// Hashes the jar's identity.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
