#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One rig-wide shot, as its origin publishes it: every node takes the frame of this instant.
public struct RigShot: Hashable, Sendable {
    /// A UUID the origin made; a node answers each id once.
    public var id: String
    /// The press on the origin's CLOCK_REALTIME, in nanoseconds since the epoch: the one clock
    /// the rig's nodes share (through NTP or chrony); each converts it to its own monotonic clock.
    public var at: Int64
    /// The node where the press happened.
    public var origin: String

    public init(id: String, at: Int64, origin: String) {
        self.id = id
        self.at = at
        self.origin = origin
    }

    /// Whether `id` is a UUID in its 36-character text form (hex digits in groups of 8-4-4-4-12),
    /// the only shot id a node takes: the id names the shot's folder or file under the photos,
    /// a topic level and a hook argument, so nothing else (`..`, a leading dot or dash, a slash)
    /// may reach them.
    public static func isValidID(_ id: String) -> Bool {
        id.utf8.count == 36 && UUID(uuidString: id) != nil
    }
}

/// A node's answer to a shot.
public struct RigShotResult: Hashable, Sendable {
    public enum Outcome: Hashable, Sendable {
        /// A photo: its frame's start of exposure on the node's CLOCK_REALTIME, in nanoseconds.
        case photo(frameAt: Int64)
        /// The node could not take the instant: too old, not in its ring, capture unavailable.
        case missed(reason: String)
        /// The node took it, but the photo failed (the camera stalled, the disk is full).
        case failed(reason: String)
    }

    public var shot: String
    public var node: String
    public var outcome: Outcome

    public init(shot: String, node: String, outcome: Outcome) {
        self.shot = shot
        self.node = node
        self.outcome = outcome
    }
}

/// What the origin of a shot learnt from the rig: who answered how, and how close the frames came.
public struct RigShotCompletion: Hashable, Sendable {
    public var shot: String
    /// The nodes asked: those seen online when the shot was taken, and any other that answered.
    public var nodes: Int
    public var photos: Int
    public var missed: Int
    public var failed: Int
    /// The nodes that were online but did not answer within the timeout, by name.
    public var silent: [String]
    /// The latest frame time minus the earliest, across the photos; nil with fewer than one photo.
    public var spread: Nanoseconds?
}

/// The shots a node has seen, and those it originated and collects results for.
///
/// A value type fed the shots and results as they arrive, with the time; it returns the
/// completions and says when it next needs the time (``nextDeadline``). The owner publishes.
public struct RigShotBook: Sendable {
    /// How many shot ids are remembered to refuse a second delivery (QoS 1 may deliver twice).
    public static let remembered = 4096

    private var seen: Set<String> = []
    private var seenOrder: [String] = []
    private var seenStart = 0

    private struct Collecting: Sendable {
        var shot: RigShot
        var deadline: Instant
        var expected: Set<String>
        var results: [String: RigShotResult.Outcome] = [:]
        /// The results from nodes not expected.
        var unexpected = 0
    }
    /// The shots this node originated, oldest first (few: one per press, for `shotTimeoutMs`).
    private var collecting: [Collecting] = []

    public init() {}

    /// Records that shot `id` arrived; false when it had arrived before (and must be ignored).
    public mutating func firstSighting(of id: String) -> Bool {
        guard seen.insert(id).inserted else { return false }
        if seenOrder.count - seenStart >= Self.remembered {
            seen.remove(seenOrder[seenStart])
            seenStart += 1
            if seenStart >= Self.remembered {
                seenOrder.removeFirst(seenStart)
                seenStart = 0
            }
        }
        seenOrder.append(id)
        return true
    }

    /// Starts collecting the results of a shot this node originated, expecting an answer from
    /// each of `nodes`, until `now + timeout`.
    public mutating func originate(_ shot: RigShot, expecting nodes: Set<String>, now: Instant, timeout: Nanoseconds) {
        _ = firstSighting(of: shot.id)
        collecting.append(Collecting(shot: shot, deadline: now + timeout, expected: nodes))
    }

    /// A node's result: the shot's completion when it was the last one expected, else nil.
    /// Results of shots this node does not collect (another origin's, or finished) are ignored,
    /// and so is a node's second answer. Answers from nodes not expected count only while the
    /// shot has heard of fewer than ``RigRoster/capacity`` nodes: anyone may publish on a
    /// result topic.
    public mutating func record(_ result: RigShotResult) -> RigShotCompletion? {
        guard let index = collecting.firstIndex(where: { $0.shot.id == result.shot }) else { return nil }
        guard collecting[index].results[result.node] == nil else { return nil }
        if !collecting[index].expected.contains(result.node) {
            guard collecting[index].expected.count + collecting[index].unexpected < RigRoster.capacity else { return nil }
            collecting[index].unexpected += 1
        }
        collecting[index].results[result.node] = result.outcome
        guard collecting[index].expected.isSubset(of: collecting[index].results.keys) else { return nil }
        return Self.completion(of: collecting.remove(at: index))
    }

    /// Whether shot `id` is being collected.
    public func isCollecting(_ id: String) -> Bool { collecting.contains { $0.shot.id == id } }

    /// The shots whose timeout has come: complete with what answered.
    public mutating func expire(now: Instant) -> [RigShotCompletion] {
        var done: [RigShotCompletion] = []
        collecting.removeAll { entry in
            guard entry.deadline <= now else { return false }
            done.append(Self.completion(of: entry))
            return true
        }
        return done
    }

    /// Every shot still collected, complete as it stands (at shutdown).
    public mutating func expireAll() -> [RigShotCompletion] {
        defer { collecting.removeAll() }
        return collecting.map(Self.completion(of:))
    }

    /// When the earliest collection times out.
    public var nextDeadline: Instant? { collecting.map(\.deadline).min() }

    private static func completion(of entry: Collecting) -> RigShotCompletion {
        var photos: [Int64] = []
        var missed = 0, failed = 0
        for outcome in entry.results.values {
            switch outcome {
            case .photo(let frameAt): photos.append(frameAt)
            case .missed: missed += 1
            case .failed: failed += 1
            }
        }
        let answered = Set(entry.results.keys)
        let spread = photos.min().flatMap { low in photos.max().map { Nanoseconds(rawValue: $0 - low) } }
        return RigShotCompletion(shot: entry.shot.id, nodes: answered.union(entry.expected).count, photos: photos.count,
                                 missed: missed, failed: failed, silent: entry.expected.subtracting(answered).sorted(),
                                 spread: spread)
    }
}
