import Curlew
import Foundation
import Testing

/// Public-key pinning (`CURLOPT_PINNEDPUBLICKEY`) against nginx.
@Suite("Public-key pinning against nginx", .timeLimit(.minutes(2)))
struct PinningTests {
    @Test func anyOfSeveralPinsPassesAndNoMatchingPinIsATypedError() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let good = try servers.pin("good.pin")
        let other = try servers.pin("self-signed.pin")
        let retired = try #require(PublicKeyPin(sha256: Data(repeating: 7, count: 32)))
        // Each case on a transport of its own: a pooled connection is never re-checked.
        for (pins, expected) in [([retired, good], nil), ([good], nil), ([other, retired], CurlewError.Code.tlsPinMismatch)] {
            try await withTransport { transport in
                var options = servers.trustingTestCA
                options.tls.pinnedPublicKeys = pins
                let code = await curlewCode { try await connectionClient(servers.tlsURL, options, transport: transport).send(ConnectionProbe()) }
                #expect(code == expected, "\(pins)")
            }
        }
    }

    @Test func aPinHasOneSpelling() throws {
        let hash = Data((0..<32).map { UInt8($0) })
        let pin = try #require(PublicKeyPin(sha256: hash))
        #expect(pin.description == "sha256//" + hash.base64EncodedString())
        #expect(PublicKeyPin(pin.description) == pin)
        #expect(PublicKeyPin("sha256//" + Data(count: 31).base64EncodedString()) == nil)
        #expect(PublicKeyPin("md5//AAAA") == nil)
        #expect(PublicKeyPin("sha256//not base64!") == nil)
        #expect(PublicKeyPin(sha256: Data(count: 20)) == nil)
    }
}
