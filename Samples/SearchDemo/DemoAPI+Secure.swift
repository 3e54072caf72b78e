import Foundation
import LoopbackServer

/// The routes the middleware tour talks to: a signed order endpoint, pictures behind a business
/// code, an account behind a bearer token that expires, a token refresh, and a clock that runs
/// an hour ahead.
extension DemoAPI {
    /// The secret shared with the tour's `SigningMiddleware`.
    static let signingSecret = "123456"
    /// Pictures that exist but are not shown to anyone (business code 1001).
    static let privatePictureIDs: Set<Int> = [6]
    /// Who holds the tokens.
    static let tokens = TokenDesk()

    /// `GET /api/secure/orders?item=…&qty=…&ts=…&sign=…`. The server recomputes the signature
    /// itself: every query item but `sign`, sorted by name then value, as `a=1&b=2`, then the
    /// secret, through MD5. A missing or wrong signature, or a timestamp more than five minutes
    /// off, is answered with 403.
    static func signedOrder(_ request: ServerRequest) -> ServerResponse {
        guard let sign = request.queryValue("sign") else {
            return .json(#"{"code":403,"msg":"missing sign"}"#, status: 403)
        }
        let canonical = request.queryItems
            .filter { $0.name != "sign" }
            .sorted { ($0.name, $0.value) < ($1.name, $1.value) }
            .map { "\($0.name)=\($0.value)" }
            .joined(separator: "&")
        guard DemoMD5.hex(canonical + signingSecret) == sign.lowercased() else {
            return .json(#"{"code":403,"msg":"signature mismatch"}"#, status: 403)
        }
        guard let timestamp = request.queryValue("ts").flatMap(Int.init), abs(timestamp - Int(Date().timeIntervalSince1970)) <= 300 else {
            return .json(#"{"code":403,"msg":"stale or missing ts"}"#, status: 403)
        }
        let item = request.queryValue("item") ?? ""
        let quantity = request.queryValue("qty").flatMap(Int.init) ?? 1
        return .json(#"{"code":0,"msg":"ok","data":{"item":\#(quoted(item)),"quantity":\#(quantity),"canonical":\#(quoted(canonical)),"sign":\#(quoted(sign))}}"#)
    }

    /// `GET /api/secure/pictures/{id}`: the picture details, or HTTP 200 with business code 1001
    /// for a private picture.
    static func guardedDetails(_ id: String?) -> ServerResponse {
        if let id = id.flatMap(Int.init), privatePictureIDs.contains(id) {
            return .json(#"{"code":1001,"msg":"picture is private","data":null}"#)
        }
        return details(id)
    }

    /// `GET /api/secure/me` with `Authorization: Bearer <access token>`; 401 for an expired or
    /// unknown token.
    static func account(_ request: ServerRequest) async -> ServerResponse {
        let token = request.header("Authorization").flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil } ?? ""
        guard await tokens.isValid(token) else {
            return .json(#"{"code":401,"msg":"token expired"}"#, status: 401)
        }
        let refreshes = await tokens.refreshes
        return .json(#"{"code":0,"msg":"ok","data":{"user":"ines","token":\#(quoted(token)),"refreshes":\#(refreshes)}}"#)
    }

    /// `POST /api/auth/refresh` with the form field `refresh_token`: a new access token (and the
    /// old one stops working). Says whether the request carried an `Authorization` header.
    static func refresh(_ request: ServerRequest) async -> ServerResponse {
        let fields = request.bodyText.split(separator: "&").map { $0.split(separator: "=", maxSplits: 1).map(String.init) }
        let encoded = fields.first { $0.first == "refresh_token" && $0.count == 2 }?.last ?? ""
        let refreshToken = encoded.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? encoded
        guard let access = await tokens.refresh(with: refreshToken) else {
            return .json(#"{"code":401,"msg":"unknown refresh token"}"#, status: 401)
        }
        let sawAuthorization = request.header("Authorization") != nil
        return .json(#"{"code":0,"msg":"ok","data":{"access_token":\#(quoted(access)),"refresh_token":\#(quoted(refreshToken)),"saw_authorization":\#(sawAuthorization)}}"#)
    }

    /// `GET /api/secure/clock`: an empty envelope with a `Date` header one hour ahead.
    static func clock() -> ServerResponse {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let aheadByAnHour = formatter.string(from: Date().addingTimeInterval(3600))
        return ServerResponse(
            status: 200, headers: [("Content-Type", "application/json"), ("Date", aheadByAnHour)],
            body: Array(#"{"code":0,"msg":"ok","data":{}}"#.utf8))
    }
}

/// The server's side of the bearer tokens: `access-v1` was issued before the tour and has
/// expired; each refresh issues `access-v<n>` and retires the previous one.
actor TokenDesk {
    /// The refresh token the tour's user holds.
    static let refreshToken = "refresh-ines"
    /// Refreshes served so far.
    private(set) var refreshes = 0
    private var valid: String?

    /// Whether `token` is the current access token.
    func isValid(_ token: String) -> Bool {
        valid == token
    }

    /// A new access token for a known refresh token, `nil` otherwise.
    func refresh(with refreshToken: String) -> String? {
        guard refreshToken == Self.refreshToken else { return nil }
        refreshes += 1
        let token = "access-v\(refreshes + 1)"
        valid = token
        return token
    }
}

/// MD5 as lower-case hex (RFC 1321), written out so the demo server checks signatures without
/// sharing code with the client. Not for security: MD5 is what the signing scheme asks for.
enum DemoMD5 {
    private static let shifts: [UInt32] = [7, 12, 17, 22, 5, 9, 14, 20, 4, 11, 16, 23, 6, 10, 15, 21]
    private static let constants: [UInt32] = (0..<64).map { UInt32(truncatingIfNeeded: Int64(abs(sin(Double($0 + 1))) * 4_294_967_296)) }

    static func hex(_ text: String) -> String {
        var message = Array(text.utf8)
        let bitCount = UInt64(message.count) &* 8
        message.append(0x80)
        while message.count % 64 != 56 { message.append(0) }
        message += (0..<8).map { UInt8(truncatingIfNeeded: bitCount >> (8 * UInt64($0))) }

        var state: [UInt32] = [0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476]
        for chunk in stride(from: 0, to: message.count, by: 64) {
            let words = (0..<16).map { index in
                (0..<4).reduce(UInt32(0)) { word, byte in word | UInt32(message[chunk + 4 * index + byte]) << (8 * UInt32(byte)) }
            }
            var (a, b, c, d) = (state[0], state[1], state[2], state[3])
            for round in 0..<64 {
                let (mixed, wordIndex): (UInt32, Int) =
                    switch round / 16 {
                    case 0: ((b & c) | (~b & d), round)
                    case 1: ((d & b) | (~d & c), (5 * round + 1) % 16)
                    case 2: (b ^ c ^ d, (3 * round + 5) % 16)
                    default: (c ^ (b | ~d), (7 * round) % 16)
                    }
                let sum = mixed &+ a &+ constants[round] &+ words[wordIndex]
                let shift = shifts[(round / 16) * 4 + round % 4]
                (a, d, c) = (d, c, b)
                b = b &+ (sum << shift | sum >> (32 - shift))
            }
            state = [state[0] &+ a, state[1] &+ b, state[2] &+ c, state[3] &+ d]
        }
        return state.flatMap { word in (0..<4).map { UInt8(truncatingIfNeeded: word >> (8 * UInt32($0))) } }
            .map { String(format: "%02x", $0) }.joined()
    }
}
