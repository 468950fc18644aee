import Foundation
import PropertyBased
import TestSupport
import Testing

@testable import GeofenceCore

/// A fix carries its receiver's device as a number for the path, so that a `Location` copies as plain bytes.
@Suite(.offTheCooperativePool(.computing)) struct DeviceNameTests {
    @Test func aNameGivesBackItsPathAndEqualsTheNamesOfThatPathOnly() async {
        // Short strings of a small alphabet: many pairs are the same path.
        let path = Gen.lowercaseLetter.string(of: 0...2)
        await propertyCheck(count: 300, input: path, path) { a, b in
            #expect(DeviceName(a).path == a)
            #expect((DeviceName(a) == DeviceName(b)) == (a == b), "\(a) and \(b)")
        }
    }

    @Test func aLocationStaysAPlainValue() {
        // A reference in it (a String) would send every copy of a fix through the runtime's witnesses.
        #expect(_isPOD(Location.self))
        #expect(_isPOD(LiveUpdate.self))
    }

    @Test func aLocationsDeviceIsItsPath() throws {
        var location = Location(
            coordinate: Coordinate(latitude: 52, longitude: 5), horizontalAccuracy: 3, timestamp: Date(),
            device: "/dev/serial/by-id/usb-u-blox_AG_-_www.u-blox.com_u-blox_GNSS_receiver-if00")
        #expect(location.device == "/dev/serial/by-id/usb-u-blox_AG_-_www.u-blox.com_u-blox_GNSS_receiver-if00")
        var other = location
        other.device = "/dev/ttyACM0"
        #expect(other != location)
        other.device = location.device
        #expect(other == location)
        location.device = nil
        #expect(location.device == nil && location.deviceName == nil)
    }

    @Test func aLocationIsCodedWithItsDevicesPath() throws {
        let location = Location(
            coordinate: Coordinate(latitude: 52, longitude: 5), horizontalAccuracy: 3,
            timestamp: Date(timeIntervalSince1970: 1_767_225_600), device: "/dev/ttyUSB1")
        let data = try JSONEncoder().encode(location)
        let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(object["device"] as? String == "/dev/ttyUSB1")
        #expect(try JSONDecoder().decode(Location.self, from: data) == location)
    }

    @Test func aFullRegistryNamesEveryNewPathTheOverflowPath() {
        var registry = DeviceName.Registry(capacity: 2)
        let a = registry.number(for: "/dev/ttyACM0")
        let b = registry.number(for: "/dev/ttyACM1")
        let c = registry.number(for: "/dev/ttyACM2")
        let d = registry.number(for: "/dev/ttyACM3")
        #expect(a != b && b != c && a != c)
        #expect(c == d)
        #expect(registry.number(for: "/dev/ttyACM0") == a)
        #expect(registry.paths == ["/dev/ttyACM0", "/dev/ttyACM1", DeviceName.overflowPath])
    }
}
