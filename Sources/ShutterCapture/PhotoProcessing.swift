import ShutterCore

/// What happens to a frame's pixels between the ring and the JPEG: digital zoom's crop, scaled
/// back to the frame's size or not.
///
/// The boundary between frame acquisition (the ring, driver buffers) and the saved photo: the
/// capture path hands a frame and this; ``encodePhoto(_:processing:quality:encoder:)`` returns
/// the JPEG and its size.
public struct PhotoProcessing: Hashable, Sendable {
    /// Digital zoom's centred crop; `nil` for the whole frame.
    public var crop: CropRect?
    /// Scale the crop back to the frame's size (the phone's behaviour) instead of saving it at its own size.
    public var scaleToFrame: Bool

    public init(crop: CropRect? = nil, scaleToFrame: Bool = false) {
        self.crop = crop
        self.scaleToFrame = scaleToFrame
    }

    /// Whether the frame is encoded as it is.
    public var isIdentity: Bool { crop == nil }
}

/// A JPEG and the size it declares.
public struct EncodedPhoto: Sendable {
    public var jpeg: [UInt8]
    public var width: Int
    public var height: Int
}

/// `frame` processed as `processing` says and encoded at `quality`.
///
/// - Throws: ``CaptureError/encoding(_:)`` for unsupported formats, short frames and encoder errors.
public func encodePhoto(_ frame: Frame, processing: PhotoProcessing, quality: Int,
                        encoder: JPEGEncoder) throws(CaptureError) -> EncodedPhoto {
    let crop = processing.crop
    var jpeg = try encoder.encode(frame, crop: crop, quality: quality)
    var width = crop?.width ?? frame.format.width, height = crop?.height ?? frame.format.height
    if processing.scaleToFrame, crop != nil {
        let image = try JPEGDecoder().decode(jpeg).scaled(width: frame.format.width, height: frame.format.height)
        jpeg = try encoder.encodeRGB(image, quality: quality)
        width = frame.format.width
        height = frame.format.height
    } else if crop != nil {
        let size = try JPEGDecoder().size(of: jpeg)
        (width, height) = (size.width, size.height)
    }
    return EncodedPhoto(jpeg: jpeg, width: width, height: height)
}
