package import PulseJSON

/// Settings that list every problem of their values with the config key it concerns, so
/// `pulsegate validate` can report them all and ``validate()`` can refuse them all at once.
package protocol CheckedSettings {
    /// Every problem of these settings, with the config key it concerns; empty when they are valid.
    func problems() -> [ConfigurationProblem]
}

extension CheckedSettings {
    /// Checks the values, throwing ``GatewayError/Code/invalidConfiguration`` listing every problem
    /// (``problems()``).
    package func validate() throws(GatewayError) {
        let problems = problems()
        guard problems.isEmpty else { throw GatewayError.invalidConfiguration(problems) }
    }
}
