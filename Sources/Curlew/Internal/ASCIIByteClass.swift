/// A set of ASCII bytes as two 64-bit masks, one bit per byte: membership is a shift and a test
/// instead of a chain of range comparisons (``PercentEncoding`` asks for every byte of every
/// path and query parameter). Bytes from 128 up are never members.
struct ASCIIByteClass {
    /// Bytes 0–63.
    let low: UInt64
    /// Bytes 64–127.
    let high: UInt64

    func contains(_ byte: UInt8) -> Bool {
        switch byte {
        case 0..<64: (low >> UInt64(byte)) & 1 == 1
        case 64..<128: (high >> UInt64(byte - 64)) & 1 == 1
        default: false
        }
    }

    /// RFC 3986 unreserved: `A–Z a–z 0–9 - . _ ~`.
    static let unreserved = ASCIIByteClass(
        low: 0x03FF_6000_0000_0000,  // - . 0–9
        high: 0x47FF_FFFE_87FF_FFFE)  // A–Z _ a–z ~

    /// What a path keeps as it is: the unreserved bytes and `! $ & ' ( ) * + , ; = : @ / % ?`.
    static let pathAllowed = ASCIIByteClass(
        low: 0xAFFF_FFF2_0000_0000,  // ! $ % & ' ( ) * + , - . / 0–9 : ; = ?
        high: 0x47FF_FFFE_87FF_FFFF)  // @ A–Z _ a–z ~
}
