//! chipledger-tests: shared fixtures (work in progress).
