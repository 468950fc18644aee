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
    /// An attached source and what the waiter keeps for it.
    private struct Entry {
        let source: any ThreadExecutorSource
        /// Its mark in epoll's events (the wake-up descriptor's is 0).
        let token: UInt64
        /// The descriptor registered for it; -1: none.
        var registered: Int32 = -1
        /// epoll refused that descriptor (a regular file, or one another source waits for): the wait is then
        /// a `poll` of it and of the epoll instance.
        var refused = false
        /// Its descriptor was ready at the last wait.
        var ready = false
        /// What it asked to wait for before the last wait.
        var wait = ThreadExecutorWait()
    }

    private var entries: [Entry] = []
    private let epoll: Int32
    private var nextToken: UInt64 = 1
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
    mutating func attach(_ sources: [any ThreadExecutorSource]) {
        for source in sources {
            entries.append(Entry(source: source, token: nextToken))
            nextToken += 1
        }
    }

    /// Asks each source what it waits for (detaching those that answer nil, their descriptor unregistered
    /// first) and waits for it, for the wake-up descriptor, or until `deadline`. True when the wake-up
    /// descriptor is readable.
    mutating func wait(until deadline: UInt64?) -> Bool {
        var earliest = deadline ?? .max
        var refused = false
        var index = 0
        while index < entries.count {
            guard let wait = entries[index].source.nextWait() else {
                Self.register(&entries[index], descriptor: -1, in: epoll)
                entries.remove(at: index).source.detached()
                continue
            }
            if wait.descriptor != entries[index].registered {
                Self.register(&entries[index], descriptor: wait.descriptor, in: epoll)
            }
            refused = refused || entries[index].refused
            entries[index].wait = wait
            entries[index].ready = false
            if let deadline = wait.deadline { earliest = min(earliest, deadline) }
            index += 1
        }
        var timeout = Self.timeout(until: earliest == .max ? nil : earliest)
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
            } else if let i = entries.firstIndex(where: { $0.token == token }) {
                entries[i].ready = true
            }
        }
        return woken
    }

    /// Waits as `poll` for the descriptors epoll refused and for the epoll instance itself (readable when a
    /// registered descriptor is), marking the refused ones that are ready; the caller then collects the
    /// registered ones without waiting.
    private mutating func pollRefused(timeout: Int32) {
        let owners = entries.indices.filter { entries[$0].refused }
        var descriptors = [pollfd(fd: epoll, events: Int16(POLLIN), revents: 0)]
        descriptors += owners.map { pollfd(fd: entries[$0].registered, events: Int16(POLLIN), revents: 0) }
        guard poll(&descriptors, nfds_t(descriptors.count), timeout) > 0 else { return }
        for (k, i) in owners.enumerated() where descriptors[k + 1].revents != 0 { entries[i].ready = true }
    }

    /// Registers `descriptor` (-1: none) with `epoll` for `entry` in place of the one it had; one that epoll
    /// refuses is waited for by `poll` (`pollRefused`).
    private static func register(_ entry: inout Entry, descriptor: Int32, in epoll: Int32) {
        // Unregistered before the source may close it; one closed already left epoll by itself.
        if entry.registered >= 0, !entry.refused { _ = epoll_ctl(epoll, EPOLL_CTL_DEL, entry.registered, nil) }
        entry.registered = descriptor
        entry.refused = false
        guard descriptor >= 0 else { return }
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.u64 = entry.token
        if epoll_ctl(epoll, EPOLL_CTL_ADD, descriptor, &event) != 0 { entry.refused = true }
    }

    /// Fires each source whose descriptor became readable (or failed: its read says how) or whose
    /// deadline, or earliest time, has come. Sources attached since the wait are not asked yet.
    func fireDue() {
        let now = Self.now()
        for entry in entries where entry.ready || entry.wait.isDue(at: now) {
            entry.source.fire(readable: entry.ready)
        }
    }

    mutating func detachAll() {
        for i in entries.indices { Self.register(&entries[i], descriptor: -1, in: epoll) }
        for entry in entries { entry.source.detached() }
        entries.removeAll()
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
