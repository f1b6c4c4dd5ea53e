import Foundation
import Testing

@testable import PulseIngest

@Suite struct UpdateCheckTests {
    func check(_ client: RawClient, platform: String = "ios", build: Int) async throws -> Response {
        try #require(
            await client.request(
                biz: Biz.updateCheck,
                json:
                    #"{"platform":"\#(platform)","appKey":"app_7f3a","packageName":"com.example.shop","buildNumber":\#(build)}"#
            ))
    }

    /// Ordering is by build number: the newest build above the installed one is offered, with the
    /// root-level compatibility copy equal to `data`.
    @Test func offersTheNewestHigherBuildWithTheRootCopy() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let response = try await check(client, build: 241)
        #expect(response.code == 0)
        let data = response.dataObject
        #expect(data["action"] as? String == "optional")
        #expect((data["latestBuildNumber"] as? NSNumber)?.intValue == 250)
        #expect(data["latestVersionName"] as? String == "2.5.0")
        #expect(data["releaseNotes"] as? String == "Faster checkout")
        #expect(data["downloadUrl"] as? String == "https://apps.example.com/shop")
        for key in ["action", "latestVersionName", "latestBuildNumber", "releaseNotes", "downloadUrl"] {
            #expect(String(describing: response.object[key]) == String(describing: data[key]), "root copy of \(key)")
        }
        #expect(response.text.hasPrefix(#"{"code":0,"msg":null,"data":{"action":"optional""#))
        await harness.stop()
    }

    /// Installed build equal to or above the newest: none. Below a newer release's
    /// minimumSupportedBuild: forced.
    @Test func noneWhenCurrentForcedBelowTheMinimum() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        let current = try await check(client, build: 250)
        #expect(current.dataObject["action"] as? String == "none")
        #expect((current.dataObject["latestBuildNumber"] as? NSNumber)?.intValue == 250)
        let ahead = try await check(client, build: 9_999)
        #expect(ahead.dataObject["action"] as? String == "none")
        let old = try await check(client, build: 199)
        #expect(old.dataObject["action"] as? String == "forced")
        #expect((old.dataObject["latestBuildNumber"] as? NSNumber)?.intValue == 250)
        let between = try await check(client, build: 235)
        #expect(between.dataObject["action"] as? String == "optional")
        await harness.stop()
    }

    /// A release marked forced forces every older install; an app without releases fails open to
    /// none.
    @Test func forcedReleaseAndFailOpen() async throws {
        let harness = try await Harness.start()
        let (android, _) = try await harness.connectedClient(Fixture.connect(device: "dev-a", platform: "android"))
        let forced = try await check(android, platform: "android", build: 8_000)
        #expect(forced.dataObject["action"] as? String == "forced")
        let (other, _) = try await harness.connectedClient(Fixture.connect(appId: "app_other"))
        let none = try #require(
            await other.request(
                biz: Biz.updateCheck,
                json: #"{"platform":"ios","appKey":"app_other","packageName":"com.example.shop","buildNumber":1}"#))
        #expect(none.code == 0)
        #expect(none.dataObject["action"] as? String == "none")
        #expect(none.dataObject["latestBuildNumber"] is NSNull)
        await harness.stop()
    }

    /// The request must match the connected app, platform and package (403); malformed is 400.
    @Test func identityAndMalformedRequests() async throws {
        let (harness, client, _) = try await Harness.startConnected()
        for json in [
            #"{"platform":"ios","appKey":"app_other","packageName":"com.example.shop","buildNumber":1}"#,
            #"{"platform":"android","appKey":"app_7f3a","packageName":"com.example.shop","buildNumber":1}"#,
            #"{"platform":"ios","appKey":"app_7f3a","packageName":"com.example.other","buildNumber":1}"#,
        ] {
            #expect(try #require(await client.request(biz: Biz.updateCheck, json: json)).code == 403)
        }
        let malformed = try #require(await client.request(biz: Biz.updateCheck, json: #"{"platform":"ios"}"#))
        #expect(malformed.code == 400)
        #expect(malformed.object["action"] == nil)
        await harness.stop()
    }
}
