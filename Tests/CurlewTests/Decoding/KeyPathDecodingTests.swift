import Curlew
import CurlewTesting
import Foundation
import Testing
import TestSupport

@Suite("Key paths and dynamic values")
struct KeyPathDecodingTests {
    let envelope = #"{"code":0,"resp":{"note":"x \"quoted\" } ]","data":{"user":{"name":"Ana","friends":[{"id":"1","title":"a"},{"id":"2","title":"b"}]}}},"tail":[1,2,3]}"#

    @Test func decodesOnlyThePartAtTheKeyPath() async throws {
        let client = mockClient(envelope)
        #expect(try await client.send(FetchAt<String>(at: "resp.data.user.name")) == "Ana")
        #expect(try await client.send(FetchAt<[Picture]>(at: "resp.data.user.friends")).map(\.id) == ["1", "2"])
        #expect(try await client.send(FetchAt<Picture>(at: "resp.data.user.friends[1]")) == Picture(id: "2", title: "b"))
        #expect(try await client.send(FetchAt<Int>(at: "tail[2]")) == 3)
        #expect(try await mockClient("[10, 20, 30]").send(FetchAt<Int>(at: "[1]")) == 20)
    }

    @Test func theRestOfTheBodyIsNotDecoded() async throws {
        // Invalid JSON outside the key path does not matter; only the located part is decoded.
        let client = mockClient(#"{"junk":[1,2,{"a":tru}],"resp":{"data":[1,2]}}"#)
        #expect(try await client.send(FetchAt<[Int]>(at: "resp.data")) == [1, 2])
    }

    @Test func errorPathsStartAtTheRootOfTheBody() async {
        let body = #"{"resp":{"data":[{"id":"1","title":"a"},{"id":"2","title":"b"},{"id":"3","title":"c"},{"id":4,"title":"d"}]}}"#
        let error = await #expect(throws: CurlewError.self) { try await mockClient(body).send(FetchAt<[Picture]>(at: "resp.data")) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.dataPath == "resp.data[3].id")
        #expect(error?.message == "resp.data[3].id: expected String, found number")
        #expect(error?.request?.description == "GET https://api.test/p")
        #expect(error?.status == .ok)
    }

    @Test func missingKeysAndWrongShapesOnTheKeyPath() async {
        let client = mockClient(envelope)
        let missing = await #expect(throws: CurlewError.self) { try await client.send(FetchAt<String>(at: "resp.nothing")) }
        #expect(missing?.message == "resp.nothing: required key is missing")
        #expect(missing?.dataPath == "resp.nothing")
        let shape = await #expect(throws: CurlewError.self) { try await client.send(FetchAt<String>(at: "resp.data[0]")) }
        #expect(shape?.message == "resp.data: expected array, found object")
        let range = await #expect(throws: CurlewError.self) { try await client.send(FetchAt<Int>(at: "tail[3]")) }
        #expect(range?.message == "tail[3]: index out of range (the array has 3 elements)")
        let malformed = await #expect(throws: CurlewError.self) { try await client.send(FetchAt<Int>(at: "a..b")) }
        #expect(malformed?.message == #"the key path "a..b" is malformed"#)
    }

    @Test func keysWithEscapesAreMatched() async throws {
        #expect(try await mockClient(#"{"a\u0062":{"c":7}}"#).send(FetchAt<Int>(at: "ab.c")) == 7)
    }

    @Test func jsonValueGivesDynamicAccess() async throws {
        let value = try await mockClient(envelope).send(FetchAt<JSONValue>())
        #expect(value.resp?.data?.user?.name == "Ana")
        #expect(value["resp"]?["data"]?["user"]?["friends"]?[1]?["id"]?.stringValue == "2")
        #expect(value.code?.intValue == 0)
        #expect(value.tail == [1, 2, 3])
        #expect(value.missing == nil)
        #expect(JSONValue.object(["b": 1.5, "a": [true, nil, "x\n"]]).jsonData == Data(#"{"a":[true,null,"x\n"],"b":1.5}"#.utf8))
        let sub = try await mockClient(envelope).send(FetchAt<JSONValue>(at: "resp.data.user.friends[0]"))
        #expect(sub == ["id": "1", "title": "a"])
    }

    @Test func theRawBodyStaysBesideTheValue() async throws {
        let response = try await mockClient(envelope).response(for: FetchAt<String>(at: "resp.data.user.name"))
        #expect(response.value == "Ana")
        #expect(response.body == Data(envelope.utf8))
        #expect(try response.raw.json(at: "code") == 0)
    }

    @Test func propertyLists() async throws {
        let plist = try PropertyListEncoder().encode(Picture(id: "9", title: "Plist"))
        #expect(try await mockClient(bytes: plist).send(FetchAt<Picture>(format: .propertyList)) == Picture(id: "9", title: "Plist"))
        let error = await #expect(throws: CurlewError.self) { try await mockClient(bytes: plist).send(FetchAt<Picture>(at: "x", format: .propertyList)) }
        #expect(error?.level == .dataFormat)
    }

    @Test func deepNestingFailsWithAnErrorNeverACrash() async {
        let deep = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        let client = mockClient(deep)
        let whole = await #expect(throws: CurlewError.self) { try await client.send(FetchAt<JSONValue>()) }
        #expect(whole?.level == .dataFormat)
        let inside = await #expect(throws: CurlewError.self) { try await client.send(FetchAt<JSONValue>(at: "a.a.a")) }
        #expect(inside?.level == .dataFormat)
        let arrays = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let skipped = await #expect(throws: CurlewError.self) { try await mockClient(#"{"x":\#(arrays)}"#).send(FetchAt<Int>(at: "y")) }
        #expect(skipped?.message == "y: required key is missing")
    }

    @Test func invalidUTF8FailsWithAnError() async {
        var bytes = Data(#"{"resp":{"data":"caf"#.utf8)
        bytes += [0xC3, 0x28]
        bytes += Data(#""}}"#.utf8)
        let error = await #expect(throws: CurlewError.self) { try await mockClient(bytes: bytes).send(FetchAt<String>(at: "resp.data")) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.dataPath?.hasPrefix("resp.data") == true)
        let whole = await #expect(throws: CurlewError.self) { try await mockClient(bytes: bytes).send(FetchAt<JSONValue>()) }
        #expect(whole?.level == .dataFormat)
    }
}
