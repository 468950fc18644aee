import Foundation

/// One TPV as gpsd reported it, before coalescing: nil where gpsd left a field out.
/// Pure data, so the rules that turn reports into locations are tested without gpsd.
public struct ReceiverReport: Sendable, Equatable {
    /// gpsd's fix mode: 0 unknown, 1 no fix, 2 2D, 3 3D.
    public var mode: Int
    /// gpsd's status (1 GPS, 2 DGPS, 3 RTK fixed, ...); 0 when gpsd sent none.
    public var status: Int
    public var device: String?
    public var time: Date?
    public var latitude: Double?
    public var longitude: Double?
    public var altitudeHAE: Double?
    public var altitudeMSL: Double?
    /// gpsd's error estimates, nominally 95% figures, in metres (epd in degrees, eps and epc in m/s).
    public var epx: Double?
    public var epy: Double?
    public var eph: Double?
    public var epv: Double?
    public var eps: Double?
    public var epd: Double?
    public var epc: Double?
    public var speed: Double?
    public var track: Double?
    public var climb: Double?
    /// When the agent read it, monotonic nanoseconds.
    public var receivedAtNanoseconds: UInt64

    public init(
        mode: Int, status: Int = 0, device: String? = nil, time: Date? = nil,
        latitude: Double? = nil, longitude: Double? = nil, altitudeHAE: Double? = nil, altitudeMSL: Double? = nil,
        epx: Double? = nil, epy: Double? = nil, eph: Double? = nil, epv: Double? = nil,
        eps: Double? = nil, epd: Double? = nil, epc: Double? = nil,
        speed: Double? = nil, track: Double? = nil, climb: Double? = nil, receivedAtNanoseconds: UInt64 = 0
    ) {
        self.mode = mode
        self.status = status
        self.device = device
        self.time = time
        self.latitude = latitude
        self.longitude = longitude
        self.altitudeHAE = altitudeHAE
        self.altitudeMSL = altitudeMSL
        self.epx = epx
        self.epy = epy
        self.eph = eph
        self.epv = epv
        self.eps = eps
        self.epd = epd
        self.epc = epc
        self.speed = speed
        self.track = track
        self.climb = climb
        self.receivedAtNanoseconds = receivedAtNanoseconds
    }

    /// A position may be taken from this report: a 2D or 3D fix with finite coordinates. Some receivers
    /// (myguide-3100) send a position with a no-fix sentence; it is never used.
    public var hasPosition: Bool {
        guard mode >= 2, let latitude, let longitude else { return false }
        return latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
    }
}

/// gpsd's GST: the receiver's own 1-sigma errors, in metres.
public struct PseudorangeNoise: Sendable, Equatable {
    public var device: String?
    public var time: Date?
    public var latitudeSigma: Double?
    public var longitudeSigma: Double?
    public var altitudeSigma: Double?

    public init(
        device: String? = nil, time: Date? = nil, latitudeSigma: Double?, longitudeSigma: Double?,
        altitudeSigma: Double? = nil
    ) {
        self.device = device
        self.time = time
        self.latitudeSigma = latitudeSigma
        self.longitudeSigma = longitudeSigma
        self.altitudeSigma = altitudeSigma
    }
}
