import GeofenceCore
import TestSupport
import Testing

@testable import Geocoding

@Suite(.offTheCooperativePool(.computing)) struct ForwardGeocodingTests {
    let geocoder = Geocoder(gazetteer: TestGazetteer.shared)

    func best(_ query: String, in region: String? = nil) async throws -> Placemark {
        try await geocoder.geocodeAddressString(query, in: region, limit: 1)[0]
    }

    @Test func diacriticsAndCaseDoNotMatter() async throws {
        #expect(try await best("zurich").name == "Zürich")
        #expect(try await best("ZÜRICH").name == "Zürich")
        #expect(try await best("sao paulo").name == "São Paulo")
        #expect(try await best("Malmo").isoCountryCode == "SE")
    }

    @Test func exonymsFindThePlace() async throws {
        let munich = try await best("Munich")
        #expect(munich.isoCountryCode == "DE" && munich.population > 1_000_000)
        #expect(try await best("Wien").name == "Vienna")
        #expect(try await best("Lisboa").name == "Lisbon")
        #expect(try await best("Москва").isoCountryCode == "RU")
    }

    @Test func qualifiersNarrowAndRankingIsByPopulation() async throws {
        #expect(try await best("Paris").isoCountryCode == "FR")
        let us = try await geocoder.geocodeAddressString("Paris, US", limit: 10)
        #expect(us.allSatisfy { $0.isoCountryCode == "US" } && us.count >= 2)
        #expect(us[0].administrativeArea == "Texas")
        #expect(zip(us, us.dropFirst()).allSatisfy { $0.population >= $1.population })
        #expect(try await best("Paris, United States").administrativeArea == "Texas")
        #expect(try await best("Springfield, Illinois").administrativeArea == "Illinois")
        #expect(try await best("Paris", in: "CA").isoCountryCode == "CA")
        #expect(try await best("Frankfurt").name == "Frankfurt am Main")
        #expect(try await best("Frankfurt, Brandenburg").name == "Frankfurt (Oder)")
    }

    @Test func everyPlaceIsFoundByItsOwnName() throws {
        // The file's keys were made in Python and the query's here: every place must be found by its own
        // name, whatever its script.
        let g = TestGazetteer.shared
        var rng = SplitMix64(seed: 9)
        for _ in 0..<3000 {
            let place = Int.random(in: 0..<g.count, using: &rng)
            let name = g.placemark(place, distance: nil).name
            guard !NameKey.normalized(name).isEmpty else { continue }
            let found = try g.forward(name, limit: 1000)
            #expect(found.contains { $0.location == g.coordinate(of: place) }, "\(name) not found by its own name")
        }
    }

    @Test func nonsenseAndEmptyQueriesAreTypedErrors() async {
        await #expect(throws: GeocodingError.noMatch("Xqzzyplorf")) {
            try await geocoder.geocodeAddressString("Xqzzyplorf")
        }
        await #expect(throws: GeocodingError.emptyQuery) { try await geocoder.geocodeAddressString("  ,, ") }
        await #expect(throws: GeocodingError.noMatch("Paris, Narnia")) {
            try await geocoder.geocodeAddressString("Paris, Narnia")
        }
    }

    @Test func keysFoldAsTheBuilderDoes() {
        #expect(NameKey.normalized("Straße") == "strasse")
        #expect(NameKey.normalized("St. Gallen") == "st gallen")
        #expect(NameKey.normalized("  Køge ") == "koge")
        #expect(NameKey.normalized("Łódź") == "lodz")
    }
}
