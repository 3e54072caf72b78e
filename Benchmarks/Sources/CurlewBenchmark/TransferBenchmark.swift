import AsyncHTTPClient
import CLibcurlShim
import Curlew
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// The transfer benchmark (issue 10): one large download or upload per round, in a process of
/// its own so that its peak resident memory belongs to one client.
///
/// ```
/// CurlewBenchmark transfer --kind curlew-download-disk \
///     --download-url http://127.0.0.1:18089/static/64m.bin --upload-url http://127.0.0.1:18089/upload \
///     [--expected-bytes 67108864] [--rounds 3]
/// ```
///
/// Prints one Markdown row: kind, bytes, MB/s (10⁶ bytes per second, median of the rounds, and
/// every round), the median process CPU time of a round in ms, resident memory before the first round and the process's peak (`ru_maxrss`).
enum TransferBenchmark {
    enum Kind: String, CaseIterable {
        case curlewDownloadDisk = "curlew-download-disk"
        case curlewDownloadMemory = "curlew-download-memory"
        case curlewUploadMultipart = "curlew-upload-multipart"
        case libcurlDownloadFile = "libcurl-download-file"
        case libcurlDownloadMemory = "libcurl-download-memory"
        case libcurlUploadMultipart = "libcurl-upload-multipart"
        case ahcDownloadFile = "ahc-download-file"
        case urlSessionDownload = "urlsession-download"
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(arguments: [String]) async throws {
        var kind: Kind?
        var downloadURL = "http://127.0.0.1:18089/static/64m.bin"
        var uploadURL = "http://127.0.0.1:18089/upload"
        var expected = 64 << 20
        var rounds = 3
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw Failure(description: "\(flag) needs a value") }
            switch flag {
            case "--kind":
                guard let parsed = Kind(rawValue: value) else {
                    throw Failure(description: "unknown kind \(value); one of \(Kind.allCases.map(\.rawValue).joined(separator: ","))")
                }
                kind = parsed
            case "--download-url": downloadURL = value
            case "--upload-url": uploadURL = value
            case "--expected-bytes": expected = Int(value) ?? expected
            case "--rounds": rounds = max(1, Int(value) ?? rounds)
            default: throw Failure(description: "unknown argument \(flag)")
            }
        }
        guard let kind else { throw Failure(description: "--kind is required") }

        let work = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-bench-transfer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: work) }
        // The upload source: `expected` pseudo-random bytes written in 1 MiB pieces (so making it
        // does not raise the peak resident memory much).
        let source = work.appendingPathComponent("upload.bin")
        if kind == .curlewUploadMultipart || kind == .libcurlUploadMultipart {
            _ = FileManager.default.createFile(atPath: source.path, contents: nil)
            let handle = try FileHandle(forWritingTo: source)
            var generator = SystemRandomNumberGenerator()
            var written = 0
            while written < expected {
                let count = min(1 << 20, expected - written)
                handle.write(Data((0..<count / 8 + 1).flatMap { _ in withUnsafeBytes(of: generator.next() as UInt64, Array.init) }.prefix(count)))
                written += count
            }
            try handle.close()
        }

        let rssBefore = residentKiB()
        var seconds: [Double] = []
        /// Process CPU time (user + system, every thread) of each round, in milliseconds.
        var cpuMilliseconds: [Double] = []
        var cpuStart: UInt64 = 0
        func elapsed(since start: UInt64) -> Double {
            cpuMilliseconds.append(Double(ProcessCPUTime.microseconds() - cpuStart) / 1000)
            return Double(MonotonicClock.nanoseconds() - start) / 1e9
        }
        switch kind {
        case .curlewDownloadDisk, .curlewDownloadMemory, .curlewUploadMultipart:
            let transport = CurlTransport()
            let client = APIClient(configuration: ClientConfiguration(), transport: transport)
            for round in 0..<rounds {
                cpuStart = ProcessCPUTime.microseconds()
                let start = MonotonicClock.nanoseconds()
                switch kind {
                case .curlewDownloadDisk:
                    let target = work.appendingPathComponent("download-\(round).bin")
                    let file = try await client.download(BulkDataRequest(path: downloadURL), to: target)
                    guard file.length == Int64(expected) else { throw Failure(description: "downloaded \(file.length) bytes") }
                    seconds.append(elapsed(since: start))
                    try FileManager.default.removeItem(at: target)
                case .curlewDownloadMemory:
                    let response = try await client.response(for: BulkDataRequest(path: downloadURL)) { $0.maximumBodySize = 128 << 20 }
                    guard response.value.count == expected else { throw Failure(description: "received \(response.value.count) bytes") }
                    seconds.append(elapsed(since: start))
                default:
                    let response = try await client.response(for: MultipartUploadRequest(path: uploadURL, file: source.path))
                    guard response.status.code == 204 else { throw Failure(description: "status \(response.status.code)") }
                    seconds.append(elapsed(since: start))
                }
            }
            await transport.shutdown()
        case .libcurlDownloadFile, .libcurlDownloadMemory, .libcurlUploadMultipart:
            for round in 0..<rounds {
                cpuStart = ProcessCPUTime.microseconds()
                let start = MonotonicClock.nanoseconds()
                let target = work.appendingPathComponent("download-\(round).bin")
                let bytes = try rawLibcurl(kind: kind, url: kind == .libcurlUploadMultipart ? uploadURL : downloadURL, file: target.path, source: source.path)
                seconds.append(elapsed(since: start))
                guard kind == .libcurlUploadMultipart || bytes == expected else { throw Failure(description: "received \(bytes) bytes") }
                try? FileManager.default.removeItem(at: target)
            }
        case .ahcDownloadFile:
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            for round in 0..<rounds {
                let target = work.appendingPathComponent("download-\(round).bin")
                cpuStart = ProcessCPUTime.microseconds()
                let start = MonotonicClock.nanoseconds()
                let delegate = try FileDownloadDelegate(path: target.path)
                let request = try HTTPClient.Request(url: downloadURL)
                let progress = try await client.execute(request: request, delegate: delegate).futureResult.get()
                seconds.append(elapsed(since: start))
                guard progress.receivedBytes == expected else { throw Failure(description: "received \(progress.receivedBytes) bytes") }
                try FileManager.default.removeItem(at: target)
            }
            try await client.shutdown()
        case .urlSessionDownload:
            let session = URLSession(configuration: .ephemeral)
            guard let url = URL(string: downloadURL) else { throw Failure(description: "bad URL") }
            for _ in 0..<rounds {
                cpuStart = ProcessCPUTime.microseconds()
                let start = MonotonicClock.nanoseconds()
                let size: Int = try await withCheckedThrowingContinuation { continuation in
                    session.downloadTask(with: url) { location, _, error in
                        if let error { return continuation.resume(throwing: error) }
                        guard let location else { return continuation.resume(throwing: Failure(description: "no file")) }
                        let size = (try? FileManager.default.attributesOfItem(atPath: location.path)[.size] as? Int) ?? -1
                        try? FileManager.default.removeItem(at: location)
                        continuation.resume(returning: size)
                    }.resume()
                }
                seconds.append(elapsed(since: start))
                guard size == expected else { throw Failure(description: "downloaded \(size) bytes") }
            }
            session.invalidateAndCancel()
        }

        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let rates = seconds.map { Double(expected) / $0 / 1e6 }
        let median = rates.sorted()[rates.count / 2]
        let rounded = rates.map { Report.format($0, decimals: 0) }.joined(separator: ", ")
        let cpu = cpuMilliseconds.sorted()[cpuMilliseconds.count / 2]
        print("| \(kind.rawValue) | \(expected) | \(Report.format(median, decimals: 0)) | \(rounded) | \(Report.format(cpu, decimals: 0)) | \(Report.format(Double(rssBefore) / 1024, decimals: 1)) | \(Report.format(Double(usage.ru_maxrss) / 1024, decimals: 1)) |")
    }

    /// `VmRSS` of this process in KiB.
    private static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }

    /// One transfer with a plain easy handle and `curl_easy_perform`: a download written to a
    /// file with libcurl's default write function (`fwrite` to a `FILE *`), a download counted
    /// (`libcurl-download-memory`: bytes counted, not kept — the floor for receiving), or a
    /// multipart upload with `curl_mime_filedata` (libcurl reads the file itself). Returns the
    /// bytes received.
    private static func rawLibcurl(kind: Kind, url: String, file: String, source: String) throws -> Int {
        _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let easy = curl_easy_init() else { throw Failure(description: "curl_easy_init") }
        defer { curl_easy_cleanup(easy) }
        _ = bench_easy_setopt_string(easy, CURLOPT_URL, url)
        _ = bench_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        _ = bench_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1)
        let counted = UnsafeMutablePointer<Int>.allocate(capacity: 1)
        counted.initialize(to: 0)
        defer { counted.deallocate() }
        var output: UnsafeMutablePointer<FILE>?
        var mime: OpaquePointer?
        switch kind {
        case .libcurlDownloadFile:
            output = fopen(file, "wb")
            guard let output else { throw Failure(description: "fopen") }
            _ = bench_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, UnsafeMutableRawPointer(output))
        case .libcurlDownloadMemory:
            _ = bench_easy_count_body(easy, counted)
        default:
            mime = curl_mime_init(easy)
            let part = curl_mime_addpart(mime)
            _ = curl_mime_name(part, "file")
            _ = curl_mime_filedata(part, source)
            _ = bench_easy_setopt_pointer(easy, CURLOPT_MIMEPOST, UnsafeMutableRawPointer(mime))
            _ = bench_easy_count_body(easy, counted)
        }
        let result = curl_easy_perform(easy)
        if let output { fclose(output) }
        if let mime { curl_mime_free(mime) }
        guard result == CURLE_OK else { throw Failure(description: String(cString: curl_easy_strerror(result))) }
        var status = 0
        _ = bench_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
        guard status == (kind == .libcurlUploadMultipart ? 204 : 200) else { throw Failure(description: "status \(status)") }
        if kind == .libcurlDownloadFile {
            let size = (try? FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? -1
            return size
        }
        return counted.pointee
    }
}

/// `GET <url>` of a large body.
struct BulkDataRequest: Endpoint {
    typealias Response = Data
    let path: String
}

/// `POST <url>` of a multipart form with one file part streamed from disk.
struct MultipartUploadRequest: Endpoint {
    typealias Response = Data
    let path: String
    let file: String
    var method: HTTPRequest.Method { .post }
    var body: RequestPayload? {
        var form = MultipartForm()
        form.append(fileAt: file, name: "file", fileName: "upload.bin", contentType: "application/octet-stream")
        return .multipart(form)
    }
}
