//! chipledger-phh (work in progress).
