import AgentTestSupport
import Mosquitto
import TestSupport
import Testing

@testable import GeofenceAgent

/// Batches keep arrival order and their size limit, also while messages keep arriving.
@Suite(.offTheCooperativePool(.agentsPool)) struct MessageBatcherTests {
    @Test func batchesKeepArrivalOrderWhileMessagesKeepArriving() {
        let batcher = MessageBatcher(maximum: 2_000)
        var next = 0
        var taken: [Int] = []
        for _ in 0..<20 {
            // 3,000 arrive for every 2,000 taken: the buffer never drains until the end.
            for _ in 0..<3_000 {
                batcher.add(MQTTMessage(topic: "t/\(next)", payload: []))
                next += 1
            }
            let batch = batcher.take()
            #expect(batch.count == 2_000)
            taken += batch.map { Int($0.topic.dropFirst(2))! }
        }
        while case let batch = batcher.take(), !batch.isEmpty {
            #expect(batch.count <= 2_000)
            taken += batch.map { Int($0.topic.dropFirst(2))! }
        }
        #expect(taken == Array(0..<next))
    }
}
