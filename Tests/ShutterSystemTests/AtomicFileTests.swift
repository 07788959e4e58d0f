#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
import CShutterSystem
@testable import ShutterSystem

/// A fresh directory under /tmp, removed by the caller.
private func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "shutter-system-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The names in `directory`, sorted; a missing directory throws (it is not an empty one).
private func listing(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

private func contents(_ path: String) -> [UInt8]? {
    FileManager.default.contents(atPath: path).map { [UInt8]($0) }
}

/// The failure `body` throws, or nil when it throws none.
private func failure(_ body: () throws(AtomicFile.Failure) -> Void) -> AtomicFile.Failure? {
    do throws(AtomicFile.Failure) {
        try body()
        return nil
    } catch {
        return error
    }
}

@Suite("AtomicFile")
struct AtomicFileTests {
    @Test func replaceLeavesTheWholeFileAtItsNameWithItsModeAndNoTemporary() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        let bytes = [UInt8](repeating: 0x5A, count: 300_000)
        try AtomicFile.replace(path, with: bytes, mode: 0o600)
        #expect(contents(path) == bytes)
        var info = stat()
        #expect(stat(path, &info) == 0 && info.st_mode & 0o777 == 0o600)
        #expect(try listing(dir) == ["state.json"])
    }

    /// The new bytes go to a new file renamed over the old one: a reader that opened the old file
    /// still reads it whole, and the name then holds the new file whole.
    @Test func replaceNeverWritesIntoTheOldFile() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let path = dir + "/state.json"
        try AtomicFile.replace(path, with: Array("old text\n".utf8), mode: 0o644)
        let reader = try #require(FileHandle(forReadingAtPath: path))
        defer { try? reader.close() }
        try AtomicFile.replace(path, with: Array("new\n".utf8), mode: 0o644)
        #expect([UInt8](reader.readDataToEndOfFile()) == Array("old text\n".utf8))
        #expect(contents(path) == Array("new\n".utf8))
        #expect(try listing(dir) == ["state.json"])
    }

    /// A file at the name is refused, not replaced: link-if-absent says so and changes nothing;
    /// a free name gets the file whole.
    @Test func linkIfAbsentRefusesAnExistingName() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(FileManager.default.createFile(atPath: dir + "/token", contents: Data("theirs\n".utf8)))
        let file = try AtomicFile(temporary: dir + "/.token.tmp", bytes: Array("mine\n".utf8), mode: 0o600)
        #expect(try file.link(as: dir + "/token") == false)
        #expect(contents(dir + "/token") == Array("theirs\n".utf8))
        #expect(try file.link(as: dir + "/other") == true)
        file.discard()
        #expect(contents(dir + "/other") == Array("mine\n".utf8))
        #expect(try listing(dir) == ["other", "token"])
    }

    /// Relative to a directory's descriptor, as the photo writer links into a shot folder.
    @Test func linksIntoADirectoryByItsDescriptor() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try FileManager.default.createDirectory(atPath: dir + "/shot", withIntermediateDirectories: false)
        let folder = try FileDescriptor.openDirectory(dir + "/shot")
        defer { try? folder.close() }
        let file = try AtomicFile(temporary: dir + "/.tmp", bytes: [1, 2, 3], mode: 0o644)
        #expect(try file.link(as: "n1.jpg", in: folder) == true)
        file.discard()
        #expect(contents(dir + "/shot/n1.jpg") == [1, 2, 3])
        #expect(try listing(dir) == ["shot"])
    }

    /// Without hard links (FAT), the writer that allows it checks the name and renames; one that
    /// does not gets the link's error.
    @Test func withoutHardLinksAFreeNameIsTakenByRenameAndATakenOneRefused() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let noLinks: AtomicFile.LinkFunction = { _, _, _, _ in errno = EPERM; return -1 }
        let file = try AtomicFile(temporary: dir + "/.a.tmp", bytes: [7], mode: 0o644)
        let refused = failure { () throws(AtomicFile.Failure) in _ = try file.link(as: dir + "/A.jpg", link: noLinks) }
        #expect(refused == AtomicFile.Failure(call: "link", errno: .notPermitted, path: dir + "/A.jpg"))
        try #require(FileManager.default.createFile(atPath: dir + "/taken.jpg", contents: Data([9])))
        #expect(try file.link(as: dir + "/taken.jpg", renamingWithoutLinks: true, link: noLinks) == false)
        #expect(try file.link(as: dir + "/A.jpg", renamingWithoutLinks: true, link: noLinks) == true)
        #expect(contents(dir + "/A.jpg") == [7] && contents(dir + "/taken.jpg") == [9])
        #expect(try listing(dir) == ["A.jpg", "taken.jpg"])
    }

    /// Without hard links the name is checked and taken in one step (renameat2's
    /// RENAME_NOREPLACE), so a writer that took it a moment earlier keeps it.
    @Test func withoutHardLinksTheRenameItselfRefusesATakenName() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let noLinks: AtomicFile.LinkFunction = { _, _, _, _ in errno = EPERM; return -1 }
        let file = try AtomicFile(temporary: dir + "/.a.tmp", bytes: [7], mode: 0o644)
        // Another writer takes the name just as the rename begins: after any check could have run.
        let takenFirst: AtomicFile.RenameFunction = { fromDirectory, from, toDirectory, to in
            FileManager.default.createFile(atPath: to, contents: Data([9]))
            return CShutterSystem_renameNoReplace(fromDirectory, from, toDirectory, to)
        }
        #expect(try file.link(as: dir + "/A.jpg", renamingWithoutLinks: true, link: noLinks, rename: takenFirst) == false)
        #expect(contents(dir + "/A.jpg") == [9])
        #expect(try listing(dir) == [".a.tmp", "A.jpg"])
    }

    /// A file system without RENAME_NOREPLACE (EINVAL): an exclusive create claims the name,
    /// and the file is renamed over the claim; a name that exists is refused.
    @Test func withoutNoReplaceAnExclusiveCreateClaimsTheName() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let noLinks: AtomicFile.LinkFunction = { _, _, _, _ in errno = EPERM; return -1 }
        let noNoReplace: AtomicFile.RenameFunction = { _, _, _, _ in errno = EINVAL; return -1 }
        let file = try AtomicFile(temporary: dir + "/.a.tmp", bytes: [7], mode: 0o644)
        try #require(FileManager.default.createFile(atPath: dir + "/taken.jpg", contents: Data([9])))
        #expect(try file.link(as: dir + "/taken.jpg", renamingWithoutLinks: true, link: noLinks, rename: noNoReplace) == false)
        #expect(contents(dir + "/taken.jpg") == [9])
        #expect(try file.link(as: dir + "/A.jpg", renamingWithoutLinks: true, link: noLinks, rename: noNoReplace) == true)
        #expect(contents(dir + "/A.jpg") == [7])
        #expect(try listing(dir) == ["A.jpg", "taken.jpg"])
    }

    /// A path whose parent is a file: nothing can be made, and nothing is left anywhere.
    @Test func aParentThatIsAFileFailsAndLeavesNothing() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(FileManager.default.createFile(atPath: dir + "/file", contents: Data([1])))
        let refused = failure { () throws(AtomicFile.Failure) in try AtomicFile.replace(dir + "/file/state.json", with: [1, 2], mode: 0o644) }
        #expect(refused?.call == "open" && refused?.errno == Errno(rawValue: ENOTDIR))
        #expect(refused?.path.hasPrefix(dir + "/file/.state.json.") == true)
        #expect(try listing(dir) == ["file"])
        #expect(contents(dir + "/file") == [1])
    }

    /// A disk that fills part way: the temporary file is removed, and the old file stays whole.
    @Test func aFailedWriteLeavesNoTemporaryAndTheOldFile() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try AtomicFile.replace(dir + "/state.json", with: [1, 2, 3], mode: 0o644)
        let refused = failure { () throws(AtomicFile.Failure) in
            _ = try AtomicFile(temporary: dir + "/.state.tmp", bytes: [UInt8](repeating: 7, count: 1000), mode: 0o644) { fd, pointer, count in
                _ = write(fd, pointer, min(count, 10))  // part of it lands, then the disk is full
                errno = ENOSPC
                return -1
            }
        }
        #expect(refused == AtomicFile.Failure(call: "write", errno: Errno(rawValue: ENOSPC), path: dir + "/.state.tmp"))
        #expect(try listing(dir) == ["state.json"])
        #expect(contents(dir + "/state.json") == [1, 2, 3])
    }

    /// A rename that fails (its directory is gone) removes the temporary file.
    @Test func aFailedRenameLeavesNoTemporary() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = try AtomicFile(temporary: dir + "/.tmp", bytes: [1], mode: 0o644)
        let refused = failure { () throws(AtomicFile.Failure) in try file.rename(to: dir + "/missing/state.json") }
        #expect(refused == AtomicFile.Failure(call: "rename", errno: .noSuchFile, path: dir + "/missing/state.json"))
        #expect(try listing(dir) == [])
    }

    /// A temporary name that exists is someone else's file: refused, and left as it was.
    @Test func anExistingTemporaryIsRefusedAndLeftAlone() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try #require(FileManager.default.createFile(atPath: dir + "/.tmp", contents: Data([4, 4])))
        let refused = failure { () throws(AtomicFile.Failure) in _ = try AtomicFile(temporary: dir + "/.tmp", bytes: [1], mode: 0o644) }
        #expect(refused == AtomicFile.Failure(call: "open", errno: .fileExists, path: dir + "/.tmp"))
        #expect(contents(dir + "/.tmp") == [4, 4])
        // Not exclusive: a name only this process uses is rewritten.
        _ = try AtomicFile(temporary: dir + "/.tmp", bytes: [1], mode: 0o644, exclusive: false)
        #expect(contents(dir + "/.tmp") == [1])
    }

    @Test func syncingAMissingDirectoryNamesIt() {
        let missing = temporaryDirectory() + "/missing"
        #expect(failure { () throws(AtomicFile.Failure) in try AtomicFile.syncDirectory(missing) } == AtomicFile.Failure(call: "open", errno: .noSuchFile, path: missing))
    }

    @Test func aBareNameIsInTheWorkingDirectory() {
        #expect(AtomicFile.split("state.json") == (nil, "state.json"))
        #expect(AtomicFile.split("/state.json") == ("/", "state.json"))
        #expect(AtomicFile.split("a/b/state.json") == ("a/b", "state.json"))
    }
}

@Suite("valueOrErrno")
struct ValueOrErrnoTests {
    /// A call interrupted by a signal runs again; other errors come back as they are.
    @Test func retriesInterruptsOnly() {
        var calls = 0
        let value = valueOrErrno { () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 42
        }
        #expect(value == .success(42) && calls == 3)
        calls = 0
        #expect(valueOrErrno(retryOnInterrupt: false) { () -> CInt in calls += 1; errno = EINTR; return -1 } == .failure(.interrupted))
        #expect(calls == 1)
        #expect(valueOrErrno { () -> CInt in errno = EBUSY; return -1 } == .failure(.busy))
        if case .failure = nothingOrErrno({ () -> CInt in 0 }) { Issue.record("0 is no failure") }
    }

    /// Short writes are continued; a write that takes nothing is an I/O error, not a spin.
    @Test func writeAllContinuesShortWritesAndRefusesAStall() throws {
        var pipeEnds: [CInt] = [-1, -1]
        try #require(pipe(&pipeEnds) == 0)
        let (readEnd, writeEnd) = (FileDescriptor(rawValue: pipeEnds[0]), FileDescriptor(rawValue: pipeEnds[1]))
        defer { try? readEnd.close(); try? writeEnd.close() }
        let bytes: [UInt8] = Array(0..<100)
        var interrupted = false
        try bytes.withUnsafeBytes { buffer in
            try writeEnd.writeAll(buffer) { fd, pointer, count in
                if !interrupted { interrupted = true; errno = EINTR; return -1 }
                return write(fd, pointer, min(count, 7))
            }
        }
        var received = [UInt8](repeating: 0, count: 200)
        let count = try received.withUnsafeMutableBytes { try readEnd.read(into: $0) }
        #expect(Array(received.prefix(count)) == bytes)
        let stalled: Result<Void, Errno> = bytes.withUnsafeBytes { buffer in
            Result { () throws(Errno) in try writeEnd.writeAll(buffer) { _, _, _ in 0 } }
        }
        guard case .failure(let error) = stalled else { Issue.record("a write that takes nothing passed"); return }
        #expect(error == .ioError)
    }
}
