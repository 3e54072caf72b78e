import Curlew
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

    /// Each refusal is a `CurlewError` like every other bad URL or setting in Curlew: its code,
    /// stage `configuration`, and a message that says what is wrong and never holds the password.
    @Test(arguments: [
        ("not a url", CurlewError.Code.malformedURL, "it is not a URL"), ("", .malformedURL, "it is not a URL"),
        ("http://app:pw@db/orders", .unsupportedScheme, "scheme must be postgres or postgresql, not http"),
        ("postgres://app:pw@/orders", .malformedURL, "it names no host"), ("postgres://db.internal/orders", .malformedURL, "it names no user"),
        ("postgres://app:pw@db:0/orders", .malformedURL, "its port 0 is not between 1 and 65535"),
        ("postgres://app:pw@db:99999/orders", .malformedURL, "its port 99999 is not between 1 and 65535"),
        ("postgres://app:pw@db/orders?sslmode=required", .invalidConnectionSettings, "its sslmode required is none of disable"),
        ("postgres://app:pw@db/orders?connect_timeout=5", .invalidConnectionSettings, "its parameter connect_timeout is not supported"),
    ])
    func aURLTheStoreCannotUseIsRefusedWithWhatIsWrong(_ url: String, _ code: CurlewError.Code, _ says: String) {
        let error = #expect(throws: CurlewError.self) { try Configuration(url: url) }
        #expect(error?.code == code)
        #expect(error?.stage == .configuration)
        #expect(error?.message.hasPrefix("the PostgreSQL URL is refused: ") == true)
        #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
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

    /// The schema is quoted in SQL, so a keyword or a leading digit is kept, lowercased as
    /// PostgreSQL folds a name.
    @Test func theSchemaKeepsLettersDigitsAndUnderscores() throws {
        #expect(try Configuration(url: "postgres://app@db/orders", schema: "Order").schema == "order")
        #expect(try Configuration(url: "postgres://app@db/orders", schema: "2024_fleet").schema == "2024_fleet")
        #expect(try Configuration(url: "postgres://app@db/orders", schema: String(repeating: "a", count: 40)).schema.count == 40)
    }

    /// A schema with other characters used to be changed in silence (`2024-fleet` became
    /// `2024fleet`, `--` became `curlew_fleet`): two fleets configured apart could share tables.
    @Test(arguments: ["2024-fleet", "--", "", "fleet.cache", "flëet", String(repeating: "a", count: 41)])
    func aSchemaTheStoreCannotUseIsRefused(_ schema: String) {
        let error = #expect(throws: CurlewError.self) { try Configuration(url: "postgres://app:pw@db/orders", schema: schema) }
        #expect(error?.code == .invalidConnectionSettings)
        #expect(error?.stage == .configuration)
        #expect(error?.message.contains("schema \"\(schema)\" is refused") == true, "\(error?.message ?? "")")
        #expect(error?.description.contains("pw") == false)
        let direct = #expect(throws: CurlewError.self) {
            try Configuration(client: .init(host: "db", username: "app", password: "pw", database: "orders", tls: .disable), schema: schema)
        }
        #expect(direct?.code == .invalidConnectionSettings)
    }
}
