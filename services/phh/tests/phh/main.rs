//! Integration tests of chipledger-phh: parsing, ranking, and replay of real hands.

mod data;
mod parse;
mod rank;
mod replay;
mod room;
