import AgentOutputs
import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import GeofenceAgent

/// The fix processor's parts that decide without the store: which locations go out, and the commits queue.
@Suite(.offTheCooperativePool(.computing)) struct FixProcessingPartsTests {
    func location(_ second: Double, east metres: Double = 0) -> Location {
        Location(
            coordinate: Coordinate(latitude: 52, longitude: 5 + metres / 68_600), horizontalAccuracy: 5,
            timestamp: Date(timeIntervalSince1970: 1_700_000_000 + second))
    }

    @Test func liveUpdatesGoOutOnlyWhileStartedAndBeforeARequestsAnswer() {
        var reports = LocationReports(filter: LiveUpdateFilter(configuration: .default), started: false)
        let quiet = reports.observe(location(0))
        #expect(!quiet)
        #expect(reports.takeDue().isEmpty)
        reports.started = true
        reports.request()
        let due1 = reports.observe(location(1, east: 500))
        #expect(due1)
        let due = reports.takeDue()
        #expect(due.map(\.reason) == [LocationHappening.Reason.liveUpdate, .requested])
        #expect(due.allSatisfy { $0.update.location == location(1, east: 500) })
        #expect(!reports.isRequested)
        #expect(reports.takeDue().isEmpty, "each goes out once")
    }

    @Test func aRequestNoFixAnswersSettlesForTheLastFixOnceAfterTheWait() {
        let now = ContinuousClock.now
        var reports = LocationReports(filter: LiveUpdateFilter(configuration: .default), started: false)
        reports.request(at: now)
        #expect(reports.takeOverdue(at: now + .seconds(1)) == nil, "not overdue yet")
        #expect(reports.takeOverdue(at: now + LocationReports.reportWait) == .noFix)
        #expect(reports.takeOverdue(at: now + .seconds(60)) == nil, "answered once")
        _ = reports.observe(location(3))
        _ = reports.takeDue()
        reports.request(at: now)
        let overdue = reports.takeOverdue(at: now + LocationReports.reportWait)
        #expect(overdue == .answer(LiveUpdate(location: location(3), isStationary: false)))
    }

    @Test func theQueueDropsItsOldestPastTheMaximumAndStoresOnlyNewerLastFixes() throws {
        var queue = CommitQueue()
        var monitors = MonitorSet(configuration: .eachFixAlone)
        monitors.add(try Condition.circle(center: location(0).coordinate, radius: 100), identifier: "c", monitor: "m")
        _ = monitors.process(location(0))
        queue.appendLastFixes(of: monitors)
        #expect(queue.count == 1)
        #expect(queue.first?.lastFix?.timestamp == location(0).timestamp)
        queue.firstCommitted()
        queue.appendLastFixes(of: monitors)
        #expect(queue.isEmpty, "the same fix is not stored twice")
        for _ in 0..<CommitQueue.maximum { queue.append(PendingCommit(tripPhase: .unknown, items: [])) }
        let dropped = queue.append(PendingCommit(lastFixOf: monitors["m"]!, fix: location(9)))
        #expect(dropped, "the oldest is dropped")
        #expect(queue.count == CommitQueue.maximum)
        #expect(queue.waiting.last?.lastFix == location(9))
    }

    @Test func aTripsPhaseIsStoredWithItsEventsAndEveryIntervalWhileDriving() {
        var recorder = TripPhaseRecorder()
        let outputs = MultiplexOutput([])
        #expect(recorder.commit(for: [], phase: .unknown, at: location(0), outputs: outputs, places: nil) == nil)
        let driving = TripDetector.Phase.driving(
            Trip(
                start: location(0).timestamp, startCoordinate: location(0).coordinate, distance: 0, maximumSpeed: 0,
                lastFix: location(0).timestamp))
        let first = recorder.commit(for: [], phase: driving, at: location(1), outputs: outputs, places: nil)
        #expect(first?.settings.map(\.key) == [TripPhaseRecorder.key])
        #expect(recorder.commit(for: [], phase: driving, at: location(300), outputs: outputs, places: nil) == nil)
        #expect(
            recorder.commit(
                for: [], phase: driving, at: location(1 + TripPhaseRecorder.interval), outputs: outputs, places: nil)
                != nil)
    }
}
