//! chipledger-rules: the pure rules core (work in progress).
