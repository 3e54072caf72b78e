@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// The pure parts of connections: OpenSSL verification results to codes, libcurl's cookie lines,
/// per-call overrides.
@Suite("Connection options (unit)")
struct ConnectionUnitTests {
    @Test func verificationResultsMapToTheirCodes() {
        #expect(CurlConnectionDiagnosis.verificationCode(10) == .tlsCertificateExpired)
        #expect(CurlConnectionDiagnosis.verificationCode(9) == .tlsCertificateExpired)
        for untrusted in [2, 18, 19, 20, 21, 27] {
            #expect(CurlConnectionDiagnosis.verificationCode(untrusted) == .tlsCertificateUntrusted)
        }
        for mismatch in [0, 1, 62] {
            #expect(CurlConnectionDiagnosis.verificationCode(mismatch) == .tlsHostnameMismatch)
        }
        #expect(CurlConnectionDiagnosis.verificationCode(23) == nil, "revoked stays a general TLS failure")
    }

    @Test func libcurlsCookieLinesAreRead() throws {
        let httpOnly = try #require(StoredCookie(netscapeLine: "#HttpOnly_.curlew.test\tTRUE\t/account\tTRUE\t1900000000\tsid\tabc"))
        #expect(httpOnly.domain == "curlew.test")
        #expect(httpOnly.includesSubdomains && httpOnly.isSecure && httpOnly.isHTTPOnly)
        #expect(httpOnly.path == "/account")
        #expect(httpOnly.expires == Date(timeIntervalSince1970: 1_900_000_000))
        #expect(httpOnly.name == "sid" && httpOnly.value == "abc")
        let session = try #require(StoredCookie(netscapeLine: "api.test\tFALSE\t/\tFALSE\t0\tn\t"))
        #expect(session.expires == nil && session.value == "" && !session.isHTTPOnly)
        #expect(StoredCookie(netscapeLine: "too\tfew\tfields") == nil)
        #expect(StoredCookie(netscapeLine: "api.test\tFALSE\t/\tFALSE\tsoon\tn\tv") == nil)
    }

    @Test func callOverridesReplaceTheClientsConnectionValues() throws {
        var transfer = TransferOptions()
        transfer.connection.maximumReceiveSpeed = 1000
        transfer.connection.hostOverrides = [try #require(HostOverride(host: "a.test", address: "127.0.0.1"))]
        var options = RequestOptions()
        options.applyConnectionOverrides(to: &transfer)
        #expect(transfer.connection.maximumReceiveSpeed == 1000)
        options.maximumReceiveSpeed = 50
        options.maximumSendSpeed = 60
        options.hostOverrides = []
        options.applyConnectionOverrides(to: &transfer)
        #expect(transfer.connection.maximumReceiveSpeed == 50)
        #expect(transfer.connection.maximumSendSpeed == 60)
        #expect(transfer.connection.hostOverrides.isEmpty)
    }

    @Test func theDefaultsVerifyIgnoreTheEnvironmentAndKeepNoCookies() {
        let options = ConnectionOptions()
        #expect(options.tls.verifiesPeer)
        #expect(options.tls.trustRoots == .system)
        #expect(options.proxy == .direct)
        #expect(options.cookies == nil)
        #expect(options.maximumReceiveSpeed == nil && options.maximumSendSpeed == nil)
        #expect(CookieJar() != CookieJar())
    }
}
