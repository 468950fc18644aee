import Foundation
import GeofenceCore
import TestSupport
import Testing

@testable import FuzzChecks

/// Every seed of every fuzz target, and every input a fuzzer once failed on (Fuzz/Regressions, kept by
/// scripts/fuzz), checked as the fuzz targets check them.
@Suite(.offTheCooperativePool(.computing)) struct ReplayTests {
    static let fuzz = Repository.url("Fuzz")

    static func inputs(_ check: FuzzCheck, in folder: String) -> [URL] {
        let directory = fuzz.appendingPathComponent(folder).appendingPathComponent(check.rawValue)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { !$0.hasPrefix(".") }.sorted().map { directory.appendingPathComponent($0) }
    }

    @Test(arguments: FuzzCheck.allCases)
    func everySeedPasses(check: FuzzCheck) throws {
        let seeds = Self.inputs(check, in: "Corpus")
        #expect(seeds.count >= 3, "Fuzz/Corpus/\(check.rawValue) holds \(seeds.count) seeds")
        for url in seeds {
            let problems = check.problems(Array(try Data(contentsOf: url)))
            #expect(problems.isEmpty, "\(url.lastPathComponent): \(problems)")
        }
    }

    @Test(arguments: FuzzCheck.allCases)
    func everyOnceFailingInputPasses(check: FuzzCheck) throws {
        for url in Self.inputs(check, in: "Regressions") {
            let problems = check.problems(Array(try Data(contentsOf: url)))
            #expect(problems.isEmpty, "\(url.lastPathComponent): \(problems)")
        }
    }

    /// The comparison with Foundation sees a difference in value, in type and in Unicode scalars (Swift's
    /// String equality would call "é" and "e" with a combining accent equal), and none where there is none.
    @Test func theComparisonSeesDifferences() {
        #expect(JSONCheck.difference(.number(1), NSNumber(value: 2), at: "$") != nil)
        #expect(JSONCheck.difference(.bool(true), NSNumber(value: 1), at: "$") != nil)
        #expect(JSONCheck.difference(.string("\u{E9}"), "e\u{301}", at: "$") != nil)
        #expect(JSONCheck.difference(.array([.null]), [Any](), at: "$") != nil)
        let same = try! JSONSerialization.jsonObject(with: Data(#"{"a":[1,2.5,"x",true,null]}"#.utf8))
        #expect(
            JSONCheck.difference(try! JSONParser.parse(Array(#"{"a":[1,2.5,"x",true,null]}"#.utf8)), same, at: "$")
                == nil)
        #expect(FuzzCheck.json.problems(Array("[1,]".utf8)).isEmpty, "both refuse a trailing comma")
    }
}
