/// A look applied to the saved photo's pixels before it is encoded, as the phone's filters do.
///
/// A picker control chooses one per item through its `effects` (board field): the shipped
/// boards' Filter picker offers None, Mono, Vivid and Warm.
public enum PhotoEffect: String, CaseIterable, Hashable, Sendable {
    /// The pixels as the camera gave them.
    case none
    /// Black and white: neutral chroma.
    case mono
    /// Stronger colours: chroma pushed away from grey.
    case vivid
    /// Warmer colours: chroma shifted towards red and yellow, away from blue.
    case warm
}
