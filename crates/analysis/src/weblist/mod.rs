//! `-weblist` as upstream pprof builds it (its `report/source.go`
//! `sourcePrinter`): the source of each function a regular expression
//! matches, every line with its values and, beneath it, the instructions
//! compiled from it, each with its own values and the inlined calls that
//! lead to it.
//!
//! The samples are counted per address. Around the addresses of the
//! matching functions, ranges of the binary are disassembled; each
//! instruction's inline chain (from the binary's line tables) says which
//! source lines of which functions it belongs to. Lines are then grouped
//! into per-function ranges, as pprof groups them. [`page::web_list_page`]
//! writes the result as pprof's HTML page.

mod generate;
mod listing;
pub mod page;
mod ranges;

pub use listing::{
    web_listing, WebList, WebListCall, WebListFunction, WebListInstruction, WebListLine,
};
