import Foundation
import Synchronization
import ThreadExecution

#if canImport(Glibc)
    import Glibc
#endif

/// Whether the CLI's inbox may hold something new, told by the kernel: inotify watches the store's
/// directory (for the inbox's creation) and the inbox itself (for a request renamed in). Attached to the
/// store's thread (`attach(to:)`), its descriptor is waited for in the same `epoll_wait` as the fixes, so that the
/// reporter's round every second costs no system call at all (a `stat` cost about 20 µs of a vehicle's
/// second on a VM, a `read` 7). Not attached, the round reads the events itself. Where inotify cannot watch,
/// the directory's time decides (`InboxScanGate`).
///
/// The events are read before the listing: a request that arrives during a listing leaves an event for the
/// next round, so none is left unseen.
final class InboxWatch: ThreadExecutorSource, Sendable {
    let inbox: String
    private let parent: String
    private let name: String
    /// The inotify descriptor, owned here; -1 when the time gate decides.
    private let descriptor: Int32
    private let state: Mutex<State>

    private struct State {
        var parentWatch: Int32 = -1
        var inboxWatch: Int32 = -1
        /// Events that may mean a request, counted as they are read.
        var events = 0
        /// The count when `due` last answered, and when the last listing found nothing to do (nil: the next
        /// round lists; so the first one does). An event read during a listing keeps the next one due.
        var seenByDue = 0
        var settled: Int?
        /// The store's thread reads the events as they come.
        var attached = false
        var timeGate = InboxScanGate()
        var listedTime: timespec?
    }

    init(inbox: String) {
        self.inbox = inbox
        let directory = (inbox as NSString).deletingLastPathComponent
        parent = directory.isEmpty ? "." : directory
        name = (inbox as NSString).lastPathComponent
        var state = State()
        var fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        if fd >= 0 {
            state.parentWatch = inotify_add_watch(fd, parent, UInt32(IN_CREATE | IN_MOVED_TO | IN_ONLYDIR))
            if state.parentWatch < 0 {
                close(fd)
                fd = -1
            }
        }
        descriptor = fd
        if fd >= 0 { Self.watchInbox(fd, inbox, &state) }
        self.state = Mutex(state)
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Whether inotify watches (else the directory's time decides).
    var isWatching: Bool { descriptor >= 0 }

    /// Has the events read on `executor`'s thread as they come; false when inotify does not watch or the
    /// executor has finished (the round then reads them itself).
    @discardableResult
    func attach(to executor: ThreadExecutor) -> Bool {
        guard descriptor >= 0, executor.attach(self) else { return false }
        state.withLock { $0.attached = true }
        return true
    }

    /// Whether a listing is due now: something arrived (or may have) since the last one.
    func due() -> Bool {
        guard descriptor >= 0 else {
            return state.withLock { s in
                s.listedTime = s.timeGate.due(inbox)
                return s.listedTime != nil
            }
        }
        if !state.withLock({ $0.attached }) { drainEvents() }
        return state.withLock { s in
            s.seenByDue = s.events
            return s.settled != s.events
        }
    }

    /// Whether `due` may say yes, asked without counting anything as seen: the round enters the applier only
    /// then. Unattached, or where inotify does not watch, only `due` can tell.
    func mayBeDue() -> Bool {
        guard descriptor >= 0 else { return true }
        return state.withLock { s in !s.attached || s.settled != s.events }
    }

    /// A listing made after `due`: when it found work, the next round lists again (the work's own renames
    /// and deletions say so too).
    func listed(foundWork: Bool) {
        state.withLock { s in
            if descriptor >= 0 {
                s.settled = foundWork ? nil : s.seenByDue
            } else if let time = s.listedTime {
                s.timeGate.listed(at: time, foundWork: foundWork)
            }
        }
    }

    /// The listing failed (the inbox went between `due` and the listing): inotify tells of its return; the
    /// time gate lists again at the next round.
    func listingFailed() {
        if descriptor >= 0 { state.withLock { $0.settled = $0.seenByDue } }
    }

    // MARK: ThreadExecutorSource

    func nextWait() -> ThreadExecutorWait? {
        ThreadExecutorWait(descriptor: descriptor)
    }

    func fire(readable: Bool) {
        drainEvents()
    }

    func detached() {
        state.withLock { $0.attached = false }
    }

    // MARK: Events

    /// Watches the inbox when it exists (again after it was made anew); a failure leaves the parent's watch
    /// to tell of its creation.
    private static func watchInbox(_ descriptor: Int32, _ inbox: String, _ state: inout State) {
        let events = IN_CREATE | IN_MOVED_TO | IN_CLOSE_WRITE | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR
        let watch = inotify_add_watch(descriptor, inbox, UInt32(events))
        state.inboxWatch = watch >= 0 ? watch : -1
    }

    /// Reads every queued event without waiting. An event in the inbox, the inbox made or moved in, or a
    /// lost event (the queue overflowed) makes a listing due.
    private func drainEvents() {
        let header = MemoryLayout<inotify_event>.size
        withUnsafeTemporaryAllocation(byteCount: 4096, alignment: MemoryLayout<inotify_event>.alignment) { buffer in
            while true {
                let count = read(descriptor, buffer.baseAddress, buffer.count)
                guard count > 0 else { return }
                var offset = 0
                while offset + header <= count {
                    let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                    let name = buffer.baseAddress! + offset + header
                    offset += header + Int(event.len)
                    take(event, name: event.len > 0 ? String(cString: name.assumingMemoryBound(to: CChar.self)) : "")
                }
            }
        }
    }

    private func take(_ event: inotify_event, name eventName: String) {
        state.withLock { s in
            if event.mask & UInt32(IN_Q_OVERFLOW) != 0 {
                s.events += 1
                Self.watchInbox(descriptor, inbox, &s)
            } else if event.wd == s.parentWatch {
                guard eventName == name else { return }
                s.events += 1
                Self.watchInbox(descriptor, inbox, &s)
            } else if event.wd == s.inboxWatch {
                s.events += 1
                if event.mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    if event.mask & UInt32(IN_MOVE_SELF) != 0 { inotify_rm_watch(descriptor, s.inboxWatch) }
                    s.inboxWatch = -1
                }
            }
        }
    }
}
