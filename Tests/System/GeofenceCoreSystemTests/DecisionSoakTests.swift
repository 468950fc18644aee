import GeofenceCore
import PropertyBased
import ReceiverSimulation
import TestSupport
import Testing

/// The decision rule's soak: a parked vehicle through a whole simulated day of a real receiver's noise, for
/// six receivers. The day is most of the pure core's test time, so it runs in the system lane; the unit
/// lane keeps a six-hour run (`MultipathPropertyTests`) and the old rule's hour (`DecisionNoiseTests`).
/// Not shrunk: a failing day takes minutes to run, and shrinking would run it hundreds of times before
/// it reported; the failure's message names the receiver's profile, and the seed reproduces it.
@Suite(.offTheCooperativePool(.computing), .shrinking(false)) struct DecisionSoakTests {
    static let receivers = Gen.double(in: 1.5...8)
    static let correlationTimes = Gen.double(in: 1...60)

    @Test func aParkedVehicleNeverChangesSidesInADay() async {
        // 48 fences 0.5 to 10 m from the vehicle, inside and outside: circles, polygon edges and vertices,
        // corridor edges. With and without Doppler speed (a GPX has none).
        let parked = ParkedVehicle()
        await propertyCheck(
            count: 6, input: Self.receivers, Self.correlationTimes, Gen.bool, Gen.bool, Gen.int(in: 0...Int(Int32.max))
        ) { accuracy, tau, underReports, hasSpeed, seed in
            let profile = SimulatedReceiver.Profile(
                accuracy: accuracy, correlationTime: tau, underReportingRate: underReports ? 0.1 : 0,
                speedSigma: hasSpeed ? 0.1 : nil)
            let result = parked.run(profile, seed: UInt64(seed), hours: 24)
            #expect(
                result.transitions == 0,
                "\(profile), seed \(seed): \(result.transitions) transitions, fences \(result.flappingFences.sorted())")
            // Every fence 10 m away is decided, and on the right side.
            #expect(result.initials >= 8, "\(profile): only \(result.initials) initial states")
            #expect(result.wrongInitials == 0, "\(profile): \(result.wrongInitials) initial states on the wrong side")
        }
    }
}
