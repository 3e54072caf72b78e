import Curlew
import Testing

@Suite("Trusted origins")
struct TrustedOriginsTests {
    let trusted = TrustedOrigins(["https://api.example.com/v1", "http://127.0.0.1:8080"])

    @Test(arguments: [
        "https://api.example.com/v1/search?key=fog",
        "https://api.example.com",
        "https://API.Example.com:443/x",
        "https://api.example.com?x=1",
        "http://127.0.0.1:8080/a",
        "HTTP://127.0.0.1:8080",
    ])
    func sameOriginIsTrusted(url: String) {
        #expect(trusted.contains(url))
    }

    @Test(arguments: [
        "https://api.example.com.evil.test/",  // a longer host
        "https://api.example.com@evil.test/",  // user information before another host
        "https://evil.test/?next=https://api.example.com/",
        "http://api.example.com/",  // another scheme
        "https://api.example.com:8443/",  // another port
        "http://127.0.0.1:80/",
        "http://127.0.0.1:8080.evil.test/",
        "ftp://api.example.com/",
        "api.example.com/v1",
    ])
    func otherOriginsAreNot(url: String) {
        #expect(!trusted.contains(url))
    }

    @Test func originsAreNormalised() {
        #expect(TrustedOrigins.origin(of: "HTTPS://Api.Example.COM/path") == "https://api.example.com:443")
        #expect(TrustedOrigins.origin(of: "http://[::1]:9000/x") == "http://[::1]:9000")
        #expect(TrustedOrigins.origin(of: "http://user:pw@host/x") == "http://host:80")
        #expect(TrustedOrigins.origin(of: "mailto:someone") == nil)
        #expect(TrustedOrigins([]).contains("https://api.example.com/") == false)
    }
}
