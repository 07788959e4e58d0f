import CTurboJPEG
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// How a frame is cut into horizontal strips that encode at the same time, one per core.
///
/// A baseline JPEG may carry restart markers (ITU T.81 B.2.4.4, F.1.2.3): at each one the
/// entropy coder pads to a byte and the DC predictions start again from zero, so the MCUs
/// after it decode without any state from before it. A strip of whole MCU rows encoded on its
/// own is therefore exactly one restart interval of the whole image: its entropy-coded data,
/// with the same tables, is what an encoder writing restart markers would have written there.
/// ``JPEGStrips/join(_:height:restartInterval:)`` puts the strips' data one after another with
/// RST0…RST7 between them and a DRI segment saying how many MCUs each holds. Decoders
/// (libjpeg, browsers, phones) read such files as any other; the pixels are those of the
/// whole-frame encode, since every block is transformed and quantized the same way.
struct JPEGStripLayout: Equatable {
    /// The luma rows of each strip, top to bottom; every strip but the last holds whole MCU rows.
    var rows: [Range<Int>]
    /// MCUs in each strip but the last (the DRI segment's interval; at most 65535).
    var restartInterval: Int

    /// The MCU's size in pixels for a TurboJPEG subsampling (TurboJPEG's `tjMCUWidth` and
    /// `tjMCUHeight`); `nil` for one it does not name.
    static func mcuSize(_ subsampling: TJSAMP) -> (width: Int, height: Int)? {
        switch subsampling {
        case TJSAMP_444, TJSAMP_GRAY: (8, 8)
        case TJSAMP_422: (16, 8)
        case TJSAMP_420: (16, 16)
        case TJSAMP_440: (8, 16)
        case TJSAMP_411: (32, 8)
        default: nil
        }
    }

    /// Pixels below which a strip is not worth a thread of its own (2^17: a 720×480 frame makes
    /// two strips, 640×360 one): the hand-over costs tens of microseconds, a strip this size
    /// about half a millisecond of encoding on this project's host, more on a Raspberry Pi.
    static let leastPixelsPerStrip = 1 << 17

    /// The strips for a `width`×`height` frame of `subsampling`, at most `maxStrips` and none
    /// smaller than ``leastPixelsPerStrip`` (the last may be); `nil` when one strip is all there is.
    init?(width: Int, height: Int, subsampling: TJSAMP, maxStrips: Int) {
        guard maxStrips > 1, width > 0, height > 0, let mcu = Self.mcuSize(subsampling) else { return nil }
        let mcuColumns = (width + mcu.width - 1) / mcu.width, mcuRows = (height + mcu.height - 1) / mcu.height
        var strips = min(maxStrips, width * height / Self.leastPixelsPerStrip, mcuRows)
        guard strips > 1 else { return nil }
        var mcuRowsPerStrip = (mcuRows + strips - 1) / strips
        // The interval is a 16-bit field: very wide frames take thinner (so more) strips.
        if mcuRowsPerStrip * mcuColumns > 0xFFFF {
            mcuRowsPerStrip = 0xFFFF / mcuColumns
            guard mcuRowsPerStrip > 0 else { return nil }
        }
        strips = (mcuRows + mcuRowsPerStrip - 1) / mcuRowsPerStrip
        guard strips > 1 else { return nil }
        let stripHeight = mcuRowsPerStrip * mcu.height
        rows = (0..<strips).map { $0 * stripHeight..<min(height, ($0 + 1) * stripHeight) }
        restartInterval = mcuRowsPerStrip * mcuColumns
    }
}

/// Joining strips encoded on their own into one JPEG (see ``JPEGStripLayout``).
enum JPEGStrips {
    /// One JPEG of the strips' JPEGs, top to bottom: the first strip's header with the whole
    /// `height` in its frame header and a DRI segment of `restartInterval`, then each strip's
    /// entropy-coded data, RSTn between them (n counting 0…7 round), then EOI.
    ///
    /// `nil` unless every strip is a baseline JPEG of one scan without restart markers of its own
    /// and the same header as the first but for its height: TurboJPEG reads `TJ_OPTIMIZE`,
    /// `TJ_ARITHMETIC`, `TJ_PROGRESSIVE` and `TJ_RESTART` from the environment, and strips
    /// encoded so (each its own Huffman tables, or several scans) cannot be joined; the caller
    /// then encodes the frame whole.
    static func join(_ strips: [[UInt8]], height: Int, restartInterval: Int) -> [UInt8]? {
        guard let first = strips.first, (1...0xFFFF).contains(height), (1...0xFFFF).contains(restartInterval),
              let segments = JPEGMarkers.headerSegments(first), let scan = segments.last, scan.marker == 0xDA,
              let frame = segments.first(where: \.isFrameHeader), frame.marker == 0xC0 || frame.marker == 0xC1, frame.end - frame.start >= 9,
              !segments.contains(where: { $0.marker == 0xDD })  // a DRI: restart markers of its own
        else { return nil }
        // The frame header's height: FF Cn, length (2), precision (1), then Y (2).
        let heightAt = frame.start + 5
        var data: [Range<Int>] = []
        for strip in strips {
            guard strip.count >= scan.end + 2, strip[strip.count - 2] == 0xFF, strip[strip.count - 1] == 0xD9,
                  Self.sameHeader(strip, first, through: scan.end, except: heightAt..<heightAt + 2)
            else { return nil }
            let entropy = scan.end..<strip.count - 2
            guard !containsMarker(strip, in: entropy) else { return nil }
            data.append(entropy)
        }
        var joined = [UInt8]()
        joined.reserveCapacity(scan.end + 6 + data.reduce(0) { $0 + $1.count + 2 } + 2)
        joined += first[..<scan.start]
        joined[heightAt] = UInt8(height >> 8)
        joined[heightAt + 1] = UInt8(height & 0xFF)
        joined += [0xFF, 0xDD, 0x00, 0x04, UInt8(restartInterval >> 8), UInt8(restartInterval & 0xFF)]
        joined += first[scan.start..<scan.end]
        for (index, entropy) in data.enumerated() {
            joined += strips[index][entropy]
            if index < data.count - 1 { joined += [0xFF, 0xD0 + UInt8(index % 8)] }
        }
        joined += [0xFF, 0xD9]
        return joined
    }

    /// Whether `a` and `b` agree on their first `count` bytes, bytes in `skipped` aside.
    private static func sameHeader(_ a: [UInt8], _ b: [UInt8], through count: Int, except skipped: Range<Int>) -> Bool {
        a.count >= count && b.count >= count
            && a[..<skipped.lowerBound] == b[..<skipped.lowerBound] && a[skipped.upperBound..<count] == b[skipped.upperBound..<count]
    }

    /// Whether entropy-coded data holds a marker: 0xFF followed by anything but a stuffed 0x00.
    /// 0xFF is about one byte in 256 there, so `memchr` (vectorized) finds each in turn.
    private static func containsMarker(_ bytes: [UInt8], in range: Range<Int>) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return false }
            var index = range.lowerBound
            while index < range.upperBound, let found = memchr(base + index, 0xFF, range.upperBound - index) {
                let at = base.distance(to: found.assumingMemoryBound(to: UInt8.self))
                if at + 1 >= range.upperBound || base[at + 1] != 0x00 { return true }
                index = at + 2
            }
            return false
        }
    }
}
