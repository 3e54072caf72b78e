@testable import CurlewCore
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `curl_multi_poll` hands back only POLLIN, POLLOUT and POLLPRI of the idle sockets the engine
/// lends it. A socket closed under libcurl (`POLLNVAL`) made poll return at once every turn with
/// nothing handed back, and the engine spun; it now finds such sockets with poll(2) itself.
@Suite("Poll events libcurl does not hand back")
struct UnmappedPollEventTests {
    @Test func aDescriptorThatIsNotOpenIsReportedAndAQuietSocketIsNot() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer {
            close(pair[0])
            close(pair[1])
        }
        // Far above any descriptor this process opens: never open, so poll(2) says POLLNVAL.
        let notOpen: Int32 = 900_000
        #expect(ConnectionUpkeep.socketsWithEvents([pair[0], notOpen]) == [notOpen])
    }

    @Test func aSocketWhosePeerHungUpIsReported() throws {
        var pair: [Int32] = [-1, -1]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]) }
        close(pair[1])
        #expect(ConnectionUpkeep.socketsWithEvents([pair[0]]) == [pair[0]])
    }
}
