import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The sources a `ThreadExecutor`'s thread waits for, with its own wake-up descriptor: one `poll` for
/// all of them. Used only on that thread.
struct SourceWaiter {
    var sources: [any ThreadExecutorSource] = []
    private let wakeDescriptor: Int32
    private var descriptors: [pollfd] = []
    /// Each source's wait, as asked before the last `poll`.
    private var waits: [ThreadExecutorWait] = []

    init(wakeDescriptor: Int32) {
        self.wakeDescriptor = wakeDescriptor
    }

    /// Asks each source what it waits for (detaching those that answer nil) and waits for it, for the
    /// wake-up descriptor, or until `deadline`. True when the wake-up descriptor is readable.
    mutating func wait(until deadline: UInt64?) -> Bool {
        waits.removeAll(keepingCapacity: true)
        descriptors.removeAll(keepingCapacity: true)
        descriptors.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
        var earliest = deadline ?? .max
        var index = 0
        while index < sources.count {
            guard let wait = sources[index].nextWait() else {
                sources.remove(at: index).detached()
                continue
            }
            waits.append(wait)
            // A negative descriptor is left out by poll; its entry keeps the sources' positions.
            descriptors.append(pollfd(fd: wait.descriptor, events: Int16(POLLIN), revents: 0))
            if let deadline = wait.deadline { earliest = min(earliest, deadline) }
            index += 1
        }
        let timeout = Self.timeout(until: earliest == .max ? nil : earliest)
        if poll(&descriptors, nfds_t(descriptors.count), timeout) < 0 {
            // EINTR: nothing is taken as ready; the caller loops and asks again.
            for i in descriptors.indices { descriptors[i].revents = 0 }
        }
        return descriptors[0].revents != 0
    }

    /// Fires each source whose descriptor became readable (or failed: its read says how) or whose
    /// deadline, or earliest time, has come.
    func fireDue() {
        let now = Self.now()
        for (i, source) in sources.enumerated() where i < waits.count {
            let readable = descriptors[i + 1].revents != 0
            if readable || waits[i].isDue(at: now) { source.fire(readable: readable) }
        }
    }

    mutating func detachAll() {
        for source in sources { source.detached() }
        sources.removeAll()
    }

    /// `poll`'s timeout in milliseconds, rounded up so that a deadline has passed when it returns; -1: none.
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
