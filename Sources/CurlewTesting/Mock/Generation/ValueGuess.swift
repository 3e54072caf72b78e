/// What a value looks like, guessed from its property name or chosen by a
/// ``MockHint``.
enum ValueGuess: Sendable, Hashable {
    case date, url, imageURL, email, name, firstName, lastName, username, title, text, identifier, uuid
    case phone, color, currency, language, country, city, address, postcode, version, token, status, word, slug
    case count, age, year, dimension, duration, rating, percent, price, latitude, longitude
    case plain

    /// The guess for a coding key: `imageURL`/`avatar` → an image URL, `email`, `createdAt`/`date`
    /// → a date, `id`/`userId` → an identifier, `count`/`total` → a small integer, `price` → a
    /// decimal, and so on. Camel case and snake case both work.
    static func forKey(_ key: String) -> ValueGuess {
        let lower = key.lowercased()
        let flat = lower.replacingOccurrences(of: "_", with: "").replacingOccurrences(of: "-", with: "")
        func has(_ fragments: String...) -> Bool { fragments.contains { flat.contains($0) } }
        func ends(_ suffixes: String...) -> Bool { suffixes.contains { flat.hasSuffix($0) } }
        let camelAt = key.hasSuffix("At") && key.count > 2
        let imageish = has("image", "avatar", "photo", "picture", "thumbnail", "thumb", "icon", "cover", "logo", "banner") || flat == "pic" || ends("picurl", "img", "imgurl")
        if imageish { return .imageURL }
        if ends("url", "uri", "link", "href") || flat == "website" || flat == "homepage" { return .url }
        if has("email") || flat == "mail" { return .email }
        if has("uuid", "guid") { return .uuid }
        if camelAt || lower.hasSuffix("_at") || has("date", "time", "timestamp", "birthday") || flat == "dob"
            || (ends("on") && has("created", "updated"))
        {
            return .date
        }
        if flat == "id" || ends("id", "ids") { return .identifier }
        if has("phone", "mobile") || flat == "tel" { return .phone }
        if has("firstname", "givenname") { return .firstName }
        if has("lastname", "surname", "familyname") { return .lastName }
        if has("username", "login", "nickname", "handle") || flat == "nick" { return .username }
        if has("name") { return .name }
        if has("title", "headline", "subject") { return .title }
        if has("description", "summary", "text", "body", "content", "comment", "message", "bio", "caption", "note") { return .text }
        if has("colour", "color") { return .color }
        if has("currency") { return .currency }
        if has("language", "locale") || flat == "lang" { return .language }
        if has("country") { return .country }
        if has("city", "town") { return .city }
        if has("address", "street") { return .address }
        if has("zip", "postcode", "postal") { return .postcode }
        if has("version") { return .version }
        if has("token", "secret", "hash", "sha", "signature") { return .token }
        if has("status", "state") { return .status }
        if has("slug") { return .slug }
        if has("count", "total", "number", "quantity", "size", "page", "num", "likes", "views") { return .count }
        if flat == "age" { return .age }
        if has("year") { return .year }
        if has("width", "height") { return .dimension }
        if has("duration", "seconds", "length") { return .duration }
        if has("rating", "score", "stars") { return .rating }
        if has("percent", "progress", "ratio") { return .percent }
        if has("price", "amount", "cost", "fee", "balance") { return .price }
        if has("latitude") || flat == "lat" { return .latitude }
        if has("longitude") || flat == "lng" || flat == "lon" { return .longitude }
        if has("type", "kind", "category", "tag") { return .word }
        return .plain
    }
}
