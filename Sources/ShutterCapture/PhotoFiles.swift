#if canImport(Glibc)
import Glibc
#endif
import ShutterCore
import ShutterSystem

/// A wall-clock time for file names and EXIF: seconds since the epoch and the millisecond.
public struct WallTime: Hashable, Sendable {
    public var seconds: Int
    public var milliseconds: Int

    public init(seconds: Int, milliseconds: Int) {
        self.seconds = seconds
        self.milliseconds = milliseconds
    }

    /// The current wall-clock time. The corresponding C function is `clock_gettime`.
    public static func now() -> WallTime {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return WallTime(seconds: Int(spec.tv_sec), milliseconds: Int(spec.tv_nsec / 1_000_000))
    }

    /// The broken-down local (or UTC) time. The corresponding C functions are `localtime_r` and `gmtime_r`.
    public func brokenDown(utc: Bool = false) -> tm {
        var time = time_t(seconds)
        var fields = tm()
        if utc { gmtime_r(&time, &fields) } else { localtime_r(&time, &fields) }
        return fields
    }
}

/// A photo file-name template: strftime fields plus `{ms}` (000-999) and `{seq}` (0001...).
public struct FileNameTemplate: Hashable, Sendable {
    public var template: String

    public init(_ template: String) { self.template = template }

    /// The file name for a photo taken at `time`, the `sequence`th of this run.
    ///
    /// `/` produced by a strftime field (`%D`) becomes `-`, so the name stays in the output directory.
    /// - Parameters:
    ///   - utc: expands strftime fields in UTC instead of local time (tests).
    public func name(at time: WallTime, sequence: Int, utc: Bool = false) -> String {
        let ms = String(time.milliseconds)
        let seq = String(sequence)
        // Byte replacement, not _StringProcessing's `replacing`: this runs on the loop at every
        // press, and the latter cost it about 80 000 instructions a photo.
        var text = template
            .replacingEvery("{ms}", with: String(repeating: "0", count: max(0, 3 - ms.count)) + ms)
            .replacingEvery("{seq}", with: String(repeating: "0", count: max(0, 4 - seq.count)) + seq)
        var fields = time.brokenDown(utc: utc)
        var buffer = [CChar](repeating: 0, count: 512)
        let written = strftime(&buffer, buffer.count, text, &fields)
        if written > 0 || text.isEmpty {
            text = String(decoding: buffer[..<written].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        // Every slash a field printed (`%D`), also one a combining mark follows.
        text = text.replacingEvery("/", with: "-")
        return text.isEmpty || text == "." || text == ".." ? "photo.jpg" : text
    }

    /// The `{seq}` number of a file this template could have named, or `nil` for any other name
    /// (or a template without `{seq}`). A name's `-2`, `-3`... variant counts as its own number.
    ///
    /// strftime fields match what they print: numeric ones their digits (`%Y` four, `%m` two,
    /// ...), others (`%b`, `%A`) any text; a field's `/` is `-` as ``name(at:sequence:utc:)`` writes it.
    public func sequence(in name: String) -> Int? {
        guard let pattern = sequencePattern,
              let match = try? pattern.wholeMatch(in: name) ?? pattern.wholeMatch(in: Self.withoutVariant(name)) else { return nil }
        return match.output[1].substring.flatMap { Int($0) }
    }

    /// The highest `{seq}` among `names`, 0 when none has one: the number the next photo follows.
    public func highestSequence(among names: some Sequence<String>) -> Int {
        names.lazy.compactMap { sequence(in: $0) }.max() ?? 0
    }

    /// `name` without a ``variant(of:attempt:)`` suffix (`IMG_0012-2.jpg` → `IMG_0012.jpg`).
    static func withoutVariant(_ name: String) -> String {
        let dot = name.lastIndex(of: ".") ?? name.endIndex
        let stem = name[..<dot]
        guard let dash = stem.lastIndex(of: "-"), dash != stem.startIndex,
              stem[stem.index(after: dash)...].count > 0, stem[stem.index(after: dash)...].allSatisfy(\.isASCII), Int(stem[stem.index(after: dash)...]) != nil
        else { return name }
        return String(stem[..<dash]) + name[dot...]
    }

    /// The template as a regular expression whose first group is the first `{seq}`; `nil` without `{seq}`.
    private var sequencePattern: Regex<AnyRegexOutput>? {
        guard template.contains("{seq}") else { return nil }
        var pattern = ""
        var seqSeen = false
        var rest = Substring(template)
        func literal(_ text: some StringProtocol) -> String {
            text.map { $0.isLetter || $0.isNumber ? String($0) : "\\" + String($0) }.joined()
        }
        while let first = rest.first {
            if rest.hasPrefix("{seq}") {
                pattern += seqSeen ? "[0-9]{4,}" : "([0-9]{4,})"
                seqSeen = true
                rest = rest.dropFirst(5)
            } else if rest.hasPrefix("{ms}") {
                pattern += "[0-9]{3}"
                rest = rest.dropFirst(4)
            } else if first == "%", rest.count >= 2 {
                var field = rest.dropFirst()
                // Flags and modifiers (%-d, %_H, %Ey, %Od) change padding or digits: match loosely.
                let loose = field.first.map { "-_0^#EO".contains($0) } ?? false
                while let flag = field.first, "-_0^#EO".contains(flag), field.count > 1 { field = field.dropFirst() }
                let conversion = field.first!
                pattern += loose ? ".+?" : Self.strftimePattern(conversion)
                rest = field.dropFirst()
            } else {
                pattern += literal(String(first).replacing("/", with: "-"))
                rest = rest.dropFirst()
            }
        }
        return try? Regex(pattern)
    }

    /// What one strftime conversion prints, as a regular expression.
    private static func strftimePattern(_ conversion: Character) -> String {
        let d2 = "[0-9]{2}"
        switch conversion {
        case "%": return "%"
        case "Y", "G": return "[0-9]{4}"
        case "m", "d", "H", "M", "S", "y", "C", "U", "W", "V", "g", "I": return d2
        case "e", "k", "l": return "[ 0-9][0-9]"
        case "j": return "[0-9]{3}"
        case "u", "w": return "[0-9]"
        case "s": return "[0-9]+"
        case "F": return "[0-9]{4}-\(d2)-\(d2)"
        case "D": return "\(d2)-\(d2)-\(d2)"  // the slashes %D prints become '-'
        case "T": return "\(d2):\(d2):\(d2)"
        case "R": return "\(d2):\(d2)"
        case "n": return "\n"
        case "t": return "\t"
        default: return ".+?"  // names of days and months, %c, %x, %p, %Z...: any text
        }
    }

    /// The `attempt`th name to try when `name` exists already: `IMG.jpg`, `IMG-2.jpg`, `IMG-3.jpg`, ...
    public static func variant(of name: String, attempt: Int) -> String {
        guard attempt > 1 else { return name }
        if let dot = name.lastIndex(of: "."), dot != name.startIndex {
            return "\(name[..<dot])-\(attempt)\(name[dot...])"
        }
        return "\(name)-\(attempt)"
    }
}

/// Writes photos so that a crash, a full disk or a failed write never leaves a partial photo.
///
/// Each photo is an `AtomicFile`: a temporary file in the output directory, fsynced, linked to
/// its final name (which fails rather than overwrite) and the directory fsynced; `latest.jpg` is a symlink
/// replaced by rename, or on file systems without symlinks (FAT) a hard link, or else a copy
/// written the same atomic way. Temporary files carry the writer's process id, so a second
/// process (`shutter capture` next to the daemon) never removes a photo in flight.
/// Safe to use from a background queue.
public struct PhotoWriter: Sendable {
    /// The output directory.
    public let directory: String
    /// The prefix of temporary files; left-overs from a crash are removed by ``removeLeftovers()``.
    public static let temporaryPrefix = ".shutter-tmp-"
    /// The name of the symlink to the newest photo.
    public static let latestName = "latest.jpg"

    /// Writes `count` bytes to a descriptor, like `write`; tests replace it to simulate a full disk.
    public typealias WriteFunction = AtomicFile.WriteFunction
    let writeFunction: WriteFunction
    /// `symlink`, like the C function; tests replace it to act as FAT does.
    public typealias LinkFunction = @Sendable (String, String) -> CInt
    /// `linkat` without flags (from a directory descriptor and name to another); tests replace it
    /// to act as FAT does.
    public typealias LinkAtFunction = AtomicFile.LinkFunction
    let symlinkFunction: LinkFunction
    let linkFunction: LinkAtFunction
    /// Whether each photo repoints `latest.jpg` (not for `shutter capture --out`).
    public let updatesLatest: Bool

    /// Creates the directory (and its parents) if needed.
    /// - Throws: ``CaptureError/system(call:errno:context:)`` when it cannot.
    public init(directory: String, updatesLatest: Bool = true,
                write: @escaping WriteFunction = { Glibc.write($0, $1, $2) },
                symlink: @escaping LinkFunction = { Glibc.symlink($0, $1) },
                link: @escaping LinkAtFunction = { Glibc.linkat($0, $1, $2, $3, 0) }) throws(CaptureError) {
        self.directory = directory
        self.updatesLatest = updatesLatest
        self.writeFunction = write
        self.symlinkFunction = symlink
        self.linkFunction = link
        try Self.makeDirectories(directory)
    }

    static func makeDirectories(_ path: String) throws(CaptureError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o755) != 0, Glibc.errno != EEXIST {
                throw CaptureError.system(call: "mkdir", errno: Glibc.errno, context: prefix)
            }
            prefix += "/"
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CaptureError.system(call: "mkdir", errno: ENOTDIR, context: path)
        }
    }

    func path(_ name: String) -> String { directory.hasSuffix("/") ? directory + name : directory + "/" + name }

    /// The folder (`nil` for none) and file of a photo name, or why the name is refused: a name
    /// may come from the network (a rig's shot id in ``MQTTSettings``' shot template), so only a
    /// file in the output directory or in one folder below it passes, and no part may be empty,
    /// climb (`..`), stay (`.`) or hide (a leading dot, as the writer's temporary files do).
    static func parts(of name: String) throws(CaptureError) -> (folder: String?, file: String) {
        let parts = name.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count <= 2 else { throw CaptureError.badPhotoName(name: name, reason: "more than one folder deep") }
        for part in parts {
            if part.isEmpty { throw CaptureError.badPhotoName(name: name, reason: name.hasPrefix("/") ? "an absolute path" : "an empty part") }
            if part.hasPrefix(".") { throw CaptureError.badPhotoName(name: name, reason: "a part begins with a dot ('\(part)')") }
            if part.utf8.contains(0) { throw CaptureError.badPhotoName(name: name, reason: "a NUL byte") }
        }
        return parts.count == 2 ? (parts[0], parts[1]) : (nil, parts[0])
    }

    /// Opens the output directory, and `folder` in it (made when missing), for the photo's link:
    /// the folder is entered under the directory's descriptor and never through a symbolic link
    /// (O_NOFOLLOW), so a shot folder someone pointed elsewhere is refused, not followed.
    /// Returns the descriptor to link into (the caller closes both).
    ///
    /// The corresponding C functions are `open`, `mkdirat` and `openat`.
    private func openFolder(_ folder: String?) throws(CaptureError) -> (directory: FileDescriptor, folder: FileDescriptor) {
        let directoryFD: FileDescriptor
        do throws(Errno) {
            directoryFD = try FileDescriptor.openDirectory(directory)
        } catch {
            throw CaptureError.system("open", error, directory)
        }
        guard let folder else { return (directoryFD, directoryFD) }
        if case .failure(let errno) = nothingOrErrno({ mkdirat(directoryFD.rawValue, folder, 0o755) }), errno != .fileExists {
            try? directoryFD.close()
            throw CaptureError.system("mkdirat", errno, path(folder))
        }
        do throws(Errno) {
            return (directoryFD, try FileDescriptor.open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, in: directoryFD))
        } catch {
            try? directoryFD.close()
            // ELOOP: the folder is a symbolic link; ENOTDIR: it is a file.
            throw CaptureError.system("openat (O_NOFOLLOW)", error, path(folder))
        }
    }

    /// Removes temporary files that processes which no longer run left behind (a crash); files of
    /// running processes (a daemon writing a photo now) stay. Returns the names removed.
    @discardableResult
    public func removeLeftovers() -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var removed: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
            guard name.hasPrefix(Self.temporaryPrefix) else { continue }
            if let pid = Self.writerProcess(ofTemporary: name), Self.isRunning(pid) { continue }
            if unlink(path(name)) == 0 { removed.append(name) }
        }
        return removed
    }

    /// The names of the files in the directory (photos, `latest.jpg`, temporary files), for the
    /// sequence number to continue from; empty when it cannot be read.
    public func names() -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            names.append(withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) })
        }
        return names
    }

    /// The process id in a temporary file's name (`.shutter-tmp-<pid>-…`), or `nil` for other names.
    static func writerProcess(ofTemporary name: String) -> pid_t? {
        guard name.hasPrefix(temporaryPrefix) else { return nil }
        let digits = name.dropFirst(temporaryPrefix.count).prefix { $0.isASCII && $0.isNumber }
        return pid_t(digits)
    }

    /// Whether process `pid` exists (possibly another user's). The corresponding C function is `kill` with signal 0.
    static func isRunning(_ pid: pid_t) -> Bool {
        guard pid > 0 else { return false }
        return kill(pid, 0) == 0 || Glibc.errno == EPERM
    }

    /// Writes `bytes` as a new photo named `name` (or its first free variant) and points `latest.jpg` at it.
    ///
    /// - Returns: the final path.
    /// - Throws: ``CaptureError/system(call:errno:context:)`` naming the failed call; nothing is left behind.
    public func write(_ bytes: [UInt8], name: String) throws(CaptureError) -> String {
        let (folder, _) = try Self.parts(of: name)
        let temporary = path("\(Self.temporaryPrefix)\(getpid())-\(UInt32.random(in: 0...UInt32.max)).jpg")
        let file: AtomicFile
        do throws(AtomicFile.Failure) {
            file = try AtomicFile(temporary: temporary, bytes: bytes, mode: 0o644, write: writeFunction)
        } catch {
            throw CaptureError.system(error.call, error.errno, temporary)
        }
        var named = false
        defer {
            if !named { file.discard() }
        }
        // A rig's shot goes to a folder of its own (`<shot>/<node>.jpg`), made by whichever photo comes first.
        let (directoryFD, folderFD) = try openFolder(folder)
        defer {
            if folderFD != directoryFD { try? folderFD.close() }
            try? directoryFD.close()
        }
        var finalName = name
        var attempt = 1
        while true {
            finalName = FileNameTemplate.variant(of: name, attempt: attempt)
            let fileName = try Self.parts(of: finalName).file
            // Never over another photo: a name that exists is passed over for its next variant.
            let placed: Bool
            do throws(AtomicFile.Failure) {
                placed = try file.link(as: fileName, in: folderFD, renamingWithoutLinks: true, link: linkFunction)
            } catch {
                throw CaptureError.system(error.call, error.errno, path(finalName))
            }
            if placed { break }
            attempt += 1
        }
        // The temporary name goes before the directories are synced, so its removal lasts too.
        file.discard()
        named = true
        do throws(Errno) {
            if folderFD != directoryFD { try folderFD.sync() }
        } catch {
            throw CaptureError.system("fsync", error, path(folder ?? ""))
        }
        do throws(Errno) {
            try directoryFD.sync()
        } catch {
            throw CaptureError.system("fsync", error, directory)
        }
        if updatesLatest, (try? updateLatest(to: finalName, bytes: bytes)) == nil {
            // The photo is safe; a latest.jpg that cannot follow it is removed rather than left stale.
            unlink(path(Self.latestName))
        }
        return path(finalName)
    }

    /// Points `latest.jpg` at `name` atomically: a symlink to a temporary name renamed over it; where
    /// the file system has no symlinks, a hard link; where it has neither (FAT), a copy of `bytes`
    /// written and renamed the same atomic way. Never left pointing at an older photo silently.
    ///
    /// - Throws: ``CaptureError/system(call:errno:context:)`` naming `latest.jpg` when none of the
    ///   three works (the photo itself is safe by then; ``write(_:name:)`` then removes `latest.jpg`).
    func updateLatest(to name: String, bytes: [UInt8]) throws(CaptureError) {
        let temporary = path("\(Self.temporaryPrefix)\(getpid())-latest")
        let latest = path(Self.latestName)
        unlink(temporary)
        if symlinkFunction(name, temporary) == 0 || linkFunction(AT_FDCWD, path(name), AT_FDCWD, temporary) == 0 {
            if rename(temporary, latest) != 0 {
                let code = Glibc.errno
                unlink(temporary)
                throw CaptureError.system(call: "rename", errno: code, context: latest)
            }
        } else {
            // A name only this process uses, removed just before: rewritten rather than refused.
            do throws(AtomicFile.Failure) {
                let copy = try AtomicFile(temporary: temporary, bytes: bytes, mode: 0o644, exclusive: false, write: writeFunction)
                try copy.rename(to: latest)
            } catch {
                throw CaptureError.system(error.call, error.errno, error.call == "rename" ? latest : temporary)
            }
        }
        try syncDirectory()
    }

    /// Syncs the output directory (a rename in it made durable).
    func syncDirectory() throws(CaptureError) {
        do throws(AtomicFile.Failure) {
            try AtomicFile.syncDirectory(directory)
        } catch {
            throw CaptureError.system(error.call, error.errno, directory)
        }
    }
}
