extension Array where Element == BoardLine {
    /// The debounce period to ask of the kernel for each line (libgpiod 2.x can), zero for a line that
    /// must be debounced in software; in line order.
    ///
    /// The kernel stamps a debounced edge when its period has passed, not at the first edge of the run,
    /// so a kernel-debounced press would read `debounceMs` late (and its zero-shutter-lag frame with it).
    /// Software debounce stamps a confirmed change with the first edge, so debounce adds no latency to a
    /// press instant. Hence the buttons (`half`, `full`, `secondary`) are always debounced in software.
    /// A pad is left to the kernel only on a rig with a `half` line: there a pad's instant moves a touch's
    /// start and end together (a swipe's steps and speed are differences, unchanged), never a press. On a
    /// rig without `half` a strip tap is the light press, so the pads are debounced in software too.
    public var kernelDebounces: [Nanoseconds] {
        let hasHalf = contains { $0.role == .half }
        return map { line in
            line.role == .pad && hasHalf ? line.debounce : .zero
        }
    }
}
