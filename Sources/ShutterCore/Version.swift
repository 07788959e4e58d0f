/// shutter's version, as `shutter --version` prints it and Home Assistant shows it (the
/// device's software version).
public let shutterVersion = "0.1.0"
