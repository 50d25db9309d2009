import HTTPTypes

extension ChannelReadAnswerHandler {
    /// Which requests of one HTTP/1 connection the handler answers itself and which it passes on to
    /// Hummingbird, so that answers leave in the order their requests came: a request is answered
    /// here only when every request passed on before it has been answered whole. No I/O.
    struct StateMachine {
        private enum Inbound {
            /// Between requests.
            case idle
            /// A head that may be answered here, waiting for its end.
            case holding(HTTPRequest)
            /// The current request's parts go on to Hummingbird.
            case passing
        }

        private var inbound = Inbound.idle
        /// Requests passed on whose answers have not yet been written to their end.
        private(set) var answersOwed = 0
        /// The server is shutting down: Hummingbird closes each connection after its answer, and
        /// only it knows when; so everything goes to it.
        private var quiescing = false

        enum HeadAction: Equatable {
            /// Keep the head until the request's end.
            case hold
            /// Pass the head on.
            case pass
        }

        /// A request's head arrived; `mayAnswer`: whether its head alone allows an answer here.
        mutating func head(_ request: HTTPRequest, mayAnswer: Bool) -> HeadAction {
            guard mayAnswer, answersOwed == 0, !quiescing, case .idle = inbound else {
                passOn()
                return .pass
            }
            inbound = .holding(request)
            return .hold
        }

        enum PartAction: Equatable {
            /// Pass the part on.
            case pass
            /// Pass the held head on, then the part.
            case passHeldHead(HTTPRequest)
        }

        /// A part of the request's body arrived: a held request goes on after all.
        mutating func body() -> PartAction {
            guard case .holding(let head) = inbound else { return .pass }
            passOn()
            return .passHeldHead(head)
        }

        enum EndAction: Equatable {
            /// Pass the end on.
            case pass
            /// Answer the held request here if its answer is in memory (`answered()`), or pass
            /// it on whole (`passedOn()`).
            case answer(HTTPRequest)
        }

        /// The request's end arrived.
        mutating func end() -> EndAction {
            switch inbound {
            case .holding(let head):
                return .answer(head)
            case .idle, .passing:
                inbound = .idle
                return .pass
            }
        }

        /// The held request was answered here.
        mutating func answered() {
            inbound = .idle
        }

        /// The held request was passed on whole, head and end.
        mutating func passedOn() {
            inbound = .idle
            answersOwed += 1
        }

        /// Hummingbird wrote an answer's end.
        mutating func answerWritten() {
            answersOwed = max(0, answersOwed - 1)
        }

        /// The server asks connections to close once idle: a held request goes on to Hummingbird,
        /// which answers it and closes.
        mutating func quiesce() -> HTTPRequest? {
            quiescing = true
            guard case .holding(let head) = inbound else { return nil }
            passOn()
            return head
        }

        private mutating func passOn() {
            if case .passing = inbound { return }
            inbound = .passing
            answersOwed += 1
        }
    }
}
