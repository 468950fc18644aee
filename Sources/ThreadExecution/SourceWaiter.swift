import CEpoll
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The sources a `ThreadExecutor`'s thread waits for, with its own wake-up descriptor: one `epoll_wait` for
/// all of them. Each descriptor is registered once, not handed to the kernel at every wait as `poll` does:
/// on a VM whose caches are cold after every sleep, `poll`'s two passes over the descriptors (each looked up,
/// polled and queued on) were a tenth of a wake-up. Used only on that thread.
struct SourceWaiter: ~Copyable {
    private(set) var sources: [any ThreadExecutorSource] = []
    private let epoll: Int32
    /// Per source: its token in the events (the wake-up descriptor's is 0), the descriptor registered for it
    /// (-1: none), whether epoll refused that descriptor (a regular file, or one another source waits for:
    /// then the wait is a `poll` of it and of the epoll instance), and whether it was ready at the last wait.
    private var tokens: [UInt64] = []
    private var registered: [Int32] = []
    private var unregistrable: [Bool] = []
    private var ready: [Bool] = []
    private var nextToken: UInt64 = 1
    /// Each source's wait, as asked before the last wait.
    private var waits: [ThreadExecutorWait] = []
    private var events = [epoll_event](repeating: epoll_event(), count: 8)

    init(wakeDescriptor: Int32) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { fatalError("cannot create an epoll instance for a thread's sources: errno \(errno)") }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = 0
        guard epoll_ctl(epoll, EPOLL_CTL_ADD, wakeDescriptor, &event) == 0 else {
            fatalError("cannot wait for a thread's wake-up descriptor: errno \(errno)")
        }
    }

    deinit { close(epoll) }

    /// Sources attached since the last wait: each waited for from the next one on.
    mutating func attach(_ new: [any ThreadExecutorSource]) {
        for source in new {
            sources.append(source)
            tokens.append(nextToken)
            nextToken += 1
            registered.append(-1)
            unregistrable.append(false)
            ready.append(false)
        }
    }

    /// Asks each source what it waits for (detaching those that answer nil, their descriptor unregistered
    /// first) and waits for it, for the wake-up descriptor, or until `deadline`. True when the wake-up
    /// descriptor is readable.
    mutating func wait(until deadline: UInt64?) -> Bool {
        waits.removeAll(keepingCapacity: true)
        var earliest = deadline ?? .max
        var refused = false
        var index = 0
        while index < sources.count {
            guard let wait = sources[index].nextWait() else {
                register(index, descriptor: -1)
                let source = sources.remove(at: index)
                tokens.remove(at: index)
                registered.remove(at: index)
                unregistrable.remove(at: index)
                ready.remove(at: index)
                source.detached()
                continue
            }
            if wait.descriptor != registered[index] { register(index, descriptor: wait.descriptor) }
            if unregistrable[index] { refused = true }
            waits.append(wait)
            if let deadline = wait.deadline { earliest = min(earliest, deadline) }
            index += 1
        }
        var timeout = Self.timeout(until: earliest == .max ? nil : earliest)
        for i in ready.indices { ready[i] = false }
        if refused {
            pollRefused(timeout: timeout)
            timeout = 0
        }
        let count = events.withUnsafeMutableBufferPointer {
            epoll_wait(epoll, $0.baseAddress, Int32($0.count), timeout)
        }
        // EINTR: nothing is taken as ready; the caller loops and asks again.
        var woken = false
        for e in events.prefix(max(0, Int(count))) {
            let token = e.data.u64
            if token == 0 {
                woken = true
            } else if let i = tokens.firstIndex(of: token) {
                ready[i] = true
            }
        }
        return woken
    }

    /// Waits as `poll` for the descriptors epoll refused and for the epoll instance itself (readable when a
    /// registered descriptor is), marking the refused ones that are ready; the caller then collects the
    /// registered ones without waiting.
    private mutating func pollRefused(timeout: Int32) {
        var descriptors = [pollfd(fd: epoll, events: Int16(POLLIN), revents: 0)]
        var owners: [Int] = []
        for i in sources.indices where unregistrable[i] {
            descriptors.append(pollfd(fd: registered[i], events: Int16(POLLIN), revents: 0))
            owners.append(i)
        }
        guard poll(&descriptors, nfds_t(descriptors.count), timeout) > 0 else { return }
        for (k, i) in owners.enumerated() where descriptors[k + 1].revents != 0 { ready[i] = true }
    }

    /// Registers `descriptor` (-1: none) for the source at `index` in place of the one it had; one that epoll
    /// refuses is waited for by `poll` (`pollRefused`).
    private mutating func register(_ index: Int, descriptor: Int32) {
        let old = registered[index]
        // Unregistered before the source may close it; one closed already left epoll by itself.
        if old >= 0, !unregistrable[index] { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, old, nil) }
        registered[index] = descriptor
        unregistrable[index] = false
        guard descriptor >= 0 else { return }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = tokens[index]
        if epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) != 0 { unregistrable[index] = true }
    }

    /// Fires each source whose descriptor became readable (or failed: its read says how) or whose
    /// deadline, or earliest time, has come.
    func fireDue() {
        let now = Self.now()
        for (i, source) in sources.enumerated() where i < waits.count {
            let readable = ready[i]
            if readable || waits[i].isDue(at: now) { source.fire(readable: readable) }
        }
    }

    mutating func detachAll() {
        for i in sources.indices { register(i, descriptor: -1) }
        for source in sources { source.detached() }
        sources.removeAll()
        tokens.removeAll()
        registered.removeAll()
        unregistrable.removeAll()
        ready.removeAll()
    }

    /// The wait's timeout in milliseconds, rounded up so that a deadline has passed when it returns; -1: none.
    static func timeout(until deadline: UInt64?) -> Int32 {
        guard let deadline else { return -1 }
        let now = now()
        guard deadline > now else { return 0 }
        return Int32(min((deadline - now + 999_999) / 1_000_000, UInt64(Int32.max)))
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
