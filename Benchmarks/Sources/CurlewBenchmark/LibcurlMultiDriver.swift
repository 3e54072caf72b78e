import CLibcurlShim
import Foundation

/// Raw libcurl as a floor for Curlew: one multi handle and `concurrency` easy handles created
/// once and re-added after each transfer, driven with `curl_multi_perform`/`curl_multi_poll` on
/// one dedicated thread. Only the URL, HTTP/1.1, `NOSIGNAL` and a byte-counting write callback
/// are set (and a connection cache as large as Curlew's), so it does about the least work a
/// libcurl-based client can do per request.
///
/// Thread-safety (why `@unchecked Sendable` is sound): the handles and counters are touched only
/// inside ``drive(requests:concurrency:)``, which runs the loop on a new thread and suspends its
/// caller until that thread is done, and in ``shutdown()``; calls are sequential (see
/// ``LoadDriver``), and thread start and continuation resumption order the accesses.
final class LibcurlMultiDriver: LoadDriver, @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let handles: [UnsafeMutableRawPointer]
    private let bodyBytes: UnsafeMutablePointer<Int>
    private let startTimes: UnsafeMutablePointer<UInt64>
    private let check: ResponseCheck
    /// Curlew's two request header lines, when the driver sends Curlew's wire (`likeCurlew`).
    private let headerList: UnsafeMutablePointer<curl_slist>?
    /// Header bytes received per slot (counted only with `likeCurlew`).
    private let headerBytes: UnsafeMutablePointer<Int>

    /// - Parameter likeCurlew: Send what a Curlew request sends and receive the head through a
    ///   header callback, with Curlew's default timeouts and body limit (``ClientKind/libcurlCurlewWire``):
    ///   the libcurl work any client that behaves like Curlew pays, without any Swift.
    init(url: String, concurrency: Int, expectedBytes: Int?, caFile: String? = nil, http2: Bool = false, likeCurlew: Bool = false) throws {
        guard Self.globalInitialized, let multi = curl_multi_init() else {
            throw SetupError(message: "libcurl could not be initialised")
        }
        self.multi = multi
        // Keep every connection cached, as Curlew's default (128) does. libcurl's own default
        // (4 × the handles added at that moment) shrinks while the batch winds down and would
        // close connections between the warm-up and the measured batch.
        _ = bench_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(128, concurrency))
        self.check = ResponseCheck(expectedBytes: expectedBytes)
        bodyBytes = .allocate(capacity: concurrency)
        bodyBytes.initialize(repeating: 0, count: concurrency)
        startTimes = .allocate(capacity: concurrency)
        startTimes.initialize(repeating: 0, count: concurrency)
        let headerCounters = UnsafeMutablePointer<Int>.allocate(capacity: concurrency)
        headerCounters.initialize(repeating: 0, count: concurrency)
        headerBytes = headerCounters
        let headerList = likeCurlew ? curl_slist_append(curl_slist_append(nil, "User-Agent: Curlew"), "Accept-Encoding: gzip, deflate, br, zstd") : nil
        self.headerList = headerList
        var handles: [UnsafeMutableRawPointer] = []
        for slot in 0..<concurrency {
            guard let easy = curl_easy_init() else { break }
            handles.append(easy)
            // Over https: the test CA, and HTTP/2 by ALPN waiting for a multiplexed connection
            // (as Curlew does) when asked.
            let tls = caFile.map { bench_easy_setopt_string(easy, CURLOPT_CAINFO, $0) == CURLE_OK } ?? true
            let version = http2
                ? bench_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS) == CURLE_OK
                    && bench_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1) == CURLE_OK
                : bench_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1) == CURLE_OK
            let configured = bench_easy_setopt_string(easy, CURLOPT_URL, url) == CURLE_OK
                && tls && version
                && bench_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1) == CURLE_OK
                && bench_easy_setopt_pointer(easy, CURLOPT_PRIVATE, UnsafeMutableRawPointer(bitPattern: slot + 1)) == CURLE_OK
                && bench_easy_count_body(easy, bodyBytes + slot) == CURLE_OK
                && (headerList.map { bench_easy_like_curlew(easy, $0, headerCounters + slot) == CURLE_OK } ?? true)
            guard configured else { break }
        }
        self.handles = handles
        guard handles.count == concurrency else {
            shutdownNow()
            throw SetupError(message: "could not create and configure \(concurrency) easy handles")
        }
    }

    /// `curl_global_init` once per process (Curlew does its own; libcurl counts the calls).
    private static let globalInitialized = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK

    func drive(requests: Int, concurrency: Int) async -> BatchSample {
        precondition(concurrency == handles.count, "a libcurl driver runs at the concurrency it was created with")
        return await withCheckedContinuation { (continuation: CheckedContinuation<BatchSample, Never>) in
            let thread = Thread { [self] in
                continuation.resume(returning: runLoop(requests: requests))
            }
            thread.name = "libcurl-multi"
            thread.start()
        }
    }

    func shutdown() async {
        shutdownNow()
    }

    private func shutdownNow() {
        for easy in handles { curl_easy_cleanup(easy) }
        curl_multi_cleanup(multi)
        bodyBytes.deallocate()
        startTimes.deallocate()
        headerBytes.deallocate()
        curl_slist_free_all(headerList)
    }

    /// The whole batch on the calling thread: keep every handle busy until `requests` are done.
    private func runLoop(requests: Int) -> BatchSample {
        var sample = BatchSample(reservingCapacity: requests)
        var issued = 0
        var completed = 0
        /// Starts the next request of the batch on `slot`; a request libcurl refuses counts as failed.
        func start(_ slot: Int) {
            while issued < requests {
                bodyBytes[slot] = 0
                startTimes[slot] = MonotonicClock.nanoseconds()
                issued += 1
                let added = curl_multi_add_handle(multi, handles[slot])
                if added == CURLM_OK { return }
                completed += 1
                sample.record(latency: 0, failure: "curl_multi_add_handle: \(String(cString: curl_multi_strerror(added)))")
            }
        }
        for slot in 0..<min(handles.count, requests) { start(slot) }

        var running: Int32 = 0
        var queued: Int32 = 0
        while completed < requests {
            _ = curl_multi_perform(multi, &running)
            while let message = curl_multi_info_read(multi, &queued) {
                guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
                var privateData: UnsafeMutableRawPointer? = nil
                _ = bench_easy_getinfo_pointer(easy, CURLINFO_PRIVATE, &privateData)
                let slot = Int(bitPattern: privateData) - 1
                let result = message.pointee.data.result
                curl_multi_remove_handle(multi, easy)
                guard handles.indices.contains(slot) else { continue }
                let failure: String?
                if result == CURLE_OK {
                    var status = 0
                    _ = bench_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
                    failure = check.failure(status: status, bodyBytes: bodyBytes[slot])
                } else {
                    failure = String(cString: curl_easy_strerror(result))
                }
                sample.record(latency: MonotonicClock.nanoseconds() - startTimes[slot], failure: failure)
                completed += 1
                start(slot)
            }
            if completed < requests { _ = curl_multi_poll(multi, nil, 0, 1000, nil) }
        }
        return sample
    }

    /// libcurl refused to set up.
    struct SetupError: Error {
        let message: String
    }
}
