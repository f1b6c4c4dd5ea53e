/// Why a batch was sealed.
public enum SealTrigger: String, Sendable, CaseIterable {
    /// Enough records or bytes were waiting to fill a batch.
    case size
    /// The foreground interval elapsed since the oldest waiting record.
    case interval
    /// The app moved to the background.
    case background
    /// An explicit flush.
    case flush
    /// A crash report or an attachment, which are sealed as soon as they are recorded.
    case immediate
}
