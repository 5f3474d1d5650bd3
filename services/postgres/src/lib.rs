//! chipledger-postgres (work in progress).
