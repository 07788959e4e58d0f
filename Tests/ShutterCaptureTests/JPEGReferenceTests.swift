import CTurboJPEG
import CYUV
import Testing
import ShutterCore
@testable import ShutterCapture

/// TurboJPEG's own JPEG of a YUYV frame, made as the encoder made it before it kept its memory:
/// libyuv splits the frame into fresh planes and TurboJPEG allocates its output.
private func referenceJPEG(yuyv frame: Frame, quality: Int) -> [UInt8] {
    let w = frame.format.width, h = frame.format.height, chromaWidth = w / 2
    let chromaHeight = (h + 1) / 2
    var y = [UInt8](repeating: 0, count: w * h), u = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    var v = [UInt8](repeating: 0, count: chromaWidth * chromaHeight)
    frame.withUnsafeBytes { raw in
        _ = YUY2ToI420(raw.bindMemory(to: UInt8.self).baseAddress, Int32(frame.format.bytesPerLine), &y, Int32(w),
                       &u, Int32(chromaWidth), &v, Int32(chromaWidth), Int32(w), Int32(h))
    }
    let handle = tjInitCompress()
    defer { tjDestroy(handle) }
    var output: UnsafeMutablePointer<UInt8>? = nil
    var size: UInt = 0
    let result: Int32 = y.withUnsafeBufferPointer { yp in
        u.withUnsafeBufferPointer { up in
            v.withUnsafeBufferPointer { vp in
                var planes: [UnsafePointer<UInt8>?] = [yp.baseAddress, up.baseAddress, vp.baseAddress]
                var pitches: [Int32] = [Int32(w), Int32(chromaWidth), Int32(chromaWidth)]
                return tjCompressFromYUVPlanes(handle, &planes, Int32(w), &pitches, Int32(h), Int32(TJSAMP_420.rawValue),
                                               &output, &size, Int32(quality), TJFLAG_ACCURATEDCT)
            }
        }
    }
    defer { tjFree(output) }
    guard result == 0, let output else { return [] }
    return Array(UnsafeBufferPointer(start: output, count: Int(size)))
}

@Suite("JPEGEncoder against TurboJPEG's allocating path")
struct JPEGReferenceTests {
    /// The kept planes and the kept, never reallocated output buffer change no byte of the JPEG.
    @Test func aKeptEncoderWritesTurboJPEGsOwnBytes() throws {
        let encoder = try JPEGEncoder()
        for (width, height, seed) in [(1280, 720, UInt32(21)), (1920, 1080, 22), (640, 480, 23)] {
            let frame = noisyFrame(.yuyv, width: width, height: height, seed: seed)
            let reference = referenceJPEG(yuyv: frame, quality: 93)
            #expect(!reference.isEmpty)
            #expect(try encoder.encode(frame, quality: 93) == reference, "\(width)x\(height)")
        }
    }
}
