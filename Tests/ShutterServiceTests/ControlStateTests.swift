import Foundation
import Testing
import ShutterCore
@testable import ShutterService

@Suite("ControlState")
struct ControlStateTests {
    /// Saves and loads values exactly, and replaces the file atomically: the new text goes to a new
    /// file renamed over the old one, never into the old file. A reader that opened the file before
    /// the save still reads the old text whole (in-place writing would truncate it under the reader
    /// and leave it a half-written mix), the path names a new inode afterwards, and no temporary
    /// file is left beside it.
    @Test func roundTripsAtomically() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("shutter-state-\(UInt64.random(in: 0...UInt64.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("controls.json").path
        #expect(ControlStateFile.load(path: path).isEmpty)
        let values: [String: ControlValue] = ["zoom": .number(2.4), "exposure": .number(-0.3333333333333333),
                                              "filter": .index(2), "whole": .number(3)]
        try ControlState.write(values, to: path)
        #expect(ControlStateFile.load(path: path) == values)
        let text = try String(contentsOfFile: path, encoding: .utf8)
        #expect(text == #"{"exposure": -0.3333333333333333, "filter": {"index": 2}, "whole": 3.0, "zoom": 2.4}"# + "\n")
        let oldInode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
        let reader = try #require(FileHandle(forReadingAtPath: path))
        defer { try? reader.close() }
        try ControlState.write(["zoom": .number(5)], to: path)
        #expect(ControlStateFile.load(path: path) == ["zoom": .number(5)])
        // The reader still holds the old file, whole: the save wrote elsewhere and renamed.
        #expect(String(decoding: reader.readDataToEndOfFile(), as: UTF8.self) == text)
        let newInode = try #require(try FileManager.default.attributesOfItem(atPath: path)[.systemFileNumber] as? UInt64)
        #expect(newInode != oldInode, "the state file was rewritten in place")
        // Only the state file is left: the temporary file was renamed over it.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["controls.json"])
    }
}
