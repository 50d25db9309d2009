import HTTPTypes
import NIOCore
import NIOHTTPTypes

extension EventLoopAnswerHandler {
    /// Which requests of one HTTP/1 connection the handler answers itself and which it passes on to
    /// Hummingbird, so that answers leave in the order their requests came: a request is answered
    /// here only when every request before it has been answered whole, and while an answer made
    /// here is on its way (a registration waiting for the store) what arrives after it waits. No I/O.
    struct StateMachine {
        /// What the handler may answer, as a request's head shows it.
        enum Kind: Equatable {
            /// From memory, at the request's end: a request with a body goes on.
            case withoutBody
            /// From the request's body, at its end, after the store: a body of up to `bodyLimit`
            /// bytes is kept; a longer one goes on.
            case withBody(bodyLimit: Int)
        }

        private enum Inbound {
            /// Between requests.
            case idle
            /// A head that may be answered here, waiting for its end; the body bytes kept so far.
            case holding(HTTPRequest, Kind, bodyBytes: Int)
            /// The current request's parts go on to Hummingbird.
            case passing
            /// An answer made here is on its way; the parts that arrived since wait in order.
            case answering(waiting: [HTTPRequestPart])
        }

        private var inbound = Inbound.idle
        /// Requests passed on whose answers have not yet been written to their end.
        private(set) var answersOwed = 0
        /// The server is shutting down: Hummingbird closes each connection after its answer, and
        /// only it knows when; so everything goes to it.
        private var quiescing = false
        /// A quiesce that arrived while an answer was on its way, passed on once it is written.
        private var quiesceHeld = false
        /// A read asked for while parts waited for an answer on its way: no more bytes are read until
        /// it is written.
        private var readHeld = false

        enum HeadAction: Equatable {
            /// Keep the head until the request's end.
            case hold
            /// Pass the head on.
            case pass
            /// Keep the part until the answer on its way is written.
            case wait
        }

        /// A request's head arrived; `kind`: what its head alone allows answering here, if anything.
        mutating func head(_ request: HTTPRequest, kind: Kind?) -> HeadAction {
            if case .answering(var waiting) = inbound {
                waiting.append(.head(request))
                inbound = .answering(waiting: waiting)
                return .wait
            }
            guard let kind, answersOwed == 0, !quiescing, case .idle = inbound else {
                passOn()
                return .pass
            }
            inbound = .holding(request, kind, bodyBytes: 0)
            return .hold
        }

        enum BodyAction: Equatable {
            /// Pass the part on.
            case pass
            /// Keep the part with the held head.
            case keep
            /// Pass the held head on, then the body kept so far, then the part.
            case passHeld(HTTPRequest)
            /// Keep the part until the answer on its way is written.
            case wait
        }

        /// A part of the request's body arrived, of `bytes` bytes.
        mutating func body(_ part: ByteBuffer) -> BodyAction {
            switch inbound {
            case .holding(let head, .withBody(let limit), let kept) where kept + part.readableBytes <= limit:
                inbound = .holding(head, .withBody(bodyLimit: limit), bodyBytes: kept + part.readableBytes)
                return .keep
            case .holding(let head, _, _):
                passOn()
                return .passHeld(head)
            case .answering(var waiting):
                waiting.append(.body(part))
                inbound = .answering(waiting: waiting)
                return .wait
            case .idle, .passing:
                return .pass
            }
        }

        enum EndAction: Equatable {
            /// Pass the end on.
            case pass
            /// Answer the held request here if its answer can be made (`answered()`, or
            /// `answering()` while it is on its way), or pass it on whole (`passedOn()`).
            case answer(HTTPRequest, Kind)
            /// Keep the part until the answer on its way is written.
            case wait
        }

        /// The request's end arrived.
        mutating func end(_ trailers: HTTPFields?) -> EndAction {
            switch inbound {
            case .holding(let head, let kind, _):
                return .answer(head, kind)
            case .answering(var waiting):
                waiting.append(.end(trailers))
                inbound = .answering(waiting: waiting)
                return .wait
            case .idle, .passing:
                inbound = .idle
                return .pass
            }
        }

        /// The held request was answered here, at once.
        mutating func answered() {
            inbound = .idle
        }

        /// The held request's answer is being made here; it is written later (`answerWritten()`).
        mutating func answering() {
            inbound = .answering(waiting: [])
        }

        /// The held request was passed on whole, head, body and end.
        mutating func passedOn() {
            inbound = .idle
            answersOwed += 1
        }

        /// What to do once the answer made here is written: the parts that waited, to be handled
        /// again in order, and whether to pass on a quiesce and to read.
        struct Resumption: Equatable {
            var waiting: [HTTPRequestPart]
            var passQuiesce: Bool
            var read: Bool
        }

        /// The answer made here was written.
        mutating func answerWritten() -> Resumption {
            guard case .answering(let waiting) = inbound else {
                return Resumption(waiting: [], passQuiesce: false, read: false)
            }
            inbound = .idle
            defer { (quiesceHeld, readHeld) = (false, false) }
            return Resumption(waiting: waiting, passQuiesce: quiesceHeld, read: readHeld)
        }

        /// Hummingbird wrote an answer's end.
        mutating func passedOnAnswerWritten() {
            answersOwed = max(0, answersOwed - 1)
        }

        /// Whether a read asked for now goes ahead, or waits for the answer on its way: only once
        /// parts are already waiting (the client sends requests before their answers), so that
        /// what waits is at most one read's worth; a client that waits for its answer costs no
        /// change of the socket's interest.
        mutating func read() -> Bool {
            guard case .answering(let waiting) = inbound, !waiting.isEmpty else { return true }
            readHeld = true
            return false
        }

        enum QuiesceAction: Equatable {
            /// Pass the quiesce on, after passing on the held head if there is one.
            case pass(heldHead: HTTPRequest?)
            /// Pass it on once the answer on its way is written.
            case hold
        }

        /// The server asks connections to close once idle: a held request goes on to Hummingbird,
        /// which answers it and closes; an answer on its way is written first.
        mutating func quiesce() -> QuiesceAction {
            quiescing = true
            switch inbound {
            case .holding(let head, _, _):
                passOn()
                return .pass(heldHead: head)
            case .answering:
                quiesceHeld = true
                return .hold
            case .idle, .passing:
                return .pass(heldHead: nil)
            }
        }

        private mutating func passOn() {
            if case .passing = inbound { return }
            inbound = .passing
            answersOwed += 1
        }
    }
}
