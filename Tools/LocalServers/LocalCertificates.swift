import Foundation

/// A CA and a server certificate for 127.0.0.1, made with openssl at test time; and a second CA that
/// did not sign anything, for the wrong-CA test.
public struct LocalCertificates: Sendable {
    public let directory: URL
    public var caFile: String { directory.appendingPathComponent("ca.crt").path }
    public var otherCAFile: String { directory.appendingPathComponent("other-ca.crt").path }
    public var certificateFile: String { directory.appendingPathComponent("server.crt").path }
    public var keyFile: String { directory.appendingPathComponent("server.key").path }

    public init(in directory: URL) throws {
        self.directory = directory
        let openssl = "/usr/bin/openssl"
        try "subjectAltName=IP:127.0.0.1\n".write(
            to: directory.appendingPathComponent("san.ext"), atomically: true, encoding: .utf8)
        for ca in ["ca", "other-ca"] {
            try LocalProcess.run(
                openssl,
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(ca).key", "-out", "\(ca).crt",
                    "-days", "2", "-subj", "/CN=geofence-agent test \(ca)",
                ], in: directory)
        }
        try LocalProcess.run(
            openssl,
            [
                "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                "-subj", "/CN=127.0.0.1",
            ], in: directory)
        try LocalProcess.run(
            openssl,
            [
                "x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
                "-out", "server.crt", "-days", "2", "-extfile", "san.ext",
            ], in: directory)
    }
}
