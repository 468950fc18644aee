import Foundation
import GeofenceCore
import SQLite

/// Read-only access to a store, beside a running agent or without one: what `status` and `conditions`
/// show. It never writes, never migrates and never takes the agent's lock.
public final class StoreReader {
    /// One stored condition as the CLI lists it (without its definition, which can be large).
    public struct Listing: Sendable, Equatable {
        public var monitor: String
        public var identifier: String
        public var state: ConditionState
        public var since: Date?
        public var version: Int64?
        public var source: String
    }

    private let db: Database
    public let path: String

    /// Opens the store read-only. Nil when there is no store at `path` yet.
    public static func open(_ path: String) throws(StoreError) -> StoreReader? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        do {
            return StoreReader(db: try Database(path: path, create: false, readOnly: true), path: path)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    private init(db: Database, path: String) {
        self.db = db
        self.path = path
    }

    /// Every condition, by monitor then identifier.
    public func conditions() throws(StoreError) -> [Listing] {
        do {
            let s = try db.statement(
                "SELECT monitor, identifier, state, since, version, source FROM conditions ORDER BY monitor, identifier"
            )
            var rows: [Listing] = []
            while try s.step() {
                rows.append(
                    Listing(
                        monitor: s.text(0) ?? "", identifier: s.text(1) ?? "",
                        state: s.text(2).flatMap(ConditionState.init(rawValue:)) ?? .unknown,
                        since: s.isNull(3) ? nil : Date(timeIntervalSince1970: s.double(3)),
                        version: s.isNull(4) ? nil : s.int(4), source: s.text(5) ?? ""))
            }
            return rows
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// The text each condition with this identifier was defined by, in `monitor` or in every monitor.
    public func definitions(of identifier: String, monitor: String? = nil) throws(StoreError) -> [(
        monitor: String, definition: String
    )] {
        do {
            let s = try db.statement(
                """
                SELECT monitor, definition, definition_deflated, definition_size FROM conditions
                WHERE identifier = ?1 AND (?2 IS NULL OR monitor = ?2) ORDER BY monitor
                """
            ).bind(.text(identifier), .optional(monitor))
            var out: [(monitor: String, definition: String)] = []
            while try s.step() {
                out.append((s.text(0) ?? "", try AgentStore.definition(s, text: 1, deflated: 2, size: 3)))
            }
            return out
        } catch let error as SQLiteError {
            throw StoreError.from(error, path: path)
        } catch {
            throw StoreError.sqlite(SQLiteError(code: 1, message: "\(error)"))
        }
    }
}
