import GeofenceCore

/// One message from gpsd, typed. Only what the agent uses is decoded; the rest is `.other`.
public enum GPSMessage: Sendable, Equatable {
    /// TPV.
    case fix(ReceiverReport)
    /// GST: the receiver's 1-sigma errors.
    case noise(PseudorangeNoise)
    /// SKY: satellites used in the fix.
    case sky(device: String?, satellitesUsed: Int)
    /// DEVICE: a receiver was activated or went away (unplugged, or its log ended).
    case device(path: String, active: Bool)
    /// DEVICES: how many receivers gpsd has.
    case devices(count: Int)
    /// VERSION, sent on connect.
    case version
    /// ERROR: gpsd's message.
    case error(String)
    case other
}
