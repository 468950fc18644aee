import GeofenceCore
import TestSupport
import Testing

@testable import Geocoding

@Suite(.offTheCooperativePool(.computing)) struct ReverseGeocodingTests {
    let geocoder = Geocoder(gazetteer: TestGazetteer.shared)

    /// A city's own coordinates name the city (the nearest place is itself).
    @Test(arguments: ["Berlin", "Tokyo", "Zwolle", "São Paulo", "Sydney", "Nairobi", "Reykjavik", "Anchorage"])
    func bigCitiesAnswerAsThemselves(name: String) async throws {
        let city = try await geocoder.geocodeAddressString(name, limit: 1)[0]
        let p = try await geocoder.reverseGeocodeLocation(city.location)
        #expect(p.count == 1)
        #expect(p[0].name == city.name)
        #expect(p[0].isoCountryCode == city.isoCountryCode)
        #expect(p[0].distance! < 1)
    }

    /// Towns facing each other across a border, most of them across a river that Natural Earth's 1:10m
    /// outlines draw a kilometre or two off: each town's own centre names its own country.
    @Test(arguments: [
        ("Kehl", "DE"), ("Strasbourg", "FR"), ("Ciudad Juárez", "MX"), ("El Paso", "US"), ("Słubice", "PL"),
        ("Frankfurt (Oder)", "DE"), ("Görlitz", "DE"), ("Zgorzelec", "PL"), ("Narva", "EE"), ("Ivangorod", "RU"),
        ("Tornio", "FI"), ("Haparanda", "SE"), ("Gorizia", "IT"), ("Nova Gorica", "SI"), ("Valga", "EE"),
        ("Valka", "LV"),
        ("Kerkrade", "NL"), ("Herzogenrath", "DE"), ("Český Těšín", "CZ"), ("Cieszyn", "PL"),
    ])
    func borderTownsGetTheirOwnCountry(town: String, country: String) async throws {
        let place = try await geocoder.geocodeAddressString(town, in: country, limit: 1)[0]
        // A few hundred metres from the town's point, as a vehicle in its streets would be.
        for (north, east) in [(0.0, 0.0), (0.002, 0.0), (0.0, -0.002)] {
            let q = Coordinate(latitude: place.location.latitude + north, longitude: place.location.longitude + east)
            let p = try await geocoder.reverseGeocodeLocation(q)[0]
            #expect(p.isoCountryCode == country, "\(town) at \(q) gave \(p.name), \(p.isoCountryCode ?? "no country")")
        }
    }

    @Test func theOpenSeaGetsNoCountryButItsNearestPlaceAndDistance() async throws {
        let p = try await geocoder.reverseGeocodeLocation(Coordinate(latitude: 0, longitude: -30))[0]
        #expect(p.isoCountryCode == nil)
        #expect(p.country == nil)
        #expect(!p.name.isEmpty)
        #expect(p.distance! > 300_000)
    }

    @Test func theNearestPlaceIsTheNearestByAScan() throws {
        // Points across every continent and the sea: the tree's answer equals a scan over every place
        // (allowing for the country preference, which the scan applies too).
        let g = TestGazetteer.shared
        var rng = SplitMix64(seed: 5)
        for _ in 0..<100 {
            let q = Coordinate(
                latitude: Double.random(in: -60...70, using: &rng),
                longitude: Double.random(in: -180...180, using: &rng))
            let answer = try g.reverse(q)
            let best = g.nearestByScan(q, inCountry: answer.isoCountryCode)
            #expect(abs(best - answer.distance!) < 0.02, "\(q): tree \(answer.distance!) m, scan \(best) m")
        }
    }

    @Test func badCoordinatesAreRefused() async {
        await #expect(throws: GeocodingError.invalidCoordinate(latitude: 91, longitude: 0)) {
            try await geocoder.reverseGeocodeLocation(Coordinate(latitude: 91, longitude: 0))
        }
    }

    @Test func withoutDataEveryLookupSaysWhy() async {
        let none = Geocoder(unavailable: .dataNotLoaded("no file"))
        await #expect(throws: GeocodingError.dataNotLoaded("no file")) { try await none.geocodeAddressString("Zwolle") }
        #expect(throws: GeocodingError.self) { try Gazetteer(fileBytes: Array("GFGZ-not-really".utf8)) }
        #expect(throws: GeocodingError.self) { try Gazetteer(fileBytes: [1, 2, 3]) }
    }
}
