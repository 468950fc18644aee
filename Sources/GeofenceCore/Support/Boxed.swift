/// A value kept on the heap, for a large field that most instances leave empty: inline, an optional
/// is as large as its value, in every one of 100,000 records.
final class Boxed<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }
}

extension Boxed: Equatable where Value: Equatable {
    static func == (l: Boxed, r: Boxed) -> Bool { l === r || l.value == r.value }
}
