/// A SHA-256 digest (FIPS 180-4), fed in pieces.
///
/// Pure Swift because Linux has no CryptoKit here and the daemon links no crypto library: a shot's
/// result carries its photo's digest so a rig can tell copies apart without comparing bytes.
/// Whole blocks are compressed straight from the caller's buffer; only a tail shorter than a block
/// is copied, into a fixed 64-byte buffer, so hashing allocates nothing per byte.
///
///     var hash = SHA256()
///     hash.update(header)
///     hash.update(body)
///     let hex = SHA256.hex(of: hash.finalize())
public struct SHA256: Sendable {
    /// The length of a digest, in bytes.
    public static let digestBytes = 32
    /// The length of one block, in bytes.
    public static let blockBytes = 64

    private var state: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32) =
        (0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19)
    /// Bytes of a block not yet compressed; `pendingCount` of them are meaningful.
    private var pending = [UInt8](repeating: 0, count: SHA256.blockBytes)
    private var pendingCount = 0
    /// Every byte given so far (the message length the padding records, in bits).
    private var totalBytes: UInt64 = 0

    public init() {}

    /// Adds `bytes` to the message.
    public mutating func update<Bytes: Collection<UInt8>>(_ bytes: Bytes) {
        // Contiguous collections ([UInt8], slices, Data) are read in place; others are copied once.
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(buffer: UnsafeRawBufferPointer($0)) }
        if done == nil { Array(bytes).withUnsafeBytes { update(buffer: $0) } }
    }

    /// Adds the bytes of `buffer` to the message.
    public mutating func update(buffer: UnsafeRawBufferPointer) {
        guard !buffer.isEmpty else { return }
        totalBytes &+= UInt64(buffer.count)
        var offset = 0
        if pendingCount > 0 {
            let taken = min(Self.blockBytes - pendingCount, buffer.count)
            let at = pendingCount
            pending.withUnsafeMutableBytes { block in
                block.baseAddress!.advanced(by: at).copyMemory(from: buffer.baseAddress!, byteCount: taken)
            }
            pendingCount += taken
            offset = taken
            guard pendingCount == Self.blockBytes else { return }
            let block = pending
            block.withUnsafeBytes { compress(blocks: $0) }
            pendingCount = 0
        }
        let whole = (buffer.count - offset) / Self.blockBytes * Self.blockBytes
        if whole > 0 { compress(blocks: UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + whole)])) }
        offset += whole
        let rest = buffer.count - offset
        if rest > 0 {
            pending.withUnsafeMutableBytes { block in
                block.baseAddress!.copyMemory(from: buffer.baseAddress!.advanced(by: offset), byteCount: rest)
            }
            pendingCount = rest
        }
    }

    /// The digest of everything added so far; more may still be added afterwards.
    public func finalize() -> [UInt8] {
        var copy = self
        return copy.pad()
    }

    /// Pads the message and returns the digest of the state after it.
    private mutating func pad() -> [UInt8] {
        let bits = totalBytes &* 8
        // A 1 bit, zeros to 56 bytes past a block boundary, then the length as a big-endian UInt64.
        var tail: [UInt8] = [0x80]
        let zeros = (Self.blockBytes + 56 - (pendingCount + 1) % Self.blockBytes) % Self.blockBytes
        tail += repeatElement(0, count: zeros)
        for shift in stride(from: 56, through: 0, by: -8) { tail.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        let length = totalBytes
        tail.withUnsafeBytes { update(buffer: $0) }
        totalBytes = length
        precondition(pendingCount == 0, "SHA-256 padding must end on a block boundary")
        var digest: [UInt8] = []
        digest.reserveCapacity(Self.digestBytes)
        for word in [state.0, state.1, state.2, state.3, state.4, state.5, state.6, state.7] {
            digest += [UInt8(word >> 24), UInt8(truncatingIfNeeded: word >> 16), UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
        return digest
    }

    /// The digest of `bytes`, in one call.
    public static func digest<Bytes: Collection<UInt8>>(of bytes: Bytes) -> [UInt8] {
        var hash = SHA256()
        hash.update(bytes)
        return hash.finalize()
    }

    /// HMAC-SHA-256 (RFC 2104) of `message` under `key`: a value only the key's holder can make.
    public static func hmac<Key: Collection<UInt8>, Message: Collection<UInt8>>(key: Key, message: Message) -> [UInt8] {
        var block = key.count > blockBytes ? digest(of: key) : Array(key)
        block += repeatElement(0, count: blockBytes - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5C })
        outer.update(inner.finalize())
        return outer.finalize()
    }

    /// `bytes` as lowercase hexadecimal, as `sha256sum` prints a digest.
    public static func hex<Bytes: Collection<UInt8>>(of bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// The digest of `bytes` as lowercase hexadecimal.
    public static func hexDigest<Bytes: Collection<UInt8>>(of bytes: Bytes) -> String {
        hex(of: digest(of: bytes))
    }

    /// The round constants: the first 32 bits of the fractional parts of the cube roots of the
    /// first 64 primes (FIPS 180-4, 4.2.2).
    private static let k: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    /// Compresses every 64-byte block of `blocks` (a whole number of them) into the state.
    private mutating func compress(blocks: UnsafeRawBufferPointer) {
        // The schedule lives on the stack in a tuple-backed buffer: no heap traffic per block.
        var w: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64,
                UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var h = state
        Self.k.withUnsafeBufferPointer { k in
            withUnsafeMutableBytes(of: &w) { raw in
                let w = raw.bindMemory(to: UInt32.self)
                var start = 0
                while start < blocks.count {
                    for i in 0..<16 {
                        w[i] = UInt32(bigEndian: blocks.loadUnaligned(fromByteOffset: start + i * 4, as: UInt32.self))
                    }
                    for i in 16..<64 {
                        let x = w[i - 15], y = w[i - 2]
                        let s0 = x.rotatedRight(7) ^ x.rotatedRight(18) ^ (x >> 3)
                        let s1 = y.rotatedRight(17) ^ y.rotatedRight(19) ^ (y >> 10)
                        w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
                    }
                    var (a, b, c, d, e, f, g, hh) = h
                    for i in 0..<64 {
                        let s1 = e.rotatedRight(6) ^ e.rotatedRight(11) ^ e.rotatedRight(25)
                        let choice = (e & f) ^ (~e & g)
                        let t1 = hh &+ s1 &+ choice &+ k[i] &+ w[i]
                        let s0 = a.rotatedRight(2) ^ a.rotatedRight(13) ^ a.rotatedRight(22)
                        let majority = (a & b) ^ (a & c) ^ (b & c)
                        let t2 = s0 &+ majority
                        hh = g; g = f; f = e; e = d &+ t1
                        d = c; c = b; b = a; a = t1 &+ t2
                    }
                    h = (h.0 &+ a, h.1 &+ b, h.2 &+ c, h.3 &+ d, h.4 &+ e, h.5 &+ f, h.6 &+ g, h.7 &+ hh)
                    start += Self.blockBytes
                }
            }
        }
        state = h
    }
}

extension UInt32 {
    @inline(__always)
    fileprivate func rotatedRight(_ count: UInt32) -> UInt32 { (self >> count) | (self << (32 &- count)) }
}
