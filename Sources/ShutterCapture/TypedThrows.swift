extension Array {
    /// `withUnsafeBufferPointer` that keeps `body`'s error type.
    ///
    /// Swift 6.0's standard library declares `withUnsafeBufferPointer` `rethrows`, so a closure
    /// that throws `CaptureError` makes the call throw `any Error`, which a `throws(CaptureError)`
    /// function cannot rethrow (6.1 and later carry the type through). The error is kept outside a
    /// non-throwing closure and thrown after it, so the behaviour is the same on every compiler.
    ///
    /// - Parameter body: given the array's elements; may throw `E`.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    @inlinable
    func withUnsafeBufferPointerTyped<R, E: Error>(_ body: (UnsafeBufferPointer<Element>) throws(E) -> R) throws(E) -> R {
        var failure: E?
        let result: R? = withUnsafeBufferPointer { buffer in
            do throws(E) { return try body(buffer) } catch { failure = error; return nil }
        }
        if let failure { throw failure }
        return result!
    }
}
