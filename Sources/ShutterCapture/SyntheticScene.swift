/// What the synthetic camera shows besides its moving colour bars, on frames at least 160×120:
/// a band at the top with the frame's number and monotonic timestamp burned in (so the frame a
/// photo was made from can be read off it), and a test chart in a box at the centre (so a
/// digitally zoomed photo still shows it): the number and timestamp again, small, over line pairs
/// and a checkerboard at 1 and 2 pixels (fine detail, for judging JPEG quality and scaling) and
/// colour and grey patches. Pure pixel arithmetic in YUYV (BT.601 video range), no state.
enum SyntheticScene {
    /// Whether a frame of this size gets the band and the chart (tiny test frames keep bars only).
    static func applies(width: Int, height: Int) -> Bool { width >= 160 && height >= 120 }

    /// The scale of the burned-in text: 5×7 glyphs, each dot `scale` pixels.
    static func textScale(height: Int) -> Int { max(2, height / 120) }

    /// The height of the top band holding the text.
    static func bandHeight(height: Int) -> Int { textScale(height: height) * 11 }

    /// The chart box: half the frame's width and a third of its height, centred (even x).
    static func chartBox(width: Int, height: Int) -> (x: Int, y: Int, width: Int, height: Int) {
        let boxWidth = (width / 2) & ~1
        let boxHeight = height / 3
        return (((width - boxWidth) / 2) & ~1, (height - boxHeight) / 2, boxWidth, boxHeight)
    }

    /// The rows at the top of the box that hold the small label.
    static func labelRows(height: Int) -> Int { smallScale(height: height) * 11 }

    /// The small label's dot size: it must fit the crop of an 8× digital zoom.
    static func smallScale(height: Int) -> Int { max(1, height / 360) }

    /// The chart box's pixels in YUYV (its label strip dark, the label drawn per frame).
    static func chart(width frameWidth: Int, height frameHeight: Int) -> [UInt8] {
        let box = chartBox(width: frameWidth, height: frameHeight)
        let width = box.width
        // The small label is drawn over the box's middle each frame (``drawBand``).
        let label = 0
        let rows = box.height
        var bytes = [UInt8](repeating: 128, count: width * 2 * rows)
        func put(_ x: Int, _ y: Int, _ luma: UInt8, _ u: UInt8 = 128, _ v: UInt8 = 128) {
            let index = (y * width + x) * 2
            bytes[index] = luma
            // U on even pixels, V on odd ones: a pair shares its chroma.
            bytes[index + 1] = x % 2 == 0 ? u : v
        }
        let half = (width / 2) & ~1
        let quarterHeight = max(4, (rows - label) / 2)
        // Left half, four blocks of fine detail: 1-px and 2-px vertical line pairs, 1-px horizontal
        // lines, a 1-px checkerboard.
        for y in label..<rows {
            for x in 0..<half {
                let block = (x * 2 / half) + (y - label >= quarterHeight ? 2 : 0)
                let on: Bool = switch block {
                case 0: x % 2 == 0
                case 1: (x / 2) % 2 == 0
                case 2: y % 2 == 0
                default: (x + y) % 2 == 0
                }
                put(x, y, on ? 235 : 16)
            }
        }
        // Right half: saturated colours over grey steps.
        let colours: [(Double, Double, Double)] = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1), (1, 0, 1), (1, 1, 0)]
        let patchWidth = max(2, (width - half) / colours.count & ~1)
        for y in label..<rows {
            let y = y - label
            for x in half..<width {
                let patch = min(colours.count - 1, (x - half) / patchWidth)
                // A 2-pixel gap between patches keeps their edges sharp in the photo.
                let inGap = (x - half) % patchWidth < 2 || y % quarterHeight < 2
                if inGap { put(x, y + label, 16); continue }
                if y < quarterHeight {
                    let (r, g, b) = colours[patch]
                    let (luma, u, v) = yuv(r, g, b)
                    put(x, y + label, luma, u, v)
                } else {
                    put(x, y + label, UInt8(16 + patch * 219 / (colours.count - 1)))
                }
            }
        }
        return bytes
    }

    /// BT.601 video-range YUV of an RGB colour with components in 0…1.
    static func yuv(_ r: Double, _ g: Double, _ b: Double) -> (UInt8, UInt8, UInt8) {
        let y = 16 + 65.481 * r + 128.553 * g + 24.966 * b
        let u = 128 - 37.797 * r - 74.203 * g + 112 * b
        let v = 128 + 112 * r - 93.786 * g - 18.214 * b
        return (UInt8(y.rounded()), UInt8(u.rounded()), UInt8(v.rounded()))
    }

    /// The text burned into frame `sequence` taken at `seconds`: `#000123  4567.123456 s`.
    static func label(sequence: UInt32, seconds: Double) -> String {
        var text = ""
        label(sequence: sequence, seconds: seconds, into: &text)
        return text
    }

    /// ``label(sequence:seconds:)`` written into `text` (emptied first, its storage kept): the
    /// camera labels every frame, and a new string each time would be two allocations per frame.
    static func label(sequence: UInt32, seconds: Double, into text: inout String) {
        text.removeAll(keepingCapacity: true)
        // The pieces are at most 15 bytes: Swift keeps them inline, without allocating.
        let number = String(sequence)
        let micros = Int64((seconds * 1_000_000).rounded())
        let fraction = String(micros % 1_000_000)
        text.append("#")
        for _ in 0..<max(0, 6 - number.utf8.count) { text.append("0") }
        text.append(number)
        text.append("  ")
        text.append(String(micros / 1_000_000))
        text.append(".")
        for _ in 0..<(6 - fraction.utf8.count) { text.append("0") }
        text.append(fraction)
        text.append(" s")
    }

    /// Draws the band and `text` into a YUYV frame, luma mapped through `luma` (the exposure bias).
    static func drawBand(_ text: String, into bytes: inout [UInt8], width: Int, height: Int, luma: [UInt8]) {
        bytes.withUnsafeMutableBufferPointer { drawBand(text, into: $0, width: width, height: height, luma: luma) }
    }

    /// ``drawBand(_:into:width:height:luma:)`` into memory the caller owns (a pooled frame buffer).
    static func drawBand(_ text: String, into bytes: UnsafeMutableBufferPointer<UInt8>, width: Int, height: Int, luma: [UInt8]) {
        let band = bandHeight(height: height)
        let dark = luma[16]
        for y in 0..<band {
            for x in 0..<width {
                let index = (y * width + x) * 2
                bytes[index] = dark
                bytes[index + 1] = 128
            }
        }
        drawText(text, into: bytes, width: width, left: textScale(height: height) * 2, top: textScale(height: height) * 2,
                 bottom: band, scale: textScale(height: height), bright: luma[235])
        // The small copy across the middle of the chart box, where a zoomed photo still has it.
        let box = chartBox(width: width, height: height)
        let small = smallScale(height: height)
        let strip = labelRows(height: height)
        let stripTop = box.y + (box.height - strip) / 2
        for y in stripTop..<stripTop + strip {
            for x in box.x..<box.x + box.width {
                let index = (y * width + x) * 2
                bytes[index] = dark
                bytes[index + 1] = 128
            }
        }
        let textWidth = text.count * 6 * small
        drawText(text, into: bytes, width: width, left: box.x + max(0, (box.width - textWidth) / 2), top: stripTop + small * 2,
                 bottom: stripTop + strip, scale: small, bright: luma[235])
    }

    /// Draws `text` with its top left at (`left`, `top`), dots `scale` pixels, clipped at `bottom`.
    static func drawText(_ text: String, into bytes: UnsafeMutableBufferPointer<UInt8>, width: Int, left: Int, top: Int, bottom: Int,
                         scale: Int, bright: UInt8) {
        var left = left
        for character in text {
            guard let rows = glyphs[character] else { left += 6 * scale; continue }
            for (row, bits) in rows.enumerated() {
                for (column, bit) in bits.enumerated() where bit == "#" {
                    for dy in 0..<scale {
                        for dx in 0..<scale {
                            let x = left + column * scale + dx, y = top + row * scale + dy
                            if x < width, y < bottom { bytes[(y * width + x) * 2] = bright }
                        }
                    }
                }
            }
            left += 6 * scale
        }
    }

    /// A 5×7 font for the characters the label uses.
    static let glyphs: [Character: [String]] = [
        "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
        "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
        "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
        "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
        "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
        "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
        "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
        "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
        "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
        "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
        "#": [" # # ", " # # ", "#####", " # # ", "#####", " # # ", " # # "],
        ".": ["     ", "     ", "     ", "     ", "     ", " ##  ", " ##  "],
        "s": ["     ", "     ", " ####", "#    ", " ### ", "    #", "#### "],
    ]
}
