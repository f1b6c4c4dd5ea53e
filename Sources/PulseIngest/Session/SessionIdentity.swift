/// The identity a successful CLIENT_CONNECT bound to a connection; immutable for its lifetime.
struct SessionIdentity: Sendable, Equatable {
    var connectionId: String
    var appId: String
    var packageName: String?
    var deviceId: String
    var installationId: String
    var platform: String
    var sdkVersion: String
    var appVersion: String?
    var buildNumber: Int64
}
