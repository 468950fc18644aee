import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import Geocoding

/// The `CLVisit`-shaped visit a stop makes, with its place from the offline gazetteer.
@Suite(.offTheCooperativePool(.computing)) struct VisitTests {
    let geocoder = Geocoder(gazetteer: TestGazetteer.shared)

    @Test func aStopInZwolleIsAVisitToZwolle() async throws {
        let zwolle = try await geocoder.geocodeAddressString("Zwolle, NL", limit: 1)[0]
        let arrival = Date(timeIntervalSince1970: 1_767_225_600)
        var stop = Stop(
            arrival: arrival, coordinate: zwolle.location, horizontalAccuracy: 1.5, conditions: ["depot"])
        let open = await geocoder.visit(stop)
        #expect(open.arrivalDate == arrival)
        #expect(open.departureDate == .distantFuture, "still there, as CLVisit says it")
        #expect(open.placemark?.locality == "Zwolle" && open.placemark?.isoCountryCode == "NL")
        #expect(open.horizontalAccuracy == 1.5)
        stop.departure = arrival.addingTimeInterval(900)
        #expect(await geocoder.visit(stop).departureDate == stop.departure)
    }

    @Test func withoutAGazetteerAVisitHasNoPlace() async {
        let none = Geocoder(unavailable: .dataNotLoaded("test"))
        let stop = Stop(
            arrival: Date(timeIntervalSince1970: 0), coordinate: Coordinate(latitude: 52, longitude: 5),
            horizontalAccuracy: 2, conditions: [])
        #expect(await none.visit(stop).placemark == nil)
    }
}
