/// A weak reference to an object of the loop, carried through other threads but read only on
/// the loop's thread (in work the loop's mailbox runs): hence unchecked.
public struct LoopBound<Object: AnyObject>: @unchecked Sendable {
    public weak var object: Object?

    public init(_ object: Object) { self.object = object }
}
