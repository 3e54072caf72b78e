/// The statuses a client follows when they carry a `Location`: 301, 302, 303, 307, 308.
package enum RedirectStatus {
    /// Whether `status` is one of them.
    package static func contains(_ status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }
}
