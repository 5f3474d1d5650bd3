//! chipledger-server (work in progress).
