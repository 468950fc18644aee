import AgentTestSupport
import Foundation
import GeofenceStore
import Logging
import Mosquitto
import ServiceLifecycleTestKit
import Synchronization
import TestSupport
import Testing

@testable import GeofenceAgent

/// The outbox publisher with an in-memory broker connection: what it sends, in which order, what it
/// deletes, and that it stops at once with acknowledgements outstanding.
@Suite(.offTheCooperativePool(.agentsPool)) struct OutboxPublisherTests {
    /// An acknowledgement the test gives (or never gives).
    final class FakeTicket: PublishAcknowledgement, @unchecked Sendable {
        private let state = Mutex<
            (
                result: Result<MQTTReasonCode, MQTTError>?,
                waiters: [CheckedContinuation<Result<MQTTReasonCode, MQTTError>, Never>]
            )
        >((nil, []))

        func complete(_ result: Result<MQTTReasonCode, MQTTError>) {
            let waiters = state.withLock { s in
                s.result = result
                defer { s.waiters = [] }
                return s.waiters
            }
            for w in waiters { w.resume(returning: result) }
        }

        /// Like `PublishTicket`: a cancelled caller stops waiting with `.cancelled`.
        func acknowledgement() async throws(MQTTError) -> MQTTReasonCode {
            let result = await withTaskCancellationHandler {
                await withCheckedContinuation { (c: CheckedContinuation<Result<MQTTReasonCode, MQTTError>, Never>) in
                    let done = state.withLock { s -> Result<MQTTReasonCode, MQTTError>? in
                        if Task.isCancelled { return .failure(.cancelled) }
                        if s.result == nil { s.waiters.append(c) }
                        return s.result
                    }
                    if let done { c.resume(returning: done) }
                }
            } onCancel: {
                let waiters = state.withLock { s in
                    defer { s.waiters = [] }
                    return s.waiters
                }
                for w in waiters { w.resume(returning: .failure(.cancelled)) }
            }
            return try result.get()
        }
    }

    /// Records what is issued; the test acknowledges.
    final class FakeTransport: OutboxTransport, @unchecked Sendable {
        private let state = Mutex<[(topic: String, payload: [UInt8], ticket: FakeTicket)]>([])
        func issueInOrder(_ topic: String, payload: [UInt8], retain: Bool) async throws(MQTTError)
            -> any PublishAcknowledgement
        {
            let ticket = FakeTicket()
            state.withLock { $0.append((topic, payload, ticket)) }
            return ticket
        }
        var issued: [(topic: String, payload: [UInt8], ticket: FakeTicket)] { state.withLock { $0 } }
    }

    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    func store() async throws -> AgentStore {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "publisher-\(UUID().uuidString)/agent.sqlite"
        ).path
        return try await AgentStore.open(path: path, logger: logger)
    }

    static func item(_ n: Int) -> OutboxItem {
        OutboxItem(kind: .transition, topic: "t/\(n)") { _, sequence in Array("\(n):\(sequence)".utf8) }
    }

    func waitUntil(_ condition: () async -> Bool) async -> Bool {
        for _ in 0..<500 {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return await condition()
    }

    @Test func entriesGoOutInSequenceAndLeaveOnlyWhenAcknowledged() async throws {
        let store = try await store()
        let outbox = try await Outbox.open(store, logger: logger)
        let transport = FakeTransport()
        let publisher = OutboxPublisher(outbox: outbox, client: transport, logger: logger)
        // Three rows before the publisher starts (a restart), three handed over while it runs.
        try await outbox.enqueue((1...3).map(Self.item))
        let running = Task { try await publisher.run() }
        outbox.wake()
        try await outbox.enqueue((4...6).map(Self.item))
        #expect(await waitUntil { transport.issued.count == 6 })
        #expect(transport.issued.map(\.topic) == (1...6).map { "t/\($0)" }, "in sequence order")
        // The broker acknowledges all but the fifth, which it refuses.
        for (k, sent) in transport.issued.enumerated() {
            sent.ticket.complete(
                k == 4 ? .failure(.refused(topic: sent.topic, reason: MQTTReasonCode(0x97))) : .success(.success))
        }
        #expect(
            await waitUntil { await outbox.stats.rows == 1 }, "acknowledged rows are deleted, the refused one stays")
        running.cancel()
        try await running.value
        // Acknowledged rows are deleted with the next write, at the latest when the publisher stops.
        #expect(try await store.pending(after: 0, limit: 10).map(\.topic) == ["t/5"])
        await store.close()
    }

    @Test func itStopsAtOnceWithAcknowledgementsOutstandingAndKeepsTheirRows() async throws {
        let store = try await store()
        let outbox = try await Outbox.open(store, logger: logger)
        let transport = FakeTransport()
        let publisher = OutboxPublisher(outbox: outbox, client: transport, logger: logger)
        try await outbox.enqueue((1...4).map(Self.item))
        let running = Task { try await publisher.run() }
        outbox.wake()
        #expect(await waitUntil { transport.issued.count == 4 })
        transport.issued[0].ticket.complete(.success(.success))
        // The broker goes away: the other three are never acknowledged.
        #expect(await waitUntil { await outbox.stats.rows == 3 })
        // The three tickets are never completed: the publisher ends all the same, so it does not wait for a
        // broker that is away. How soon is not timed here: a busy machine would break any bound.
        running.cancel()
        try await running.value
        #expect(
            try await store.pending(after: 0, limit: 10).map(\.topic) == ["t/2", "t/3", "t/4"],
            "what was not acknowledged is sent again next time")
        await store.close()
    }

    static func trackItem(_ n: Int, retain: Bool = false) -> OutboxItem {
        OutboxItem(kind: .location, topic: retain ? "location" : "track/\(n)", retain: retain) { _, sequence in
            Array("\(n):\(sequence)".utf8)
        }
    }

    /// Acknowledges everything issued until `count` entries were issued.
    func acknowledgeAll(until count: Int, _ transport: FakeTransport) async -> Bool {
        await waitUntil {
            for sent in transport.issued { sent.ticket.complete(.success(.success)) }
            return transport.issued.count >= count
        }
    }

    /// A publisher started over a fresh outbox with `items` waiting; stopped, and its store closed, after
    /// `body`.
    func withPublisher(waiting items: [OutboxItem], _ body: (Outbox, FakeTransport) async throws -> Void)
        async throws
    {
        let store = try await store()
        let outbox = try await Outbox.open(store, logger: logger)
        let transport = FakeTransport()
        let publisher = OutboxPublisher(outbox: outbox, client: transport, logger: logger)
        try await outbox.enqueue(items)
        let running = Task { try await publisher.run() }
        outbox.wake()
        try await body(outbox, transport)
        running.cancel()
        try await running.value
        await store.close()
    }

    /// However much of the track waits (an outage's), a transition made now goes out behind at most
    /// `droppableWindow` droppable messages the broker has not acknowledged; each acknowledgement lets
    /// another go, in order.
    @Test func aTransitionWaitsBehindAtMostTheDroppableWindow() async throws {
        try await withPublisher(waiting: (1...30).map { Self.trackItem($0) }) { outbox, transport in
            let window = OutboxPublisher.droppableWindow
            #expect(await waitUntil { transport.issued.count == window })
            try await outbox.enqueue([Self.item(31)])
            #expect(await waitUntil { transport.issued.contains { $0.topic == "t/31" } })
            #expect(
                transport.issued.map(\.topic) == (1...window).map { "track/\($0)" } + ["t/31"],
                "nothing more was handed over while the window was full")
            #expect(await acknowledgeAll(until: 31, transport))
            #expect(transport.issued.map(\.topic).filter { $0 != "t/31" } == (1...30).map { "track/\($0)" })
        }
    }

    /// Of a retained topic's waiting messages only the newest is sent, whatever room the window has.
    @Test func onlyTheNewestOfARetainedTopicsBacklogIsSent() async throws {
        // Twenty track batches, with the retained location after every fifth.
        let items = (1...20).flatMap { n in [Self.trackItem(n)] + (n % 5 == 0 ? [Self.trackItem(n, retain: true)] : [])
        }
        try await withPublisher(waiting: items) { _, transport in
            #expect(await acknowledgeAll(until: 21, transport))
            #expect(
                transport.issued.map(\.topic) == (1...20).map { "track/\($0)" } + ["location"],
                "the three older locations are not sent")
            #expect(String(decoding: transport.issued.last!.payload, as: UTF8.self).hasPrefix("20:"))
        }
    }

    /// SIGTERM's path: the graceful shutdown stops issuing at once, gives acknowledgements in flight their
    /// grace, deletes what was acknowledged, and leaves the rest for the next start.
    @Test func aGracefulShutdownDeletesWhatWasAcknowledgedAndKeepsTheRest() async throws {
        let store = try await store()
        let outbox = try await Outbox.open(store, logger: logger)
        let transport = FakeTransport()
        let publisher = OutboxPublisher(outbox: outbox, client: transport, logger: logger)
        try await outbox.enqueue((1...3).map(Self.item))
        try await testGracefulShutdown { trigger in
            let running = Task { try await publisher.run() }
            #expect(await waitUntil { transport.issued.count == 3 })
            transport.issued[0].ticket.complete(.success(.success))
            trigger.triggerGracefulShutdown()
            try await running.value
        }
        #expect(try await store.pending(after: 0, limit: 10).map(\.topic) == ["t/2", "t/3"])
        await store.close()
    }
}
