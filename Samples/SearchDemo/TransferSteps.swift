import Curlew
import Foundation
import HTTPTypes
import LoopbackServer

/// The demo server's routes for the files tour.
enum TransferDemoRoutes {
    /// `GET /api/archive`: 8 MiB with `Content-Disposition` and an `ETag`;
    /// `POST /api/uploads`: answers each multipart part's name and size.
    static func add(to router: inout LoopbackRouter) {
        router.on("GET", "/api/archive") { _, _ in
            let length = 8 * 1024 * 1024
            return .stream(headers: [
                ("Content-Type", "application/zip"), ("Content-Length", String(length)), ("ETag", "\"archive-1\""),
                ("Content-Disposition", "attachment; filename=\"../photos.zip\"; filename*=UTF-8''photos%20%E2%80%94%20summer.zip"),
            ]) { writer in
                let block = [UInt8](repeating: 0x5A, count: 64 * 1024)
                for _ in 0..<(length / block.count) {
                    try await writer.write(block)
                    try await Task.sleep(for: .milliseconds(4))
                }
            }
        }
        router.on("POST", "/api/uploads") { request, _ in
            .text("received \(request.body.count) bytes as \(request.header("Content-Type")?.prefix(19) ?? "-")")
        }
    }
}

/// Uploads a photo with a form field.
struct UploadPhotos: Endpoint {
    typealias Response = String
    var form: MultipartForm
    var method: HTTPRequest.Method { .post }
    var path: String { "uploads" }
    var body: RequestPayload? { .multipart(form) }
}

/// The archive to download.
struct ArchiveRequest: Endpoint {
    typealias Response = Data
    var path: String { "archive" }
}

/// Downloads to disk and uploads a multipart form, each with a terminal progress bar.
struct FilesStep: TourStep {
    let title = "Files in and out: a download to disk and a multipart upload, with progress bars"

    func run(with client: APIClient) async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("curlew-tour-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let downloading = TransferProgressMonitor()
        var options = DownloadOptions(resumable: true)
        options.maximumFileSize = 64 << 20  // a larger answer fails with .bodyTooLarge, nothing left on disk
        async let downloaded = client.download(ArchiveRequest(), to: folder, options: options) {
            $0.reportProgress(to: downloading)
        }
        for await update in downloading { drawBar("download", update) }
        let file = try await downloaded
        print()
        say("saved \(file.url.lastPathComponent) (\(file.length) bytes, \(file.mimeType ?? "-")); the server suggested \"../photos.zip\" and photos — summer.zip, sanitised")

        var form = MultipartForm()
        form.append(field: "album", value: "summer")
        form.append(fileAt: file.path, name: "photos", contentType: "application/zip")
        // The upload's bar is drawn by an accessory: the same values, no loop of our own.
        let text = try await client.send(UploadPhotos(form: form)) { $0.accessories = [ProgressBarAccessory(label: "upload  ")] }
        say("server: \(text)")
    }
}

/// An accessory drawing a terminal progress bar for the transfers it is attached to.
struct ProgressBarAccessory: Accessory {
    let label: String

    func didProgress(_ activity: Activity, progress: TransferProgress) {
        drawBar(label, progress)
    }

    /// Ends the bar's line before other accessories' `didStop` (the HUD clears its line).
    func willStop(_ activity: Activity, outcome: Result<Void, any Error>) {
        print()
    }
}

/// `   download [##########----------]  52%  4.2 MiB` on one line, redrawn in place: the request
/// body for a call that sends one, else the response body.
func drawBar(_ label: String, _ update: TransferProgress) {
    let width = 30
    let uploading = update.totalBytesToSend != nil
    let fraction = (uploading ? update.fractionSent : update.fractionReceived) ?? 0
    let filled = Int(fraction * Double(width))
    let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
    let mebibytes = Double(uploading ? update.bytesSent : update.bytesReceived) / 1_048_576
    print("\r   \(label) [\(bar)] \(String(format: "%3d", Int(fraction * 100)))%  \(String(format: "%.1f", mebibytes)) MiB", terminator: "")
    fflush(nil)
}
