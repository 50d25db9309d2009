import ServiceLifecycle

extension JobWakeup {
    /// Runs a service's loop with a stop that a graceful shutdown or a cancellation raises, and
    /// wakes the loop's wait on this wakeup so that it sees the stop at once. The job worker's and
    /// the late-join pump's.
    func runUntilStopped(_ body: (RunStop) async -> Void) async {
        let stop = RunStop()
        await withGracefulShutdownHandler {
            await withTaskCancellationHandler {
                await body(stop)
            } onCancel: {
                stop.raise()
                self.signal()
            }
        } onGracefulShutdown: {
            stop.raise()
            self.signal()
        }
    }
}
