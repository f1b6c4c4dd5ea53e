import PulseKit
import PulseProtocol
import Testing

@testable import PulseClient

/// The connection handle is an integer here: the machine never looks inside it.
private typealias Machine = SessionStateMachine<Int>

private func info(revision: Int64 = 3, intervalMs: Int64 = 60_000, id: String = "c1") -> PulseSessionInfo {
    PulseSessionInfo(
        connectionId: id, protocolVersion: 2, serverTimeMs: 1_000, configRevision: revision,
        serverHeartbeatIntervalMs: intervalMs, collectKinds: [])
}

private func machine(
    _ policy: PulseReconnectPolicy = PulseReconnectPolicy(), random: UInt64 = .max, keepConnected: Bool = true
) -> Machine {
    Machine(policy: policy, random: RandomSource { random }, keepConnected: keepConnected)
}

/// Drives the machine to connected with connection handle `handle` at time `now`.
private func connect(_ machine: inout Machine, handle: Int, now: Duration, revision: Int64 = 3) -> UInt64 {
    guard case .startConnect(let generation) = machine.connectionWanted(now: now) else {
        Issue.record("expected startConnect")
        return 0
    }
    _ = machine.connectSucceeded(generation: generation, connection: handle, info: info(revision: revision), now: now)
    return generation
}

@Suite("Session state machine")
struct SessionStateMachineTests {
    @Test("first demand connects, concurrent demand joins, success reports heartbeat time and revision")
    func connectOnDemand() throws {
        var m = machine()
        guard case .startConnect(let generation) = m.connectionWanted(now: .seconds(5)) else {
            Issue.record("first demand must start a connect")
            return
        }
        #expect(generation == 1)
        guard case .join = m.connectionWanted(now: .seconds(5)) else {
            Issue.record("second demand must join the running attempt")
            return
        }
        let action = m.connectSucceeded(
            generation: 1, connection: 10, info: info(revision: 7, intervalMs: 1_000), now: .seconds(6))
        guard case .connected(let reported, let heartbeatAt, let revision) = action else {
            Issue.record("expected connected")
            return
        }
        #expect(reported.connectionId == "c1")
        #expect(reported.heartbeatInterval == .seconds(15))  // 1 s from the server, clamped
        #expect(heartbeatAt == .seconds(21))
        #expect(revision == 7)
        #expect(m.configRevision == 7)
        guard case .use(let handle, let current) = m.connectionWanted(now: .seconds(7)) else {
            Issue.record("connected session must hand out its connection")
            return
        }
        #expect(handle == 10 && current == 1)
    }

    @Test("failed attempts back off with doubling caps; demand meanwhile must wait")
    func failureBackoff() {
        var m = machine()  // constant .max random: every delay equals its cap
        var now = Duration.zero
        var waits: [Duration] = []
        for _ in 0..<10 {
            guard case .startConnect(let generation) = m.connectionWanted(now: now) else {
                Issue.record("expected an attempt at \(now)")
                return
            }
            guard case .failWaiters(let reconnectAt) = m.connectFailed(generation: generation, now: now) else {
                Issue.record("expected failWaiters")
                return
            }
            guard case .waitUntil(let until) = m.connectionWanted(now: now) else {
                Issue.record("demand during backoff must wait")
                return
            }
            #expect(reconnectAt == until)
            waits.append(until - now)
            now = until
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300].map { Duration.seconds($0) })
    }

    @Test("jittered backoff with a seeded generator stays within [0, cap] of each step")
    func seededFailureBackoff() {
        var m = Machine(policy: PulseReconnectPolicy(), random: RandomSource(seed: 99), keepConnected: false)
        var now = Duration.zero
        for failures in 0..<12 {
            guard case .startConnect(let generation) = m.connectionWanted(now: now) else {
                Issue.record("expected an attempt")
                return
            }
            #expect(m.connectFailed(generation: generation, now: now) == .failWaiters(reconnectAt: nil))
            let cap = ReconnectBackoff.cap(failures: failures, policy: PulseReconnectPolicy())
            guard case .waitUntil(let until) = m.connectionWanted(now: now) else {
                // A zero delay draws "attempt now".
                continue
            }
            #expect(until - now >= .zero && until - now <= cap)
            now = until
        }
    }

    @Test("the window cap delays attempts even when the backoff is zero")
    func windowCapInMachine() {
        var m = machine(PulseReconnectPolicy(initialDelay: .zero, maxAttemptsPerWindow: 2, window: .seconds(100)))
        // The first failure leaves room in the window; the second fills it.
        for expected in [Duration.seconds(1), .seconds(101)] {
            guard case .startConnect(let generation) = m.connectionWanted(now: .seconds(1)) else {
                Issue.record("expected an attempt")
                return
            }
            #expect(m.connectFailed(generation: generation, now: .seconds(1)) == .failWaiters(reconnectAt: expected))
        }
        guard case .waitUntil(let until) = m.connectionWanted(now: .seconds(1)) else {
            Issue.record("the third attempt must wait for the window")
            return
        }
        #expect(until == .seconds(101))
        #expect(m.reconnectTimerFired(now: .seconds(50)) == .waitUntil(.seconds(101)))
        guard case .startConnect = m.reconnectTimerFired(now: .seconds(101)) else {
            Issue.record("the timer may attempt once the window allows")
            return
        }
    }

    @Test("a loss after a stable period retries within the initial delay; an early loss keeps doubling")
    func lossResetsOnlyWhenStable() {
        var m = machine(PulseReconnectPolicy(stableConnectionDuration: .seconds(60)))
        // Two failures first: the cap is at 4 s.
        for _ in 0..<2 {
            guard case .startConnect(let generation) = m.connectionWanted(now: .zero) else { return }
            _ = m.connectFailed(generation: generation, now: .zero)
            _ = m.reconnectTimerFired(now: .seconds(1000))
        }
        var now = Duration.seconds(1000)
        var generation = connect(&m, handle: 1, now: now)
        now += .seconds(10)
        #expect(m.connectionClosed(generation: generation, now: now) == .lost(reconnectAt: now + .seconds(4)))
        now += .seconds(4)
        generation = connect(&m, handle: 2, now: now)
        now += .seconds(61)
        #expect(m.connectionClosed(generation: generation, now: now) == .lost(reconnectAt: now + .seconds(1)))
    }

    @Test("stale reports of older generations are ignored")
    func staleGenerations() {
        var m = machine()
        let first = connect(&m, handle: 1, now: .zero)
        #expect(m.connectionClosed(generation: first, now: .seconds(100)) == .lost(reconnectAt: .seconds(101)))
        guard case .startConnect(let second) = m.connectionWanted(now: .seconds(101)) else { return }
        #expect(second == first + 1)
        #expect(m.connectFailed(generation: first, now: .seconds(102)) == .none)
        #expect(m.connectionClosed(generation: first, now: .seconds(102)) == .none)
        guard
            case .discard(let handle) = m.connectSucceeded(
                generation: first, connection: 9, info: info(), now: .seconds(102))
        else {
            Issue.record("a stale connection must be discarded")
            return
        }
        #expect(handle == 9)
        guard case .none = m.heartbeatDue(generation: first) else {
            Issue.record("no heartbeat for a stale generation")
            return
        }
    }

    @Test("401: the connection is abandoned and the next attempt may start at once")
    func unauthorizedReconnectsImmediately() {
        var m = machine()
        let generation = connect(&m, handle: 1, now: .seconds(10))
        guard
            case .close(let handle, let reconnectAt) = m.abandonConnection(
                generation: generation, reason: .unauthorized, now: .seconds(11))
        else {
            Issue.record("expected close")
            return
        }
        #expect(handle == 1 && reconnectAt == .seconds(11))
        guard case .startConnect(let next) = m.connectionWanted(now: .seconds(11)) else {
            Issue.record("reconnect must be allowed at once")
            return
        }
        #expect(next == generation + 1)
        // The old connection's close notification arrives later and changes nothing.
        #expect(m.connectionClosed(generation: generation, now: .seconds(12)) == .none)
    }

    @Test("an unresponsive connection is abandoned with backoff")
    func unresponsiveBacksOff() {
        var m = machine()
        let generation = connect(&m, handle: 1, now: .seconds(10))
        guard
            case .close(_, let reconnectAt) = m.abandonConnection(
                generation: generation, reason: .unresponsive, now: .seconds(20))
        else {
            Issue.record("expected close")
            return
        }
        #expect(reconnectAt == .seconds(21))
    }

    @Test("heartbeat results update the session, clamp the interval and report revision changes once")
    func heartbeats() {
        var m = machine()
        let generation = connect(&m, handle: 4, now: .zero, revision: 3)
        guard case .send(let handle, let connectionId) = m.heartbeatDue(generation: generation) else {
            Issue.record("expected a heartbeat")
            return
        }
        #expect(handle == 4 && connectionId == "c1")
        let same = Machine.HeartbeatUpdate(
            serverTimeMs: 2_000, configRevision: 3, heartbeatIntervalMs: 900_000, collectKinds: [.crash])
        #expect(
            m.heartbeatAccepted(generation: generation, update: same, now: .seconds(60))
                == .schedule(at: .seconds(360), revisionChanged: nil))
        #expect(m.info?.heartbeatInterval == .seconds(300))
        #expect(m.info?.serverHeartbeatIntervalMs == 900_000)
        #expect(m.info?.collectKinds == [.crash])
        let newer = Machine.HeartbeatUpdate(
            serverTimeMs: 3_000, configRevision: 4, heartbeatIntervalMs: 20_000, collectKinds: [])
        #expect(
            m.heartbeatAccepted(generation: generation, update: newer, now: .seconds(360))
                == .schedule(at: .seconds(380), revisionChanged: 4))
        #expect(m.configRevision == 4)
        #expect(
            m.heartbeatFailedTransiently(generation: generation, now: .seconds(380))
                == .schedule(at: .seconds(400), revisionChanged: nil))
        #expect(m.heartbeatAccepted(generation: generation + 1, update: newer, now: .seconds(400)) == .none)
    }

    @Test("close fails later demand, discards a connect that finishes afterwards, and happens once")
    func closing() {
        var m = machine()
        guard case .startConnect(let generation) = m.connectionWanted(now: .zero) else { return }
        guard case .close(let handle) = m.close() else {
            Issue.record("expected close")
            return
        }
        #expect(handle == nil)
        guard
            case .discard(let late) = m.connectSucceeded(
                generation: generation, connection: 5, info: info(), now: .zero)
        else {
            Issue.record("a connect finishing after close must be discarded")
            return
        }
        #expect(late == 5)
        guard case .fail(let error) = m.connectionWanted(now: .zero) else {
            Issue.record("demand after close must fail")
            return
        }
        #expect(error.code == .sessionClosed)
        guard case .alreadyClosed = m.close() else {
            Issue.record("second close")
            return
        }
        var connected = machine()
        _ = connect(&connected, handle: 8, now: .zero)
        guard case .close(let open) = connected.close() else { return }
        #expect(open == 8)
    }

    @Test("without keepConnected nothing reconnects in the background, and the timer never acts before demand")
    func noBackgroundReconnect() {
        var idle = machine()
        #expect(idle.reconnectTimerFired(now: .seconds(10)) == .none)
        var m = machine(keepConnected: false)
        let generation = connect(&m, handle: 1, now: .zero)
        #expect(m.connectionClosed(generation: generation, now: .seconds(5)) == .lost(reconnectAt: nil))
        #expect(m.reconnectTimerFired(now: .seconds(100)) == .none)
        guard case .startConnect = m.connectionWanted(now: .seconds(100)) else {
            Issue.record("demand still reconnects")
            return
        }
    }
}
