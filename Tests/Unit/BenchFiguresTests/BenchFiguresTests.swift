import BenchFigures
import TestSupport
import Testing

/// The benchmarks' statistics and the soak's verdict, which decide what a benchmark reports as met.
@Suite(.offTheCooperativePool(.computing)) struct BenchFiguresTests {
    @Test func quantilesAreNearestRankAndTheMedianAveragesAnEvenMiddle() {
        let samples = (1...100).map(Double.init)
        #expect(Statistics.quantile(samples, 0.5) == 50)
        #expect(Statistics.quantile(samples, 0.99) == 99)
        #expect(Statistics.quantile(samples, 1) == 100)
        #expect(Statistics.quantile(samples, 0) == 1)
        #expect(Statistics.quantile([UInt64(7)], 0.99) == 7)
        #expect(Statistics.quantile([Double](), 0.5).isNaN)
        #expect(Statistics.median([3, 1, 2]) == 2)
        #expect(Statistics.median([4, 1, 3, 2]) == 2.5)
        #expect(Statistics.median([]).isNaN)
    }

    static let drive: [(identifier: String, event: String)] = [
        ("a", "enter"), ("b", "enter"), ("a", "exit"), ("b", "exit"), ("a", "enter"),
    ]
    static func flat(_ seconds: Double, growth: Double = 0) -> [(at: Double, megabytes: Double)] {
        stride(from: 0, through: seconds, by: 5).map { ($0, 40 + growth * $0 / seconds) }
    }

    @Test func aSoakPassesWhenEveryGeofencesTransitionsArriveInOrderAndMemoryStaysFlat() {
        // Heard interleaved differently across geofences: each geofence's own order is what counts.
        let heard = [Self.drive[1], Self.drive[0], Self.drive[3], Self.drive[2], Self.drive[4]]
        let verdict = SoakVerdict(expected: Self.drive, heard: heard, rss: Self.flat(720), drivenIn: 720, speed: 50)
        #expect(verdict.delivered && verdict.memoryChecked && verdict.memoryFlat && verdict.passed)
        #expect(verdict.firstHourMegabytes == 40 && verdict.lastTenthMegabytes == 40)
    }

    @Test func aMissingOrReorderedTransitionFailsTheSoak() {
        let missing = SoakVerdict(
            expected: Self.drive, heard: Array(Self.drive.dropLast()), rss: Self.flat(720), drivenIn: 720, speed: 50)
        #expect(!missing.delivered && !missing.passed)
        let swapped = [Self.drive[2], Self.drive[1], Self.drive[0], Self.drive[3], Self.drive[4]]
        let reordered = SoakVerdict(expected: Self.drive, heard: swapped, rss: Self.flat(720), drivenIn: 720, speed: 50)
        #expect(!reordered.delivered && !reordered.passed)
    }

    @Test func memoryThatGrowsFailsALongSoakAndAShortOneIsNotJudgedOnIt() {
        let growing = SoakVerdict(
            expected: Self.drive, heard: Self.drive, rss: Self.flat(720, growth: 8), drivenIn: 720, speed: 50)
        #expect(growing.memoryChecked && !growing.memoryFlat && !growing.passed, "20% growth over the drive")
        let withinTenPercent = SoakVerdict(
            expected: Self.drive, heard: Self.drive, rss: Self.flat(720, growth: 3), drivenIn: 720, speed: 50)
        #expect(withinTenPercent.passed)
        let short = SoakVerdict(
            expected: Self.drive, heard: Self.drive, rss: Self.flat(120, growth: 8), drivenIn: 120, speed: 50)
        #expect(!short.memoryChecked && short.passed)
    }
}
