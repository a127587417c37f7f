"""The self-test's broken backends: mutants of the reference, faulty fakes, and how the judge runs them."""
