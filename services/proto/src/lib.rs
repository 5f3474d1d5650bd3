//! chipledger-proto (work in progress).
