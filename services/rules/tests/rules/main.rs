//! Integration tests of the rules core: one test per worked example of RULES.md, one per
//! rejection reason, and property tests over random play.

mod allocations;
mod betting;
mod blinds;
mod chips;
mod door_props;
mod doors;
mod games;
mod legal;
mod pots;
mod props;
mod reasons;
mod seeds;
mod sessions;
mod support;
mod treasury;
mod voids;
