import AsyncBroadcast
import Foundation
import GPSDTestSupport
import Synchronization
import TestSupport
import Testing

/// The fix path's hand-over from a producer thread to one consumer task.
@Suite(.offTheCooperativePool(.waiting)) struct UnboundedChannelTests {
    @Test func everyElementArrivesOnceAndInOrderWhateverTheTiming() async {
        let channel = UnboundedChannel<Int>()
        let count = 20_000
        let producer = Thread {
            var random = UInt64(7)
            for i in 0..<count {
                channel.yield(i)
                // Now and then a pause, so that the consumer both finds elements queued and waits for them.
                random = random &* 6_364_136_223_846_793_005 &+ 1
                if random >> 60 == 0 { usleep(50) }
            }
            channel.finish()
        }
        producer.start()
        var received: [Int] = []
        for await i in channel { received.append(i) }
        #expect(received == Array(0..<count))
    }

    @Test func finishEndsTheSequenceAfterWhatIsQueued() async {
        let channel = UnboundedChannel<String>()
        channel.yield("a")
        channel.yield("b")
        channel.finish()
        channel.yield("after the end")
        var received: [String] = []
        for await s in channel { received.append(s) }
        #expect(received == ["a", "b"])
        #expect(channel.isFinished)
    }

    @Test func aCancelledConsumerEndsTheSequenceAndTellsTheProducer() async {
        let told = Atomic<Int>(0)
        let channel = UnboundedChannel<Int>(onConsumerCancelled: { told.add(1, ordering: .relaxed) })
        channel.yield(1)
        let consumer = Task {
            var received: [Int] = []
            for await i in channel { received.append(i) }
            return received
        }
        // Whether the consumer is waiting or not yet started when cancelled, its loop ends.
        consumer.cancel()
        let received = await consumer.value
        #expect(received.count <= 1)
        #expect(told.load(ordering: .relaxed) == 1)
        #expect(channel.isFinished)
        channel.yield(2)
        var after: [Int] = []
        for await i in channel { after.append(i) }
        #expect(after.isEmpty || after == [1])
    }

    @Test func aBroadcasterFeedsEveryChannelAndStreamAndForgetsCancelledChannels() async {
        let broadcaster = Broadcaster<Int>()
        let first = broadcaster.channel()
        let second = broadcaster.channel()
        let stream = broadcaster.stream()
        let gone = broadcaster.channel()
        let goneConsumer = Task { for await _ in gone {} }
        goneConsumer.cancel()
        await goneConsumer.value
        for i in 0..<100 { broadcaster.yield(i) }
        broadcaster.finish()
        var a: [Int] = []
        var b: [Int] = []
        var c: [Int] = []
        for await i in first { a.append(i) }
        for await i in second { b.append(i) }
        for await i in stream { c.append(i) }
        #expect(a == Array(0..<100) && b == a && c == a)
        var fromGone: [Int] = []
        for await i in gone { fromGone.append(i) }
        #expect(fromGone.isEmpty)
    }
}
