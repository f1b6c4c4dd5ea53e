import PulseProtocol

/// The identity every test session connects with.
func testIdentity(appId: String = "app-test", deviceId: String = "device-1") -> ConnectRequest {
    ConnectRequest(
        appId: appId, deviceId: deviceId, installationId: "install-1", platform: "ios", deviceType: "phone",
        packageName: "com.example.app", appVersion: "1.2.3", buildNumber: 42, sdkVersion: "pulsekit-2.0.0",
        capabilities: ["batch_upload", "compression:zstd", "bidirectional_request"])
}

func bytes(_ text: String) -> [UInt8] {
    Array(text.utf8)
}
