import AgentTestSupport
import Mosquitto
import Testing

@testable import GeofenceAgent

/// `mqtt.hosts` in config.json: read, printed back, and refused with the key's path.
@Suite(.offTheCooperativePool(.computing)) struct MQTTHostsConfigurationTests {
    func parse(_ mqtt: String) -> String {
        do {
            let c = try AgentConfiguration.parse(
                Array(#"{"fleet":"f","vehicle":"v","mqtt":\#(mqtt)}"#.utf8), name: "config.json")
            let again = try AgentConfiguration.parse(Array(c.json.jsonText.utf8), name: "printed")
            guard again == c else { return "printed differently: \(c.json.jsonText)" }
            return ([MQTTBroker(host: c.mqtt.host, port: c.mqtt.port)] + c.mqtt.failover).map(\.description).joined(
                separator: " ") + " after \(c.mqtt.failoverAfter)"
        } catch {
            return "\(error)"
        }
    }

    @Test func brokersInOrder() {
        #expect(
            parse(#"{"hosts":["a.example:8883","b.example"],"port":1884,"failoverAfter":5}"#)
                == "a.example:8883 b.example:1884 after 5.0")
        #expect(parse(#"{"host":"a.example"}"#) == "a.example:1883 after 10.0")
        #expect(
            parse(#"{"hosts":["a"],"host":"b"}"#).contains(
                "mqtt.hosts: give the brokers in mqtt.hosts or one in mqtt.host, not both"))
        #expect(parse(#"{"hosts":[]}"#).contains("mqtt.hosts: expected a list"))
        #expect(parse(#"{"hosts":["a:99999"]}"#).contains("mqtt.hosts[0]: port '99999' is not 1–65535"))
        #expect(
            parse(#"{"hosts":["a",7]}"#).contains("mqtt.hosts[1]: expected \"HOST\" or \"HOST:PORT\", found number"))
        #expect(parse(#"{"hosts":[":1883"]}"#).contains("mqtt.hosts[0]"))
        #expect(parse(#"{"failoverAfter":0}"#).contains("mqtt.failoverAfter"))
    }
}
