public enum GeofenceAgentVersion { public static let string = "0.1.0" }
