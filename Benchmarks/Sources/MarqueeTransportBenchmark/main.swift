// Sends N Live Activity start pushes through MarqueeAPNS to an APNs-shaped sink and prints the rate.
// The request shape matches /work/shared/bench/h2load-ceiling.sh: POST /3/device/<64-hex> over 1000
// rotating tokens, liveactivity headers, a bearer JWT, the ~600-byte start-body.json.
//
//   MarqueeTransportBenchmark --body start-body.json [--count 200000] [--warmup 20000] [--host 127.0.0.1]
//       [--port 8443] [--ca cert.pem | --cleartext] [--connections 1] [--streams 100] [--window 4000]
//       [--source sequence|pages] [--page-size 1000]
//
// `--source pages` feeds the same pushes through `send(pages:window:)` from an `AsyncSequence` of
// freshly built pages, as the fan-out engine reads an audience from PostgreSQL.
import Crypto
import Foundation
import MarqueeAPNS
import MarqueeCore
import NIOCore
import NIOPosix

struct Options {
    var count = 200_000
    var warmup = 20_000
    var host = "127.0.0.1"
    var port = 8443
    var caFile: String? = "/tmp/apns-sink/cert.pem"
    var cleartext = false
    var connections = 1
    var streams = 100
    var window = 4_000
    var bodyFile = "/work/shared/bench/start-body.json"
    var pagedSource = false
    var pageSize = 1_000

    init(arguments: [String]) {
        var iterator = arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            let value = iterator.next() ?? ""
            switch flag {
            case "--count": count = Int(value) ?? count
            case "--warmup": warmup = Int(value) ?? warmup
            case "--host": host = value
            case "--port": port = Int(value) ?? port
            case "--ca": caFile = value
            case "--cleartext": cleartext = value == "1" || value == "true"
            case "--connections": connections = Int(value) ?? connections
            case "--streams": streams = Int(value) ?? streams
            case "--window": window = Int(value) ?? window
            case "--body": bodyFile = value
            case "--source":
                guard value == "sequence" || value == "pages" else {
                    FileHandle.standardError.write(Data("--source is sequence or pages\n".utf8))
                    exit(2)
                }
                pagedSource = value == "pages"
            case "--page-size": pageSize = max(1, Int(value) ?? pageSize)
            default:
                FileHandle.standardError.write(Data("unknown option \(flag)\n".utf8))
                exit(2)
            }
        }
    }
}

/// `count` pushes cycling over prepared pushes: the sequence itself allocates nothing per push.
struct CyclingPushes: Sequence, Sendable {
    let prepared: [APNSDevicePush]
    let count: Int

    struct Iterator: IteratorProtocol {
        let prepared: [APNSDevicePush]
        let count: Int
        var position = 0

        mutating func next() -> APNSDevicePush? {
            guard position < count else { return nil }
            defer { position += 1 }
            return prepared[position % prepared.count]
        }
    }

    func makeIterator() -> Iterator { Iterator(prepared: prepared, count: count) }
}

/// The same pushes in pages, each page a new array as a store's page of rows would be.
struct CyclingPages: AsyncSequence, Sendable {
    typealias Element = [APNSDevicePush]
    typealias Failure = Never

    let pushes: CyclingPushes
    let pageSize: Int

    struct AsyncIterator: AsyncIteratorProtocol {
        var base: CyclingPushes.Iterator
        let pageSize: Int

        mutating func next() async -> [APNSDevicePush]? {
            var page: [APNSDevicePush] = []
            page.reserveCapacity(pageSize)
            while page.count < pageSize, let push = base.next() { page.append(push) }
            return page.isEmpty ? nil : page
        }

        mutating func next(isolation actor: isolated (any Actor)?) async -> [APNSDevicePush]? {
            await next()
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: pushes.makeIterator(), pageSize: pageSize) }
}

struct Tally {
    var succeeded = 0
    var failed = 0
    var firstError: APNSError?

    mutating func count(_ chunk: [APNSPushOutcome]) {
        for outcome in chunk {
            switch outcome.result {
            case .success: succeeded += 1
            case .failure(let error):
                failed += 1
                if firstError == nil { firstError = error }
            }
        }
    }
}

func run(_ client: APNSClient, pushes: CyclingPushes, options: Options) async -> Tally {
    var tally = Tally()
    if options.pagedSource {
        do {
            for try await chunk in client.send(
                pages: CyclingPages(pushes: pushes, pageSize: options.pageSize),
                window: options.window
            ) {
                tally.count(chunk)
            }
        } catch {
            // A source of type Never cannot fail.
        }
    } else {
        for await chunk in client.send(pushes, window: options.window) { tally.count(chunk) }
    }
    return tally
}

let options = Options(arguments: CommandLine.arguments)
guard let bodyData = FileManager.default.contents(atPath: options.bodyFile) else {
    FileHandle.standardError.write(Data("cannot read \(options.bodyFile)\n".utf8))
    exit(2)
}
var body = bodyData
while let last = body.last, last == 0x0A || last == 0x0D { body.removeLast() }

let key = APNSSigningKey(privateKey: P256.Signing.PrivateKey(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
let security: APNSEndpoint.Security =
    options.cleartext ? .cleartext : .tls(trustRoots: options.caFile.map { .pemFile($0) } ?? .system)
let endpoint = APNSEndpoint(host: options.host, port: options.port, security: security)
let configuration = APNSClientConfiguration(
    environment: .sandbox,
    signingKey: key,
    pushEndpoint: endpoint,
    channelManagementEndpoint: endpoint,
    transport: .init(
        connectionsPerEndpoint: options.connections,
        maximumStreamsPerConnection: options.streams,
        maximumOutstandingRequests: max(options.window, 1),
        batchWindow: options.window
    )
)
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let client = try APNSClient(configuration: configuration, eventLoopGroup: group)

let template = try APNSDevicePush(
    deviceToken: "00",
    bundleID: "com.example.app",
    payload: ByteBuffer(bytes: body),
    priority: .immediate,
    expiration: .immediately
)
var prepared: [APNSDevicePush] = []
for _ in 0..<1000 {
    let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    prepared.append(try template.sending(to: token))
}

if options.warmup > 0 {
    let warm = await run(client, pushes: CyclingPushes(prepared: prepared, count: options.warmup), options: options)
    if warm.failed > 0 {
        print("warm-up failures: \(warm.failed), first: \(warm.firstError.map { "\($0)" } ?? "-")")
    }
}
let clock = ContinuousClock()
let start = clock.now
let result = await run(client, pushes: CyclingPushes(prepared: prepared, count: options.count), options: options)
let elapsed = clock.now - start
let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
print(
    """
    pushes \(options.count) succeeded \(result.succeeded) failed \(result.failed) in \
    \(String(format: "%.3f", seconds)) s
    """
)
if let error = result.firstError { print("first failure: \(error)") }
print("marquee_req_per_s \(String(format: "%.1f", Double(result.succeeded) / seconds))")
await client.shutdown()
try await group.shutdownGracefully()
