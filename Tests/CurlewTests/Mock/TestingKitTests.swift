import Curlew
import CurlewTesting
import Foundation
import Testing

@Suite("Testing kit")
struct TestingKitTests {
    @Test func expectationsPassOnAMatchingRequestAndListEveryMismatchOtherwise() async throws {
        let transport = MockTransport { .json(#"{"total": 0, "pictures": []}"#, for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        _ = try await client.send(MockSearch(key: "fog"))
        #expect(expectRequestCount(transport.requests, 1))
        #expect(expectRequest(transport.requests.first, method: .get, path: "/pictures/search", query: ["key": "fog"]))
        withKnownIssue {
            expectRequest(transport.requests.first, method: .post, query: ["key": "sunset"], headers: ["X-Trace": "1"])
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("query key: expected \"sunset\", found \"fog\"") && text.contains("header X-Trace: expected \"1\", found none")
                && text.contains("method: expected POST, found GET")
        }
        withKnownIssue {
            expectRequestCount(transport.requests, 2)
        }
        withKnownIssue {
            expectRequest(nil)
        }
    }

    @Test func jsonAndFormBodiesAreComparedAsValues() {
        let json = PreparedRequest(method: .post, url: "https://api.test/a", headers: [:], body: Data(#"{"b": 2, "a": [1]}"#.utf8))
        #expect(expectRequest(json, json: ["a": [1], "b": 2]))
        let form = PreparedRequest(method: .post, url: "https://api.test/a", headers: [:], body: Data("name=Ada+L&x=%26".utf8))
        #expect(expectRequest(form, form: ["name": "Ada L", "x": "&"]))
    }

    @Test func multipartExpectationsReadEveryPartIncludingFilesStreamedFromDisk() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("kit-mp-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("dunes.png")
        let photoBytes = Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try photoBytes.write(to: photo)
        var form = MultipartForm()
        form.append(field: "title", value: "Dunes at dusk")
        form.append(fileAt: photo.path)
        form.append(data: Data([1, 2, 3]), name: "q\"x", fileName: "a\"b.jpg")
        let transport = MockTransport { .text("ok", for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        _ = try await client.send(PhotoUpload(form: form, album: "summer"))

        let parts = try await transport.requests[0].multipartParts()
        #expect(parts.map(\.name) == ["album", "token", "title", "file", "q\"x"])
        #expect(parts[3].filename == "dunes.png")
        #expect(parts[3].contentType == "image/png")
        #expect(parts[3].body == photoBytes)
        #expect(parts[4].filename == "a\"b.jpg", "RFC 7578 escapes are undone")
        #expect(
            await expectMultipart(
                transport.requests.first, fields: ["title": "Dunes at dusk", "album": "summer", "token": "t 1"],
                files: ["file": ExpectedFilePart(filename: "dunes.png", contentType: "image/png", body: photoBytes)], partCount: 5))
        await withKnownIssue {
            await expectMultipart(
                transport.requests.first, fields: ["title": "Dawn"], files: ["file": ExpectedFilePart(filename: "x.png"), "cover": ExpectedFilePart(filename: "c")],
                partCount: 2)
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("field title: expected \"Dawn\", found \"Dunes at dusk\"")
                && text.contains("file file: expected filename \"x.png\", found \"dunes.png\"")
                && text.contains("file cover: expected a file part, found none")
                && text.contains("parts: expected 2, found 5")
        }
        await withKnownIssue {
            await expectMultipart(PreparedRequest(method: .post, url: "https://api.test/a", headers: [:], body: Data("x=1".utf8)), fields: ["x": "1"])
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("has no readable multipart body: no boundary in Content-Type")
        }
    }

    @Test func aMalformedMultipartBodyIsATypedParseErrorSayingWhy() {
        let type = "multipart/form-data; boundary=XyZ"
        #expect(throws: MultipartParseError("the body has no \"--XyZ\" line")) {
            try RecordedMultipartPart.parts(of: Data("hello".utf8), contentType: type)
        }
        #expect(throws: MultipartParseError("part 0 is not closed by a boundary")) {
            try RecordedMultipartPart.parts(of: Data("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nbody".utf8), contentType: type)
        }
        #expect(throws: MultipartParseError("part 0 has no name")) {
            try RecordedMultipartPart.parts(of: Data("--XyZ\r\nContent-Disposition: form-data\r\n\r\nbody\r\n--XyZ--\r\n".utf8), contentType: type)
        }
        let parsed = try? RecordedMultipartPart.parts(
            of: Data("--XyZ\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n1\r\n--XyZ\r\nContent-Disposition: form-data; name=\"f\"; filename=\"f.txt\"\r\nContent-Type: text/plain\r\n\r\n\r\n--XyZ--\r\n".utf8),
            contentType: type)
        #expect(
            parsed == [
                RecordedMultipartPart(name: "a", headers: ["content-disposition": "form-data; name=\"a\""], body: Data("1".utf8)),
                RecordedMultipartPart(
                    name: "f", filename: "f.txt", contentType: "text/plain",
                    headers: ["content-disposition": "form-data; name=\"f\"; filename=\"f.txt\"", "content-type": "text/plain"], body: Data()),
            ])
    }
}
