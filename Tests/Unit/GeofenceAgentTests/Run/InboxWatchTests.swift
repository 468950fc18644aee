import AgentOutputs
import AgentTestSupport
import Foundation
import TestSupport
import Testing

@testable import GeofenceAgent
@testable import ThreadExecution

#if canImport(Glibc)
    import Glibc
#endif

/// The kernel tells the inbox's watch of every request, of the inbox made anew, and of nothing else beside
/// the store: no request is left unseen, and a quiet second lists nothing.
@Suite(.offTheCooperativePool(.computing)) struct InboxWatchTests {
    let store = FileManager.default.temporaryDirectory.appendingPathComponent("watch-\(UUID().uuidString)").path
    var inbox: String { store + "/agent.sqlite.inbox" }

    init() throws {
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    }

    /// Leaves a request as the CLI does: written aside, then renamed in.
    func leaveRequest(_ name: String, in directory: String) throws {
        let path = (directory as NSString).appendingPathComponent(name)
        try "{}".write(toFile: path + ".tmp", atomically: false, encoding: .utf8)
        #expect(rename(path + ".tmp", path) == 0)
    }

    /// Lists as the agent does: whether due, then the listing's verdict.
    func round(_ watch: InboxWatch, foundWork: Bool = false) -> Bool {
        let due = watch.due()
        if due { watch.listed(foundWork: foundWork) }
        return due
    }

    @Test func theFirstRoundListsAndAQuietOneDoesNot() throws {
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = InboxWatch(inbox: inbox)
        #expect(watch.isWatching)
        #expect(round(watch))
        #expect(!round(watch))
        #expect(!round(watch))
    }

    @Test func aRequestRenamedInMakesAListingDue() throws {
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = InboxWatch(inbox: inbox)
        #expect(round(watch))
        try leaveRequest("add-1.geojson", in: inbox)
        #expect(round(watch, foundWork: true))
        // A listing that found work is followed by another, whatever the kernel says.
        #expect(round(watch))
        #expect(!round(watch))
    }

    @Test func anInboxMadeAfterTheStartIsWatched() throws {
        defer { try? FileManager.default.removeItem(atPath: store) }
        let watch = InboxWatch(inbox: inbox)
        #expect(watch.isWatching)
        watch.listingFailed()  // the first round finds no inbox
        #expect(!round(watch))
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        #expect(round(watch))
        try leaveRequest("remove-1.json", in: inbox)
        #expect(round(watch))
    }

    @Test func anInboxRemovedAndMadeAgainIsWatchedAgain() throws {
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = InboxWatch(inbox: inbox)
        #expect(round(watch))
        try FileManager.default.removeItem(atPath: inbox)
        #expect(watch.due())
        watch.listingFailed()
        #expect(!round(watch))
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        #expect(round(watch))
        try leaveRequest("add-2.geojson", in: inbox)
        #expect(round(watch))
    }

    /// The status file is replaced beside the store every 30 s, and SQLite writes there at every fix.
    @Test func filesBesideTheStoreAreNoReasonToList() throws {
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let watch = InboxWatch(inbox: inbox)
        #expect(round(watch))
        try ReplacedFile.write(Array("{}".utf8), to: store + "/agent.sqlite.status.json")
        try "x".write(toFile: store + "/agent.sqlite-wal", atomically: false, encoding: .utf8)
        #expect(!round(watch))
    }

    /// Attached to a thread that waits for its events, the round reads nothing itself: the thread does, as
    /// they come.
    @Test func attachedTheThreadReadsTheEvents() async throws {
        defer { try? FileManager.default.removeItem(atPath: store) }
        try FileManager.default.createDirectory(atPath: inbox, withIntermediateDirectories: true)
        let executor = ThreadExecutor(name: "inbox-watch")
        defer { executor.finish() }
        let watch = InboxWatch(inbox: inbox)
        #expect(watch.attach(to: executor))
        #expect(round(watch))
        #expect(!watch.mayBeDue(), "a quiet round: the applier is not entered")
        #expect(!round(watch))
        try leaveRequest("add-3.geojson", in: inbox)
        // The thread reads the event when it comes; a busy machine may take a while.
        let deadline = ContinuousClock.now + .seconds(30)
        while !watch.mayBeDue(), ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(watch.mayBeDue(), "the request's event")
        #expect(round(watch, foundWork: true))
        #expect(watch.mayBeDue(), "work found: the next round lists again")
        #expect(round(watch))
        #expect(!watch.mayBeDue())
        #expect(!round(watch))
    }

    /// Where inotify cannot watch (here, no directory to watch), the directory's time decides.
    @Test func withoutAWatchTheDirectorysTimeDecides() throws {
        let watch = InboxWatch(inbox: store + "/missing/agent.sqlite.inbox")
        #expect(!watch.isWatching)
        #expect(watch.mayBeDue(), "without inotify only the listing's gate can tell")
        #expect(!watch.due())
    }
}
