#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterSystem

// MARK: - inotify

/// A watch an ``Inotify`` instance holds: the number `inotify_add_watch` returned.
struct InotifyWatch: RawRepresentable, Hashable, Sendable {
    let rawValue: CInt
    init(rawValue: CInt) { self.rawValue = rawValue }
}

/// What an inotify watch reports, and what its events say (inotify's `IN_*` bits).
struct InotifyEvents: OptionSet, Hashable, Sendable {
    let rawValue: UInt32
    init(rawValue: UInt32) { self.rawValue = rawValue }

    /// `IN_CREATE`: an entry was made in the watched directory.
    static let created = InotifyEvents(rawValue: UInt32(IN_CREATE))
    /// `IN_MOVED_TO`: an entry was renamed into the watched directory.
    static let movedIn = InotifyEvents(rawValue: UInt32(IN_MOVED_TO))
    /// `IN_ATTRIB`: an entry's (or the directory's) mode, owner or links changed.
    static let attributesChanged = InotifyEvents(rawValue: UInt32(IN_ATTRIB))
    /// `IN_DELETE_SELF`: the watched directory itself was removed.
    static let removedSelf = InotifyEvents(rawValue: UInt32(IN_DELETE_SELF))
    /// `IN_MOVE_SELF`: the watched directory itself was renamed.
    static let movedSelf = InotifyEvents(rawValue: UInt32(IN_MOVE_SELF))
    /// `IN_IGNORED`: the kernel dropped the watch (its directory is gone, or it was removed).
    static let ignored = InotifyEvents(rawValue: UInt32(IN_IGNORED))
    /// `IN_Q_OVERFLOW`: events were lost (the queue was full).
    static let overflow = InotifyEvents(rawValue: UInt32(IN_Q_OVERFLOW))
    /// `IN_ONLYDIR`: watch the path only if it is a directory.
    static let onlyDirectory = InotifyEvents(rawValue: UInt32(IN_ONLYDIR))
}

/// One `struct inotify_event`: which watch, what happened, and the entry's name (empty for the
/// watched directory itself).
struct InotifyEvent: Hashable, Sendable {
    var watch: InotifyWatch
    var events: InotifyEvents
    var name: String
}

/// A non-blocking, close-on-exec inotify instance.
///
/// Used from one thread at a time (the ``DeviceArrivals`` queue, after its set-up).
final class Inotify {
    let descriptor: CInt

    /// The corresponding C function is `inotify_init1` (`IN_NONBLOCK | IN_CLOEXEC`).
    init() throws(CaptureError) {
        descriptor = try valueOrErrno { inotify_init1(CInt(IN_NONBLOCK | IN_CLOEXEC)) }
            .mapError { CaptureError.system("inotify_init1", $0, "watching for the camera's device node") }.get()
    }

    /// Watches `path` for `events`.
    ///
    /// The corresponding C function is `inotify_add_watch`.
    func addWatch(_ path: String, for events: InotifyEvents) throws(CaptureError) -> InotifyWatch {
        InotifyWatch(rawValue: try valueOrErrno { inotify_add_watch(descriptor, path, events.rawValue) }
            .mapError { CaptureError.system("inotify_add_watch", $0, path) }.get())
    }

    /// Stops `watch`; a watch the kernel dropped already is no error.
    ///
    /// The corresponding C function is `inotify_rm_watch`.
    func removeWatch(_ watch: InotifyWatch) {
        _ = inotify_rm_watch(descriptor, watch.rawValue)
    }

    /// Reads the events queued, until none is left (`EAGAIN`), calling `body` for each.
    ///
    /// The corresponding C function is `read` (of `struct inotify_event` records).
    func readEvents(_ body: (InotifyEvent) -> Void) throws(CaptureError) {
        let header = MemoryLayout<inotify_event>.size
        // Room for a few events with the longest names (the kernel refuses a read too small for the next one).
        let failure: Errno? = withUnsafeTemporaryAllocation(byteCount: 4 * (header + Int(NAME_MAX) + 1),
                                                           alignment: MemoryLayout<inotify_event>.alignment) { buffer in
            while true {
                let count: Int
                switch valueOrErrno({ read(descriptor, buffer.baseAddress, buffer.count) }) {
                case .success(let read): count = read
                case .failure(let errno): return errno == .wouldBlock ? nil : errno
                }
                if count == 0 { return nil }
                var offset = 0
                while offset + header <= count {
                    let record = buffer.baseAddress! + offset
                    let event = record.loadUnaligned(as: inotify_event.self)
                    let length = min(Int(event.len), count - offset - header)
                    // The name is NUL-padded to the record's length.
                    let name = UnsafeRawBufferPointer(start: record + header, count: length).prefix { $0 != 0 }
                    body(InotifyEvent(watch: InotifyWatch(rawValue: event.wd), events: InotifyEvents(rawValue: event.mask),
                                      name: String(decoding: name, as: UTF8.self)))
                    offset += header + Int(event.len)
                }
            }
        }
        if let failure { throw CaptureError.system("read", failure, "inotify events") }
    }

    deinit { close(descriptor) }
}

// MARK: - Where a V4L2 camera appears

/// Where a missing V4L2 camera will appear, and which directory events say it may have: the
/// decisions of ``DeviceArrivals``, without a system call (the caller says which paths exist).
enum DeviceArrival: Hashable, Sendable {
    /// A device node (or udev's symlink to one) by path: `/dev/video0`, `/dev/v4l/by-id/usb-…-video-index0`.
    case node(path: String)
    /// Any `/dev/videoN`: the first V4L2 capture device, or one named by its card.
    case videoNodes

    /// What an event in the watched directory means.
    enum Relevance: Hashable, Sendable {
        /// Nothing for this camera.
        case none
        /// The camera may be there now: look for it.
        case search
        /// A directory on the way to the node appeared (or the watched one went): watch again,
        /// nearer the node (or further up).
        case rewatch
    }

    /// Where the camera `settings` names will appear when it is a V4L2 one; `nil` when only libcamera
    /// (or nothing: `synthetic`) can provide it. A path is watched as such; a card name and no name
    /// at all are answered by the capture devices among `/dev/videoN` (with `auto`, libcamera is
    /// asked too: ``LibcameraArrivals`` watches that).
    init?(settings: CameraSettings) {
        guard settings.device != "synthetic", settings.backend != .libcamera else { return nil }
        if let device = settings.device, device.hasPrefix("/") {
            // Without a `.`/`..` component the ancestors are the path's prefixes.
            let components = device.split(separator: "/")
            guard !components.contains(where: { $0 == "." || $0 == ".." }) else { return nil }
            self = .node(path: "/" + components.joined(separator: "/"))
        } else {
            self = .videoNodes
        }
    }

    /// The path whose appearance matters: the node, or `/dev` for any video node.
    var path: String {
        switch self {
        case .node(let path): path
        case .videoNodes: "/dev"
        }
    }

    /// The directory to watch: the node's own directory when it exists, else the nearest one of its
    /// ancestors that does (udev makes `/dev/v4l/by-id` with the first camera's link), `/` at worst.
    func directoryToWatch(exists: (String) -> Bool) -> String {
        var directory = self == .videoNodes ? "/dev" : Self.parent(of: path)
        while directory != "/", !exists(directory) { directory = Self.parent(of: directory) }
        return directory
    }

    /// What `event` on the watch of `directory` means for this camera.
    func relevance(of event: InotifyEvent, in directory: String) -> Relevance {
        if !event.events.isDisjoint(with: [.removedSelf, .movedSelf, .ignored]) { return .rewatch }
        if event.events.contains(.overflow) { return .search }  // events were lost: one of them may have been the camera's
        guard !event.name.isEmpty else { return .none }  // the directory's own attributes
        switch self {
        case .videoNodes:
            let isVideoNode = event.name.hasPrefix("video") && Int(event.name.dropFirst(5)) != nil
            return isVideoNode ? .search : .none
        case .node(let path):
            let entry = (directory == "/" ? "" : directory) + "/" + event.name
            if entry == path { return .search }
            // A directory on the way to the node: the next one is to be watched.
            return path.hasPrefix(entry + "/") ? .rewatch : .none
        }
    }

    /// `path` without its last component (`/` for a top-level entry).
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}

// MARK: - The watch

/// Tells a loop when the V4L2 camera a board names may have appeared, so that a service waiting
/// for it looks again then, and only then, instead of once a second: an inotify watch on the
/// directory where its node (or udev's symlink) will be made, or on its nearest existing ancestor
/// while the directories on the way are still missing, moved down as they appear (and up, when
/// the watched one goes: udev removes `/dev/v4l/by-id` with the last camera's link).
///
/// `IN_CREATE` and `IN_MOVED_TO` see the node or link made (udev makes a link under a temporary
/// name and renames it); `IN_ATTRIB` sees udev give a node its group and mode after making it,
/// for a camera that could not be opened before (`EACCES`). The loop polls ``descriptor`` with
/// the camera's and calls ``take()``, which reads what came: idle, nothing wakes. Used from the
/// loop's thread only.
///
/// The corresponding C functions are `inotify_init1`, `inotify_add_watch` and `read`.
final class DeviceArrivals {
    let arrival: DeviceArrival
    private let inotify: Inotify
    private var due = false
    /// Whether a directory is watched: `false` once none could be (the caller's timer takes over).
    private(set) var isWatching = false
    private var watch: InotifyWatch?
    private var directory = "/"

    /// The events a watch asks for.
    static let watchedEvents: InotifyEvents = [.created, .movedIn, .attributesChanged, .removedSelf, .movedSelf, .onlyDirectory]

    /// Watches for the camera `settings` names when it is a V4L2 one; `nil` when it is not, or
    /// when inotify cannot be used (the caller keeps its timer).
    ///
    /// - Parameter searchIfPresent: when the node is there already once watched (it appeared
    ///   since the search that failed), the first ``take()`` says so; with `videoNodes`, always
    ///   once (which node is a camera is for the search to say).
    init?(watching settings: CameraSettings, searchIfPresent: Bool) {
        guard let arrival = DeviceArrival(settings: settings), let inotify = try? Inotify() else { return nil }
        self.arrival = arrival
        self.inotify = inotify
        guard rewatch() else { return nil }
        if searchIfPresent, arrival == .videoNodes || Self.exists(arrival.path) { due = true }
    }

    /// Readable when inotify has events for the watch: poll it for input.
    var descriptor: CInt { inotify.descriptor }

    /// Whether the camera may have appeared since the watch began or this was last asked: reads
    /// the events that came (without waiting).
    func take() -> Bool {
        eventsArrived()
        defer { due = false }
        return due
    }

    /// Watches the existing directory nearest the node; `false` when none could be watched.
    private func rewatch() -> Bool {
        let previous = watch
        watch = nil
        defer {
            if let previous, previous != watch { inotify.removeWatch(previous) }
            isWatching = watch != nil
        }
        // A directory may appear (or go) between looking and watching: look again, a few times.
        for _ in 0..<8 {
            let directory = arrival.directoryToWatch(exists: Self.exists)
            do throws(CaptureError) {
                let added = try inotify.addWatch(directory, for: Self.watchedEvents)
                if let watch, watch != added, watch != previous { inotify.removeWatch(watch) }
                watch = added
                self.directory = directory
            } catch {
                // Gone in between: look again. Anything else (no more watches, not a directory, not readable): give up.
                guard error.errno == ENOENT else { return false }
                continue
            }
            if arrival.directoryToWatch(exists: Self.exists) == directory { return true }
        }
        return watch != nil
    }

    private func eventsArrived() {
        var search = false, moved = false
        do throws(CaptureError) {
            try inotify.readEvents { event in
                // Events of a watch this one replaced may still be queued behind it.
                guard event.watch == watch || event.events.contains(.overflow) else { return }
                switch arrival.relevance(of: event, in: directory) {
                case .none: break
                case .search: search = true
                case .rewatch: moved = true
                }
            }
        } catch {
            search = true  // cannot tell: look, as the timer would have
        }
        if moved {
            if !rewatch() { search = true }
            // What appeared right after the directories (udev makes the link at once) made no event here.
            if case .node(let path) = arrival, Self.exists(path) { search = true }
        }
        if search { due = true }
    }

    /// Whether `path` is there (a dangling link counts: the search says why it cannot be opened).
    ///
    /// The corresponding C function is `lstat`.
    static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }
}
