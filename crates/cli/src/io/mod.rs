//! Reading inputs, writing outputs atomically, the OTLP→pprof adapters the
//! commands share, symbolization for reports, warnings, colour and the
//! pager: each concern a file of its own, its public items re-exported
//! here.

mod attributes;
mod decoding;
mod input;
mod otlp_pprof;
mod output;
mod overwrite;
mod symbolization;
mod warnings;

pub use attributes::{resource_attributes, string_attribute};
pub(crate) use decoding::encode_as;
pub use decoding::{
    decode_options, encode, limits, load_user_schemas, message_descriptor, note_ranking,
    set_limits, set_otlp_revision, user_schemas,
};
pub use input::{
    decode_bytes, decode_view, decode_view_with, drop_unless_last, dropped_input, exporter_stream,
    load, load_pprof, load_pprof_view, messages_of, read_input,
};
pub use otlp_pprof::{
    development_as_pprof, development_as_pprof_view, development_data, development_each,
    experimental_as_pprof, experimental_as_pprof_view, experimental_each,
    experimental_whole_as_pprof, otlp_as_pprof, otlp_data, otlp_message_as_pprof,
    print_bridge_warnings,
};
pub use output::{
    cut_long_lines, page_with, print, write_cut_line, write_output, write_output_gzip,
    write_stdout, Style,
};
pub use overwrite::{allow_overwriting_inputs, check_not_input};
pub use symbolization::{names_as_given, set_symbolization, symbolize_for_report};
pub use warnings::{print_warnings, set_converting, set_quiet, shown, warn};
