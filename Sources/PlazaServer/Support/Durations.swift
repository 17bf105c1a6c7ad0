extension Duration {
    /// The whole milliseconds of this duration (as `Timestamp`s count time).
    var milliseconds: Int64 { components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000 }
}
