@testable import CurlewFleet
import PostgresNIO
import Testing

/// A database URL is configuration: one the store cannot use is refused where it is given, with
/// the reason, rather than accepted and then failing open forever (every call a miss, nothing
/// said above debug level).
@Suite("Fleet: PostgreSQL URLs")
struct FleetURLTests {
    typealias Configuration = PostgresFleetStore.Configuration

    @Test func aURLGivesHostPortUserPasswordAndDatabase() throws {
        let plain = try Configuration(url: "postgres://app:s%40cret@db.internal:6432/orders")
        #expect(plain.client.host == "db.internal")
        #expect(plain.client.port == 6432)
        #expect(plain.client.username == "app")
        #expect(plain.client.password == "s@cret")
        #expect(plain.client.database == "orders")
        let six = try Configuration(url: "postgresql://app@[::1]/orders")
        #expect(six.client.host == "::1")
        #expect(six.client.port == 5432)
        #expect(try Configuration(url: "postgres://app@db/").client.database == nil)
    }

    @Test(arguments: [
        ("not a url", Configuration.InvalidURL.Reason.notAURL), ("", .notAURL), ("http://app@db/orders", .scheme),
        ("postgres://app@/orders", .host), ("postgres://db.internal/orders", .user), ("postgres://app@db:0/orders", .port),
        ("postgres://app@db:99999/orders", .port), ("postgres://app:pw@db/orders?sslmode=required", .sslMode),
        ("postgres://app:pw@db/orders?connect_timeout=5", .parameter),
    ])
    func aURLTheStoreCannotUseIsRefusedWithItsReason(_ url: String, _ reason: Configuration.InvalidURL.Reason) {
        let error = #expect(throws: Configuration.InvalidURL.self) { try Configuration(url: url) }
        #expect(error?.reason == reason)
        #expect(error?.description.hasPrefix("the PostgreSQL URL is refused: ") == true)
        #expect(error?.description.contains("pw") == false)
    }

    /// `sslmode=require` in a URL from a hosting provider used to be ignored: the store talked to
    /// the database without TLS.
    @Test func sslmodeChoosesTLS() throws {
        func tls(_ mode: String?) throws -> String {
            try String(describing: Configuration(url: "postgres://app@db/orders" + (mode.map { "?sslmode=\($0)" } ?? "")).client.tls)
        }
        #expect(try tls(nil).hasSuffix("TLS.Base.disable)"))
        #expect(try tls("disable").hasSuffix("TLS.Base.disable)"))
        let verification = [
            "require": "CertificateVerification.none(", "verify-ca": "CertificateVerification.noHostnameVerification",
            "verify-full": "CertificateVerification.fullVerification",
        ]
        for (mode, checks) in verification {
            let text = try tls(mode)
            #expect(text.contains("TLS.Base.require("), "\(mode)")
            #expect(text.contains("certificateVerification: NIOSSL.\(checks)"), "\(mode)")
        }
        for mode in ["allow", "prefer"] {
            let text = try tls(mode)
            #expect(text.contains("TLS.Base.prefer("), "\(mode)")
            #expect(text.contains("certificateVerification: NIOSSL.CertificateVerification.none("), "\(mode)")
        }
    }

    /// The schema is quoted in SQL, so a keyword or a leading digit is kept; nothing usable left
    /// is the default.
    @Test func theSchemaKeepsLettersDigitsAndUnderscores() throws {
        #expect(try Configuration(url: "postgres://app@db/orders", schema: "Order").schema == "order")
        #expect(try Configuration(url: "postgres://app@db/orders", schema: "2024-fleet").schema == "2024fleet")
        #expect(try Configuration(url: "postgres://app@db/orders", schema: "--").schema == "curlew_fleet")
    }
}
