//! chipledger-store (work in progress).
