import CLinuxEvents
import MsgTrans
import PulseKit

#if canImport(Glibc)
    import Glibc
#endif

// The loop-thread half of MsgTransConnection: socket I/O, the in-flight registry and inbound
// dispatch. Everything in this file runs on the connection's event loop thread.

extension MsgTransConnection: EventLoopSource {
    /// Registers a freshly connected or accepted socket with the loop.
    func activate() throws(MsgTransRuntimeError) {
        interest = EPOLLIN.rawValue
        registration = try eventLoop.register(fd: fd, events: interest, source: self)
        statistics.add(.openConnections)
        statistics.add(.acceptedConnections)
    }

    var pendingOutputBytes: Int { output.count - outputOffset }
    private var outputFull: Bool { pendingOutputBytes >= configuration.maxOutboundBufferBytes }

    // MARK: - Events

    func handleEvents(_ events: UInt32) {
        let readable = EPOLLIN.rawValue | EPOLLHUP.rawValue | EPOLLERR.rawValue
        if events & readable != 0 && !inputEnded && phase != .closed {
            readAvailable()
        }
        guard phase != .closed else { return }
        if events & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0 {
            let number = Socket.pendingError(fd)
            let detail = number == 0 ? "hang-up" : SystemErrorName.describe(number)
            teardown(MsgTransRuntimeError(.connectionClosed, "socket failed: \(detail)"), flush: false)
            return
        }
        if events & EPOLLOUT.rawValue != 0 {
            writeOutput()
        }
    }

    func flushQueuedOutput() {
        flushScheduled = false
        guard phase != .closed else { return }
        writeOutput()
    }

    func loopWillStop() {
        teardown(MsgTransRuntimeError(.connectionClosed, "the event loop stopped"), flush: true)
    }

    // MARK: - Reading

    private func readAvailable() {
        let buffer = eventLoop.readBuffer
        var reads = 0
        while phase != .closed && !inputEnded && !outputFull && reads < 16 {
            let count = read(fd, buffer.baseAddress, buffer.count)
            if count > 0 {
                reads += 1
                statistics.add(.bytesIn, count)
                decoder.append(UnsafeRawBufferPointer(rebasing: buffer[0..<count]))
                processFrames()
                guard accountPartialFrameBytes() else { return }
                if count < buffer.count { break }
            } else if count == 0 {
                endOfInput()
                return
            } else if errno == EINTR {
                continue
            } else if errno == EAGAIN || errno == EWOULDBLOCK {
                break
            } else {
                let reason = MsgTransRuntimeError.system("read", errno: errno, code: .connectionClosed)
                teardown(reason, flush: false)
                return
            }
        }
        updateInterest()
    }

    private func processFrames() {
        while phase != .closed {
            let frame: Frame?
            do {
                frame = try decoder.next()
            } catch {
                statistics.add(.protocolFaults)
                teardown(
                    MsgTransRuntimeError(.protocolViolation, "peer broke the framing rules", underlying: error),
                    flush: false)
                return
            }
            guard let frame else { break }
            statistics.add(.framesIn)
            switch frame.packetType {
            case .response:
                completeRequest(with: frame)
            case .request, .oneWay:
                receive(frame)
            }
        }
        if decoder.bufferedByteCount == 0 {
            // Release whatever capacity the last burst left behind: idle connections hold no buffer.
            decoder = FrameDecoder(limits: configuration.frameLimits)
        }
    }

    /// Updates this connection's share of the server's buffered partial-frame bytes; closes the
    /// connection and returns `false` when the total would exceed the server's cap.
    private func accountPartialFrameBytes() -> Bool {
        guard let cap = partialFrameCap, phase != .closed else { return true }
        let held = decoder.bufferedByteCount
        guard held != accountedPartialBytes else { return true }
        let total = statistics.addPartialFrameBytes(held - accountedPartialBytes)
        accountedPartialBytes = held
        guard total > cap, held > 0 else { return true }
        statistics.add(.partialFrameCapCloses)
        teardown(
            MsgTransRuntimeError(
                .overloaded, "incomplete frames buffered across connections reached the cap of \(cap) bytes"),
            flush: false)
        return false
    }

    /// The peer closed its sending side: answer what was received, then close.
    private func endOfInput() {
        inputEnded = true
        var reason = MsgTransRuntimeError(.connectionClosed, "the peer closed the connection")
        do {
            try decoder.finish()
        } catch {
            statistics.add(.protocolFaults)
            reason = MsgTransRuntimeError(.protocolViolation, "the peer closed inside a frame", underlying: error)
            teardown(reason, flush: false)
            return
        }
        failOutboundRequests(reason)
        lingerTimer = eventLoop.scheduleTimer(
            at: eventLoop.deadline(after: configuration.halfCloseGracePeriod)
        ) { [self] in
            lingerTimer = nil
            teardown(
                MsgTransRuntimeError(.connectionClosed, "the peer closed the connection; handlers did not finish"),
                flush: false)
        }
        updateInterest()
        finishIfIdle()
    }

    // MARK: - Writing

    /// Appends a frame to the outbound buffer; the loop writes it at the end of this iteration.
    func enqueue(_ frame: Frame) {
        frame.encode(into: &output)
        statistics.add(.framesOut)
        if !flushScheduled {
            flushScheduled = true
            eventLoop.scheduleFlush(self)
        }
    }

    private func writeOutput() {
        writeBlocked = false
        while outputOffset < output.count {
            let written = output.withUnsafeBytes { bytes in
                Glibc.send(fd, bytes.baseAddress! + outputOffset, bytes.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
            if written > 0 {
                outputOffset += written
                statistics.add(.bytesOut, written)
            } else if written < 0 && errno == EINTR {
                continue
            } else if written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) {
                writeBlocked = true
                break
            } else {
                let reason = MsgTransRuntimeError.system("send", errno: errno, code: .connectionClosed)
                teardown(reason, flush: false)
                return
            }
        }
        if outputOffset == output.count {
            output = []
            outputOffset = 0
        } else if outputOffset >= 64 << 10 && outputOffset * 2 >= output.count {
            output.removeSubrange(0..<outputOffset)
            outputOffset = 0
        }
        updateInterest()
        startWaitingRequests()
        finishIfIdle()
    }

    /// Reads while the outbound buffer has room and input has not ended; writes while output is queued.
    private func updateInterest() {
        guard phase != .closed else { return }
        var wanted: UInt32 = 0
        if !inputEnded && !outputFull {
            wanted |= EPOLLIN.rawValue
        }
        if pendingOutputBytes > 0 {
            wanted |= EPOLLOUT.rawValue
        }
        if wanted != interest {
            interest = wanted
            eventLoop.modify(fd: fd, registration: registration, events: wanted)
        }
        setBackPressured(!inputEnded && outputFull && writeBlocked)
    }

    /// Counts this connection in ``MsgTransStatistics/Snapshot/backPressuredConnections`` or not.
    private func setBackPressured(_ pressured: Bool) {
        guard pressured != backPressured else { return }
        backPressured = pressured
        statistics.add(.backPressuredConnections, pressured ? 1 : -1)
    }

    // MARK: - Outbound requests

    func submit(_ request: OutboundRequest) {
        guard case .new = request.state else { return }
        if let reason = refusalReason() {
            request.state = .finished
            request.promise.complete(.failure(reason))
            return
        }
        guard !request.promise.isCompleted else {
            request.state = .finished
            return
        }
        request.timer = eventLoop.scheduleTimer(at: request.deadline) { [self] in
            request.timer = nil
            expire(request)
        }
        if waitingRequests.isEmpty && canStartRequest {
            start(request)
        } else {
            request.state = .waiting
            waitingRequests.append(request)
        }
    }

    func submitOneWay(_ frame: Frame, promise: OneShot<Result<Void, MsgTransRuntimeError>>) {
        if let reason = refusalReason() {
            promise.complete(.failure(reason))
            return
        }
        guard !outputFull else {
            promise.complete(
                .failure(MsgTransRuntimeError(.overloaded, "outbound buffer is full; one-way message not sent")))
            return
        }
        var frame = frame
        frame.messageID = oneWayIDs.next()
        enqueue(frame)
        promise.complete(.success(()))
    }

    /// Why new outbound messages cannot be sent, or `nil` if they can.
    private func refusalReason() -> MsgTransRuntimeError? {
        if phase == .closed {
            return closeReason ?? MsgTransRuntimeError(.connectionClosed, "connection closed")
        }
        if inputEnded {
            return MsgTransRuntimeError(.connectionClosed, "the peer closed the connection")
        }
        return nil
    }

    private var canStartRequest: Bool {
        inFlight.count < max(1, configuration.maxOutstandingRequests) && !outputFull
    }

    private func start(_ request: OutboundRequest) {
        var id = requestIDs.next()
        while inFlight[id] != nil {
            id = requestIDs.next()
        }
        request.state = .inFlight(id)
        inFlight[id] = request
        guard var frame = request.frame else { return }
        request.frame = nil
        frame.messageID = id
        enqueue(frame)
    }

    /// Starts waiting requests while slots and output space are available.
    private func startWaitingRequests() {
        while phase != .closed && canStartRequest, let request = waitingRequests.popFirst() {
            if request.promise.isCompleted {
                finish(request)
            } else {
                start(request)
            }
        }
    }

    private func completeRequest(with response: Frame) {
        guard let request = inFlight.removeValue(forKey: response.messageID) else {
            statistics.add(.unmatchedResponses)
            if delegate?.closesOnUnmatchedResponse(response.header, on: self) == true {
                statistics.add(.admissionCloses)
                teardown(
                    MsgTransRuntimeError(
                        .connectionClosed, "closed by the delegate at an unmatched response id \(response.messageID)"),
                    flush: false)
            }
            return
        }
        if response.bizType != request.bizType {
            statistics.add(.bizTypeMismatches)
        }
        finish(request)
        if !request.promise.complete(.success(response)) {
            // The caller was cancelled a moment ago; nobody receives this response.
            statistics.add(.unmatchedResponses)
        }
        startWaitingRequests()
    }

    private func expire(_ request: OutboundRequest) {
        guard remove(request) else { return }
        request.promise.complete(.failure(MsgTransRuntimeError(.timeout, "no response before the deadline"))) {
            statistics.add(.requestTimeouts)
        }
        startWaitingRequests()
    }

    /// Forgets a request whose caller was cancelled.
    func abandon(_ request: OutboundRequest) {
        guard remove(request) else { return }
        startWaitingRequests()
    }

    /// Removes a request from the registry or the waiting queue; `false` if already removed.
    private func remove(_ request: OutboundRequest) -> Bool {
        switch request.state {
        case .new, .finished:
            return false
        case .waiting:
            waitingRequests.removeAll { $0 === request }
        case .inFlight(let id):
            if inFlight[id] === request {
                inFlight.removeValue(forKey: id)
            }
        }
        finish(request)
        return true
    }

    private func finish(_ request: OutboundRequest) {
        if inFlight.isEmpty && inFlight.capacity > 0 {
            inFlight = [:]  // Release the table's storage between bursts.
        }
        request.state = .finished
        request.frame = nil
        if let timer = request.timer {
            eventLoop.cancelTimer(timer)
            request.timer = nil
        }
    }

    private func failOutboundRequests(_ reason: MsgTransRuntimeError) {
        let pending = Array(inFlight.values) + waitingRequests.drain()
        inFlight = [:]
        for request in pending {
            finish(request)
            request.promise.complete(.failure(reason))
        }
    }

    // MARK: - Inbound requests and one-way messages

    private func receive(_ frame: Frame) {
        if phase == .draining {
            refuse(frame)
        } else if admissionHeld {
            if heldFrames.count + activeInbound >= configuration.maxConcurrentInboundRequests {
                refuse(frame)
            } else {
                heldFrames.append(frame)
            }
        } else {
            admit(frame)
        }
    }

    private func admit(_ frame: Frame) {
        let header = frame.header
        let decision = delegate?.admit(header, on: self) ?? .dispatch
        switch decision {
        case .dispatch:
            dispatch(frame, exclusive: false)
        case .dispatchExclusively:
            dispatch(frame, exclusive: true)
        case .respond(let reply):
            statistics.add(.admissionReplies)
            enqueue(Self.responseFrame(for: header, reply: reply, policy: configuration.compressionPolicy))
        case .close:
            statistics.add(.admissionCloses)
            teardown(
                MsgTransRuntimeError(
                    .connectionClosed, "closed by the admission hook at \(header.packetType) biz_type \(header.bizType)"
                ),
                flush: false)
        case .ignore:
            statistics.add(.ignoredMessages)
        }
    }

    /// Answers a request with the overload reply, or drops a one-way message.
    private func refuse(_ frame: Frame) {
        let header = frame.header
        if header.packetType == .request {
            statistics.add(.overloadReplies)
            let reply = configuration.overloadResponder(header)
            enqueue(Self.responseFrame(for: header, reply: reply, policy: configuration.compressionPolicy))
        } else {
            statistics.add(.droppedOneWays)
        }
    }

    private func dispatch(_ frame: Frame, exclusive: Bool) {
        guard activeInbound < configuration.maxConcurrentInboundRequests else {
            refuse(frame)
            return
        }
        activeInbound += 1
        if exclusive {
            admissionHeld = true
        }
        let delegate = self.delegate
        Task {
            let response = await self.handle(frame, delegate: delegate)
            let delivered = self.eventLoop.execute {
                self.inboundFinished(response: response, exclusive: exclusive)
            }
            _ = delivered  // A stopped loop has closed the connection; the answer has nowhere to go.
        }
    }

    /// Runs the handler off the loop and builds the response frame (`nil` for one-way messages).
    private func handle(_ frame: Frame, delegate: (any MsgTransConnectionDelegate)?) async -> Frame? {
        let header = frame.header
        let limits = configuration.frameLimits
        if header.packetType == .oneWay {
            guard let plaintext = try? frame.plaintext(limits: limits) else {
                statistics.add(.droppedOneWays)
                return nil
            }
            await delegate?.handleOneWay(MsgTransMessage(header: header, payload: plaintext), on: self)
            return nil
        }
        let reply: MsgTransReply
        do {
            reply = try await answer(frame, header: header, delegate: delegate)
        } catch {
            statistics.add(.failureReplies)
            reply = configuration.failureResponder(header, error)
        }
        return Self.responseFrame(for: header, reply: reply, policy: configuration.compressionPolicy)
    }

    private func answer(_ frame: Frame, header: FrameHeader, delegate: (any MsgTransConnectionDelegate)?)
        async throws(MsgTransRuntimeError) -> MsgTransReply
    {
        let plaintext: [UInt8]
        do {
            plaintext = try frame.plaintext(limits: configuration.frameLimits)
        } catch {
            throw MsgTransRuntimeError(
                .malformedPayload, "request biz_type \(header.bizType) id \(header.messageID) cannot be decompressed",
                underlying: error)
        }
        guard let delegate else {
            throw MsgTransRuntimeError(.handlerFailed, "no request handler is installed")
        }
        do {
            return try await delegate.handleRequest(MsgTransMessage(header: header, payload: plaintext), on: self)
        } catch {
            throw MsgTransRuntimeError(
                .handlerFailed, "handler for biz_type \(header.bizType) id \(header.messageID) failed",
                underlying: error)
        }
    }

    private func inboundFinished(response: Frame?, exclusive: Bool) {
        activeInbound -= 1
        if let response, phase != .closed {
            enqueue(response)
        }
        if exclusive {
            admissionHeld = false
            while phase != .closed && !admissionHeld, let frame = heldFrames.popFirst() {
                if phase == .draining {
                    refuse(frame)
                } else {
                    admit(frame)
                }
            }
        }
        finishIfIdle()
    }

    /// The Response frame answering `header`, compressed as preferred when possible.
    static func responseFrame(for header: FrameHeader, reply: MsgTransReply, policy: CompressionPolicy) -> Frame {
        do {
            return try Frame.make(
                packetType: .response, bizType: header.bizType, messageID: header.messageID, plaintext: reply.payload,
                preferred: reply.compression, policy: policy)
        } catch {
            // The compressor failed: the same plaintext, uncompressed, is still a valid answer.
            return Frame(
                packetType: .response, bizType: header.bizType, messageID: header.messageID, payload: reply.payload)
        }
    }

    // MARK: - Closing

    /// Starts a graceful close: refuse new inbound messages, let handlers and this side's
    /// requests finish, flush, then close.
    func beginDrain() {
        guard phase == .open else { return }
        phase = .draining
        finishIfIdle()
    }

    /// Closes once a draining or half-closed connection has nothing left to do.
    private func finishIfIdle() {
        guard phase == .draining || (phase == .open && inputEnded) else { return }
        guard activeInbound == 0 && heldFrames.isEmpty && pendingOutputBytes == 0 else { return }
        guard inputEnded || (inFlight.isEmpty && waitingRequests.isEmpty) else { return }
        let reason =
            inputEnded
            ? MsgTransRuntimeError(.connectionClosed, "the peer closed the connection")
            : MsgTransRuntimeError(.connectionClosed, "the server shut down")
        teardown(reason, flush: false)
    }

    /// Closes the socket now and fails everything pending with `reason` (idempotent).
    func teardown(_ reason: MsgTransRuntimeError, flush: Bool) {
        guard phase != .closed else { return }
        if flush && pendingOutputBytes > 0 {
            output.withUnsafeBytes { bytes in
                _ = Glibc.send(fd, bytes.baseAddress! + outputOffset, bytes.count - outputOffset, Int32(MSG_NOSIGNAL))
            }
        }
        phase = .closed
        setBackPressured(false)
        if accountedPartialBytes != 0 {
            _ = statistics.addPartialFrameBytes(-accountedPartialBytes)
            accountedPartialBytes = 0
        }
        eventLoop.unregister(fd: fd, registration: registration)
        Glibc.close(fd)
        if let lingerTimer {
            eventLoop.cancelTimer(lingerTimer)
            self.lingerTimer = nil
        }
        if let establishTimer {
            eventLoop.cancelTimer(establishTimer)
            self.establishTimer = nil
        }
        output = []
        outputOffset = 0
        decoder = FrameDecoder(limits: configuration.frameLimits)
        heldFrames = FIFO()
        statistics.add(.openConnections, -1)
        publishClose(reason)
        failOutboundRequests(reason)
        let delegate = self.delegate
        self.delegate = nil
        delegate?.connectionDidClose(self, reason: reason)
        let onClose = self.onClose
        self.onClose = nil
        onClose?(self)
    }
}
