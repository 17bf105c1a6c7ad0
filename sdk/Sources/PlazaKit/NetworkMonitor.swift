#if canImport(Network)
    import Dispatch
    import Network
    import PlazaKitCore

    extension WriteQueue {
        /// Tells the queue whenever the device gets a usable network (`NWPathMonitor`), so that
        /// `run()` sends what is pending at once instead of at its next round. Keep the monitor
        /// while the app runs; `cancel()` it to stop. Apple platforms only; elsewhere, call
        /// `networkChanged()` yourself.
        public nonisolated func monitorNetwork() -> NWPathMonitor {
            let monitor = NWPathMonitor()
            monitor.pathUpdateHandler = { [self] path in
                guard path.status == .satisfied else { return }
                Task { await self.networkChanged() }
            }
            monitor.start(queue: DispatchQueue(label: "PlazaKit.WriteQueue.network"))
            return monitor
        }
    }
#endif
