#if canImport(Glibc)
import Glibc
#endif
import CExif
import CShutterSystem
import ShutterCore

/// What goes into a photo's EXIF block.
public struct PhotoMetadata: Hashable, Sendable {
    /// When the frame was taken, on the wall clock.
    public var taken: WallTime
    /// The camera's name as it reports it (the V4L2 card name): `Model`.
    public var cameraCard: String
    /// The camera's maker as it reports it (USB manufacturer string): `Make`, left out when unknown.
    public var cameraMake: String?
    /// The board's name: `ImageDescription`, and in `Software`.
    public var boardName: String
    /// Whether the system clock is synchronised (NTP, GPS). The date is written either way (an
    /// offline rig's clock still counts from its last boot or saved time, and a date that may be
    /// off beats none); when it is not, `UserComment` and the photo event say the date may be off.
    public var clockSynchronized: Bool = true
    /// EXIF orientation, 1...8.
    public var orientation: Int
    /// Frame time minus press time, in milliseconds.
    public var offsetMs: Double
    /// The stored image size.
    public var width: Int
    public var height: Int
    /// `Software`.
    public var software: String = "shutter"
    /// How the frame was exposed, as the camera reported it (libcamera); empty for V4L2.
    public var exposure = FrameExposure()

    public init(taken: WallTime, cameraCard: String, boardName: String, orientation: Int, offsetMs: Double,
                width: Int, height: Int) {
        self.taken = taken
        self.cameraCard = cameraCard
        self.boardName = boardName
        self.orientation = orientation
        self.offsetMs = offsetMs
        self.width = width
        self.height = height
    }

    /// `UserComment` text: how far the saved frame is from the press, the colour temperature (EXIF
    /// has no tag for it), and whether the date may be off.
    public var comment: String {
        var text = "shutter: press-to-frame offset \(JSONLine.number(offsetMs, decimals: 3)) ms"
        if let kelvin = exposure.colourTemperature { text += "; colour temperature \(kelvin) K" }
        if !clockSynchronized { text += "; clock not synchronised: the date may be off" }
        return text
    }

    /// Whether the system clock is synchronised now. The corresponding C function is `adjtimex`
    /// (`STA_UNSYNC`), which needs neither timedatectl nor D-Bus.
    public static func systemClockIsSynchronized() -> Bool { CShutterSystem_clockIsSynchronized() != 0 }
}

/// Builds EXIF blocks with libexif.
public enum ExifWriter {
    /// The APP1 payload (`Exif\0\0` then a TIFF structure) for `metadata`.
    ///
    /// - Throws: ``CaptureError/encoding(_:)`` if libexif cannot allocate or save.
    /// The corresponding C functions are `exif_data_new` and `exif_data_save_data`.
    public static func app1Payload(for metadata: PhotoMetadata, utc: Bool = false) throws(CaptureError) -> [UInt8] {
        guard let data = exif_data_new() else { throw CaptureError.encoding("exif_data_new failed") }
        defer { exif_data_unref(data) }
        exif_data_set_option(data, EXIF_DATA_OPTION_FOLLOW_SPECIFICATION)
        exif_data_set_data_type(data, EXIF_DATA_TYPE_COMPRESSED)
        exif_data_set_byte_order(data, EXIF_BYTE_ORDER_INTEL)
        exif_data_fix(data)
        let order = EXIF_BYTE_ORDER_INTEL
        let ifd0 = data.pointee.ifd.0!, exif = data.pointee.ifd.2!

        var fields = metadata.taken.brokenDown(utc: utc)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y:%m:%d %H:%M:%S", &fields)
        let date = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let ms = String(metadata.taken.milliseconds)
        let subsec = String(repeating: "0", count: max(0, 3 - ms.count)) + ms

        let seconds = utc ? 0 : Int(fields.tm_gmtoff)
        func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let zone = (seconds < 0 ? "-" : "+") + twoDigits(abs(seconds) / 3600) + ":" + twoDigits(abs(seconds) % 3600 / 60)

        if let make = metadata.cameraMake, !make.isEmpty { setASCII(ifd0, EXIF_TAG_MAKE, make) }
        setASCII(ifd0, EXIF_TAG_MODEL, metadata.cameraCard)
        setASCII(ifd0, EXIF_TAG_SOFTWARE, "\(metadata.software) (board \(metadata.boardName))")
        setASCII(ifd0, EXIF_TAG_IMAGE_DESCRIPTION, metadata.boardName)
        if let entry = initialized(ifd0, EXIF_TAG_ORIENTATION) {
            exif_set_short(entry.pointee.data, order, ExifShort(metadata.orientation))
        }
        // The frame's time, not exif_data_fix's "now"; written even when the clock is not synchronised.
        setASCII(ifd0, EXIF_TAG_DATE_TIME, date)
        setASCII(exif, EXIF_TAG_DATE_TIME_ORIGINAL, date)
        setASCII(exif, EXIF_TAG_DATE_TIME_DIGITIZED, date)
        setASCII(exif, EXIF_TAG_SUB_SEC_TIME_ORIGINAL, subsec)
        setASCII(exif, EXIF_TAG_SUB_SEC_TIME_DIGITIZED, subsec)
        setASCII(exif, EXIF_TAG_OFFSET_TIME, zone)
        setASCII(exif, EXIF_TAG_OFFSET_TIME_ORIGINAL, zone)
        setASCII(exif, EXIF_TAG_OFFSET_TIME_DIGITIZED, zone)
        // The OffsetTime tags are EXIF 2.31's; libexif's fix writes 0210, under which readers may ignore them.
        setBytes(exif, EXIF_TAG_EXIF_VERSION, Array("0231".utf8), format: EXIF_FORMAT_UNDEFINED)
        // Every encoder here writes sRGB (TurboJPEG's YCbCr from the camera's sRGB/Rec.601 frames);
        // libexif's fix leaves ColorSpace "Uncalibrated".
        if let entry = initialized(exif, EXIF_TAG_COLOR_SPACE) { exif_set_short(entry.pointee.data, order, 1) }
        writeExposure(metadata.exposure, to: exif, order)
        if let entry = initialized(exif, EXIF_TAG_PIXEL_X_DIMENSION) {
            setDimension(entry, metadata.width, order)
        }
        if let entry = initialized(exif, EXIF_TAG_PIXEL_Y_DIMENSION) {
            setDimension(entry, metadata.height, order)
        }
        setBytes(exif, EXIF_TAG_USER_COMMENT, Array("ASCII\0\0\0".utf8) + Array(metadata.comment.utf8), format: EXIF_FORMAT_UNDEFINED)

        var output: UnsafeMutablePointer<UInt8>? = nil
        var size: UInt32 = 0
        exif_data_save_data(data, &output, &size)
        guard let output, size > 0 else { throw CaptureError.encoding("exif_data_save_data produced nothing") }
        defer { free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(size)))
    }

    /// Every tag of an APP1 payload with its value as text, by tag number (tests and checks).
    /// The corresponding C functions are `exif_data_new_from_data` and `exif_entry_get_value`.
    static func read(_ payload: [UInt8]) -> [UInt16: String] {
        var tags: [UInt16: String] = [:]
        forEachEntry(of: payload) { entry in
            var buffer = [CChar](repeating: 0, count: 256)
            exif_entry_get_value(entry, &buffer, UInt32(buffer.count))
            tags[UInt16(entry.pointee.tag.rawValue)] = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
        return tags
    }

    /// Every tag of an APP1 payload with its stored bytes, by tag number: for values libexif's
    /// text leaves vague (a rational's exact terms, an ExifVersion it has no name for).
    static func readData(_ payload: [UInt8]) -> [UInt16: [UInt8]] {
        var tags: [UInt16: [UInt8]] = [:]
        forEachEntry(of: payload) { entry in
            tags[UInt16(entry.pointee.tag.rawValue)] = entry.pointee.data.map { Array(UnsafeBufferPointer(start: $0, count: Int(entry.pointee.size))) } ?? []
        }
        return tags
    }

    private static func forEachEntry(of payload: [UInt8], _ body: (UnsafeMutablePointer<ExifEntry>) -> Void) {
        guard let data = payload.withUnsafeBufferPointer({ exif_data_new_from_data($0.baseAddress, UInt32($0.count)) }) else { return }
        defer { exif_data_unref(data) }
        withUnsafeBytes(of: data.pointee.ifd) { raw in
            for content in raw.bindMemory(to: UnsafeMutablePointer<ExifContent>?.self) {
                guard let content else { continue }
                for index in 0..<Int(content.pointee.count) {
                    if let entry = content.pointee.entries[index] { body(entry) }
                }
            }
        }
    }

    /// `jpeg` with an EXIF block for `metadata`.
    public static func adding(_ metadata: PhotoMetadata, to jpeg: [UInt8]) throws(CaptureError) -> [UInt8] {
        let payload = try app1Payload(for: metadata)
        guard let out = JPEGMarkers.insertingAPP1(jpeg, payload: payload) else {
            throw CaptureError.encoding("cannot add EXIF: the image is not a JPEG or the block is too large")
        }
        return out
    }

    /// The camera's own figures for the frame, as rpicam-apps writes them (image/jpeg.cpp):
    /// ExposureTime in seconds (microseconds over 1000000), ISOSpeedRatings 100 × AnalogueGain ×
    /// DigitalGain (the Raspberry Pi AGC's gain beyond the sensor's; 1 when not reported), and the lens position
    /// (dioptres) as SubjectDistance 1/LensPosition metres (0 dioptres: EXIF's infinity).
    private static func writeExposure(_ exposure: FrameExposure, to exif: UnsafeMutablePointer<ExifContent>, _ order: ExifByteOrder) {
        if let time = exposure.exposureTime, time.rawValue > 0 {
            let microseconds = ExifLong(clamping: (time.rawValue + 500) / 1000)
            setRational(exif, EXIF_TAG_EXPOSURE_TIME, ExifRational(numerator: max(1, microseconds), denominator: 1_000_000), order)
        }
        if let analogue = exposure.analogueGain, case let gain = analogue * (exposure.digitalGain ?? 1), gain > 0, gain.isFinite {
            setBytes(exif, EXIF_TAG_ISO_SPEED_RATINGS, [0, 0], format: EXIF_FORMAT_SHORT)
            if let entry = exif_content_get_entry(exif, EXIF_TAG_ISO_SPEED_RATINGS) {
                exif_set_short(entry.pointee.data, order, ExifShort(clamping: Int((gain * 100).rounded())))
            }
        }
        if let dioptres = exposure.lensPosition, dioptres >= 0, dioptres.isFinite {
            let distance = dioptres == 0 ? ExifRational(numerator: 0xFFFF_FFFF, denominator: 1)
                : ExifRational(numerator: ExifLong(clamping: Int((1000 / dioptres).rounded())), denominator: 1000)
            setRational(exif, EXIF_TAG_SUBJECT_DISTANCE, distance, order)
        }
    }

    private static func setRational(_ content: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ value: ExifRational,
                                    _ order: ExifByteOrder) {
        setBytes(content, tag, [UInt8](repeating: 0, count: 8), format: EXIF_FORMAT_RATIONAL)
        if let entry = exif_content_get_entry(content, tag) { exif_set_rational(entry.pointee.data, order, value) }
    }

    private static func remove(_ content: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag) {
        if let old = exif_content_get_entry(content, tag) { exif_content_remove_entry(content, old) }
    }

    /// A fresh entry of `tag` with libexif's default format and size, added to `content`.
    private static func initialized(_ content: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag) -> UnsafeMutablePointer<ExifEntry>? {
        remove(content, tag)
        guard let entry = exif_entry_new() else { return nil }
        exif_content_add_entry(content, entry)
        exif_entry_initialize(entry, tag)
        exif_entry_unref(entry)
        return entry.pointee.data == nil ? nil : entry
    }

    private static func setDimension(_ entry: UnsafeMutablePointer<ExifEntry>, _ value: Int, _ order: ExifByteOrder) {
        if entry.pointee.format == EXIF_FORMAT_LONG {
            exif_set_long(entry.pointee.data, order, ExifLong(value))
        } else {
            exif_set_short(entry.pointee.data, order, ExifShort(truncatingIfNeeded: value))
        }
    }

    private static func setASCII(_ content: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ text: String) {
        setBytes(content, tag, Array(text.utf8) + [0], format: EXIF_FORMAT_ASCII)
    }

    /// Adds an entry whose data libexif frees (it was allocated with `malloc`, libexif's default allocator).
    private static func setBytes(_ content: UnsafeMutablePointer<ExifContent>, _ tag: ExifTag, _ bytes: [UInt8], format: ExifFormat) {
        remove(content, tag)
        guard let entry = exif_entry_new(), let storage = malloc(bytes.count) else { return }
        storage.copyMemory(from: bytes, byteCount: bytes.count)
        entry.pointee.tag = tag
        entry.pointee.format = format
        entry.pointee.components = UInt(bytes.count / max(1, Int(exif_format_get_size(format))))
        entry.pointee.size = UInt32(bytes.count)
        entry.pointee.data = storage.assumingMemoryBound(to: UInt8.self)
        exif_content_add_entry(content, entry)
        exif_entry_unref(entry)
    }
}
