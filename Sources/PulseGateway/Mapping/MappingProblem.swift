/// Why the mapping walk stopped: a member of the wrong JSON type (``OTLPValidator``'s rules), or a
/// request the mapping rules reject (a resource without a required identity value, an unknown
/// `apsio.event.kind`). ``OTLPMapper`` turns either into the ``IntakeRejection`` the request gets.
enum MappingProblem: Error {
    case invalid(OTLPValidator.Failure)
    case rejected(IntakeRejection)
}
