import Foundation
import Testing
import ShutterCore

@Suite struct SHA256Tests {
    /// The examples of FIPS 180-4 (NIST's "SHA256.pdf", "SHA2_Additional.pdf") and their digests.
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
    ])
    func nistVectors(message: String, expected: String) {
        #expect(SHA256.hexDigest(of: Array(message.utf8)) == expected)
    }

    /// RFC 4231's test cases 2 (a short key) and 6 (a key longer than a block, hashed first).
    @Test func hmacVectors() {
        #expect(SHA256.hex(of: SHA256.hmac(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8)))
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(SHA256.hex(of: SHA256.hmac(key: [UInt8](repeating: 0xAA, count: 131),
                                           message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)))
                == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    @Test func oneMillionAs() {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(SHA256.hexDigest(of: message) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // The same in uneven pieces, so the pending tail is joined to whole blocks many times.
        var hash = SHA256()
        var offset = 0
        var size = 1
        while offset < message.count {
            let end = min(message.count, offset + size)
            hash.update(message[offset..<end])
            offset = end
            size = size * 7 % 1000 + 1
        }
        #expect(SHA256.hex(of: hash.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Two updates split at every place in messages around the block and padding boundaries give
    /// the one-update digest.
    @Test(arguments: [0, 1, 55, 56, 63, 64, 65, 119, 120, 127, 128, 129])
    func splitUpdatesAgree(length: Int) {
        let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let whole = SHA256.digest(of: message)
        for cut in 0...length {
            var hash = SHA256()
            hash.update(message[..<cut])
            hash.update(message[cut...])
            #expect(hash.finalize() == whole, "cut at \(cut) of \(length)")
        }
    }

    /// Splits at every boundary 0...129 of one 130-byte message, in two and in three pieces.
    @Test func everyBoundaryUpTo129() {
        let message = (0..<130).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ 1) }
        let whole = SHA256.digest(of: message)
        for cut in 0...129 {
            var hash = SHA256()
            hash.update(message[..<cut])
            hash.update(message[cut...])
            #expect(hash.finalize() == whole, "cut at \(cut)")
            var three = SHA256()
            let second = min(130, cut + 64)
            three.update(message[..<cut])
            three.update(message[cut..<second])
            three.update(message[second...])
            #expect(three.finalize() == whole, "cuts at \(cut) and \(second)")
        }
    }

    @Test func finalizeLeavesTheHashUsable() {
        var hash = SHA256()
        hash.update(Array("ab".utf8))
        _ = hash.finalize()
        hash.update(Array("c".utf8))
        #expect(SHA256.hex(of: hash.finalize()) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    /// A collection that is not contiguous is hashed as its bytes.
    @Test func nonContiguousCollection() {
        let bytes = Array("abc".utf8)
        #expect(SHA256.digest(of: bytes.lazy.map { $0 }) == SHA256.digest(of: bytes))
    }

    /// The digest of a random 100 KB file equals `sha256sum`'s.
    @Test func agreesWithSha256sum() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("sha256-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).bin").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<100 * 1024).map { _ in UInt8.random(in: 0...255, using: &generator) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["sha256sum", path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let printed = String(decoding: output, as: UTF8.self).split(separator: " ").first.map(String.init)
        #expect(printed == SHA256.hexDigest(of: bytes))
    }

    /// Hashes 4 MB and prints the rate: meaningful in a release build (`swift test -c release`).
    @Test func throughput() {
        let bytes = (0..<4 << 20).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        let clock = ContinuousClock()
        var digest: [UInt8] = []
        let rounds = 4
        let elapsed = clock.measure {
            for _ in 0..<rounds { digest = SHA256.digest(of: bytes) }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("SHA256 throughput: \(Int(Double(rounds * bytes.count) / seconds / 1e6)) MB/s over \(rounds) × 4 MB")
        #expect(digest.count == 32)
    }
}
