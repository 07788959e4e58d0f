import Foundation
import Synchronization
import Testing
import ShutterCore
@testable import ShutterCapture

/// A fresh directory under /tmp, removed by the caller.
func temporaryDirectory() -> String {
    let path = NSTemporaryDirectory() + "shutter-capture-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

/// The names in `directory`, sorted.
///
/// - Throws: Foundation's error when the directory cannot be read — a missing directory is not
///   an empty one, so "nothing left behind" cannot pass because the directory itself is gone.
func listing(_ directory: String) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
}

/// Creates the file `path` with `contents` for a test's setup, and fails the test when it could
/// not be made (a check on what the code under test did with it would otherwise hold for nothing).
func makeFile(_ path: String, _ contents: Data = Data(), sourceLocation: SourceLocation = #_sourceLocation) throws {
    try #require(FileManager.default.createFile(atPath: path, contents: contents), "could not create \(path)",
                 sourceLocation: sourceLocation)
}

@Suite("PhotoWriter")
struct PhotoWriterTests {
    @Test func neverOverwritesAndPointsLatestAtTheNewest() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writer = try PhotoWriter(directory: dir + "/nested/photos")
        let first = try writer.write([1, 2, 3], name: "IMG.jpg")
        let second = try writer.write([4, 5], name: "IMG.jpg")
        #expect(first.hasSuffix("/IMG.jpg") && second.hasSuffix("/IMG-2.jpg"))
        #expect(FileManager.default.contents(atPath: first) == Data([1, 2, 3]))
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: dir + "/nested/photos/latest.jpg") == "IMG-2.jpg")
        #expect(try listing(dir + "/nested/photos") == ["IMG-2.jpg", "IMG.jpg", "latest.jpg"])
    }

    /// While a photo's bytes are being written, a reader of the directory (a sync tool, a
    /// file manager, `latest.jpg`) finds each photo's name holding all of its bytes or no such
    /// name: the bytes go to a temporary name first, and the photo's name comes after the last.
    @Test func noNameHoldsPartOfAPhotoWhileItsBytesAreWritten() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let sizes = ["IMG_1.jpg": 3000, "IMG_2.jpg": 2000]
        let seen = Mutex<(writes: Int, partial: [String])>((0, []))
        // A disk that takes 100 bytes a call; before each, the directory as a reader finds it.
        let writer = try PhotoWriter(directory: dir) { fd, pointer, count in
            let names = (try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []
            for name in names where !name.hasPrefix(PhotoWriter.temporaryPrefix) {
                // stat follows latest.jpg to the photo it names.
                var status = stat()
                let size = stat(dir + "/" + name, &status) == 0 ? Int(status.st_size) : -1
                let photo = name == PhotoWriter.latestName
                    ? (try? FileManager.default.destinationOfSymbolicLink(atPath: dir + "/" + name)) ?? name : name
                if size != sizes[photo] { seen.withLock { $0.partial.append("\(name): \(size) bytes") } }
            }
            seen.withLock { $0.writes += 1 }
            return write(fd, pointer, min(count, 100))
        }
        for (name, size) in sizes.sorted(by: { $0.key < $1.key }) {
            _ = try writer.write([UInt8](repeating: 9, count: size), name: name)
        }
        let result = seen.withLock { $0 }
        #expect(result.writes >= 50, "the check ran during the writes")
        #expect(result.partial.isEmpty, "\(result.partial.prefix(5))")
        #expect(try listing(dir) == ["IMG_1.jpg", "IMG_2.jpg", "latest.jpg"])
    }

    @Test func aFullDiskLeavesNothingBehindAndTheNextWriteWorks() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let full = try PhotoWriter(directory: dir) { fd, pointer, count in
            _ = write(fd, pointer, min(count, 10))  // part of it lands, then the disk is full
            errno = ENOSPC
            return -1
        }
        // Not `let error = #expect(throws:)`: Swift 6.0's Testing returns no error from it.
        var error: CaptureError?
        do throws(CaptureError) { _ = try full.write([UInt8](repeating: 7, count: 1000), name: "IMG.jpg") } catch let thrown { error = thrown }
        guard case .system(let call, let code, let context)? = error else { Issue.record("wrong error \(String(describing: error))"); return }
        #expect(call == "write" && code == ENOSPC && context.contains(".shutter-tmp-"))
        #expect(try listing(dir).isEmpty)
        #expect(CaptureError.system(call: "write", errno: ENOSPC, context: "x").kind == "diskFull")
        let healthy = try PhotoWriter(directory: dir)
        _ = try healthy.write([1], name: "IMG.jpg")
        #expect(try listing(dir) == ["IMG.jpg", "latest.jpg"])
    }

    @Test func removesLeftoversOfDeadProcessesOnly() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let dead = "2147483646"  // above any pid_max: no such process
        let mine = ".shutter-tmp-\(getpid())-4.jpg"  // a photo this (running) process is writing now
        for name in [".shutter-tmp-\(dead)-4.jpg", ".shutter-tmp-\(dead)-latest", ".shutter-tmp-junk", mine, "IMG.jpg"] {
            try makeFile(dir + "/" + name, Data([1]))
        }
        let writer = try PhotoWriter(directory: dir)
        #expect(writer.removeLeftovers().sorted() == [".shutter-tmp-\(dead)-4.jpg", ".shutter-tmp-\(dead)-latest", ".shutter-tmp-junk"])
        #expect(try listing(dir) == [mine, "IMG.jpg"].sorted())
    }

    @Test func latestFollowsOnAFileSystemWithoutLinks() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        // FAT: neither symlinks nor hard links.
        let fat = try PhotoWriter(directory: dir, symlink: { _, _ in errno = EPERM; return -1 }, link: { _, _, _, _ in errno = EPERM; return -1 })
        _ = try fat.write([1, 2, 3], name: "A.jpg")
        #expect(FileManager.default.contents(atPath: dir + "/latest.jpg") == Data([1, 2, 3]))
        _ = try fat.write([4, 5], name: "B.jpg")
        #expect(FileManager.default.contents(atPath: dir + "/latest.jpg") == Data([4, 5]))
        #expect(try listing(dir) == ["A.jpg", "B.jpg", "latest.jpg"])
        // Hard links but no symlinks: latest.jpg is the newest photo's second name.
        let hard = try PhotoWriter(directory: dir, symlink: { _, _ in errno = EPERM; return -1 })
        let path = try hard.write([6], name: "C.jpg")
        var photo = stat(), latest = stat()
        #expect(stat(path, &photo) == 0 && stat(dir + "/latest.jpg", &latest) == 0)
        #expect(photo.st_ino == latest.st_ino)
    }

    /// A name can come from the network (a rig's shot id in the shot template): one that climbs
    /// out, is absolute, hides (a leading dot, as the writer's own temporary files do) or goes
    /// deeper than one folder is refused before anything is written, inside or outside.
    @Test(arguments: ["../escape.jpg", "/tmp/shutter-escape.jpg", "a/../../escape.jpg", "../x/n1.jpg", "./n1.jpg",
                      "a//n1.jpg", "..", ".hidden/n1.jpg", ".n1.jpg", "a/b/n1.jpg", "", "shot/", "shot/.."])
    func aNameThatWouldLeaveTheDirectoryIsRefused(_ name: String) throws {
        let parent = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let writer = try PhotoWriter(directory: parent + "/photos")
        #expect { try writer.write([1, 2, 3], name: name) } throws: { error in
            "\(error)".contains("'\(name)'") && (error as? CaptureError)?.kind == "badPhotoName"
        }
        #expect(try listing(parent) == ["photos"])
        #expect(try listing(parent + "/photos") == [])
    }

    /// A shot folder someone made a symbolic link (`photos/symshot -> /elsewhere`) is not
    /// followed: the folder is entered with O_NOFOLLOW under the output directory's descriptor.
    @Test func aShotFolderThatIsASymbolicLinkIsNotFollowed() throws {
        let parent = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let photos = parent + "/photos", elsewhere = parent + "/elsewhere"
        try FileManager.default.createDirectory(atPath: elsewhere, withIntermediateDirectories: false)
        let writer = try PhotoWriter(directory: photos)
        try #require(symlink(elsewhere, photos + "/symshot") == 0)
        #expect(throws: CaptureError.self) { try writer.write([1, 2, 3], name: "symshot/n1.jpg") }
        #expect(try listing(elsewhere) == [])
        #expect(try listing(photos) == ["symshot"])
        // A folder of its own is made and written into.
        #expect(try writer.write([4, 5], name: "realshot/n1.jpg") == photos + "/realshot/n1.jpg")
        #expect(FileManager.default.contents(atPath: photos + "/realshot/n1.jpg") == Data([4, 5]))
    }

    @Test func refusesAFileWhereTheDirectoryShouldBe() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try makeFile(dir + "/file", Data())
        #expect(throws: CaptureError.self) { try PhotoWriter(directory: dir + "/file") }
    }
}
