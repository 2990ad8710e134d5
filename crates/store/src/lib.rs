//! A fleet's profiles in Parquet: the layout docs/store.md states, a
//! writer that turns pprof profiles into its rows, and selections read back
//! as one merged pprof profile, filtered, grouped and summed by Apache
//! DataFusion, so that every pprof report runs over them.
//!
//! ```no_run
//! use protoprof_store::{ProfileContext, Query, Store, StoreWriter};
//! # fn main() -> Result<(), protoprof_store::StoreError> {
//! # let profile = protoprof_model_pprof::perftools::profiles::Profile::new();
//! let dir = std::path::Path::new("store");
//! let mut writer = StoreWriter::new(dir);
//! let context = ProfileContext { service_name: "checkout".into(), ..Default::default() };
//! writer.add(&profile, &context)?;
//! writer.flush()?;
//! let store = Store::open(dir)?;
//! let query = Query {
//!     matchers: protoprof_store::parse_selector(r#"service.name="checkout""#)?,
//!     ..Default::default()
//! };
//! let merged = store.select(&query)?;
//! println!("{} samples", merged.profile.sample.len());
//! # Ok(()) }
//! ```

#![deny(missing_docs)]

mod arrays;
mod assemble;
mod blocks;
mod bounds;
mod check;
mod compact;
mod compact_object;
mod diagnose;
mod engine;
mod error;
mod explain;
mod files;
mod group;
mod held;
mod holdings;
mod ids;
#[cfg(test)]
mod interleavings;
mod labels;
mod late;
mod layout;
mod legacy_text;
mod location;
mod lock;
mod merge;
mod pause;
mod query;
mod read;
mod resource;
mod rollup_build;
mod rollup_headers;
mod rollup_read;
mod rollup_sql;
mod rollups;
mod rows;
mod schema;
mod select;
mod selector;
mod series;
mod shared_rows;
mod skipping;
mod span_build;
mod spans;
mod sql;
mod sums;
mod swaps;
#[cfg(test)]
mod test_profiles;
mod time;
mod write;

pub use assemble::Selection;
pub use check::{check, BadFile, Checked};
/// The engine's answers (Arrow record batches), as `sql` and `series` give them.
pub use datafusion::arrow::array::RecordBatch;
pub use engine::Engine;
pub use error::StoreError;
pub use explain::TableRead;
pub use group::{GroupWriter, PendingRows};
pub use held::stored_ids;
pub use ids::{hex, parse_hex, Id};
pub use layout::Partition;
pub use merge::Compacted;
pub use query::Query;
pub use rows::{ProfileContext, SampleEvents};
pub use schema::{schema_of, RESOURCE_COLUMNS, TABLES};
pub use select::Store;
pub use selector::{parse_selector, MatchOp, Matcher};
pub use series::{parse_step, SeriesPoint, SeriesQuery};
pub use sql::{write_answer, SqlOutput};
pub use time::parse_time;
pub use write::{Flushed, StoreWriter};

/// Merges the files of every partition of every table of the store at
/// `root` (a directory or an `s3://` prefix) that has more than one, rows
/// taken once each (docs/store.md says how each kind of store swaps them).
pub fn compact(root: &std::path::Path) -> Result<Compacted, StoreError> {
    let mut done = match location::Location::of(root)? {
        object @ location::Location::Object { .. } => compact_object::compact_objects(&object)?,
        location::Location::Local(_) => compact::compact_directory(root)?,
    };
    done.start_bounds_reads = bounds::mark_if_within(root)?;
    Ok(done)
}

impl Store {
    /// The profile `query` selects: its samples merged as pprof merges
    /// profiles.
    pub fn select(&self, query: &Query) -> Result<Selection, StoreError> {
        let selected = self.read(query)?;
        if selected.profiles.iter().all(|b| b.num_rows() == 0) && query.profile_id.is_none() {
            return Err(StoreError::Query(format!(
                "the selection matches no profile; {}",
                self.holdings()?
            )));
        }
        assemble::assemble(&selected, query)
    }

    /// The stored profile `id`, as it went in (equal in reports).
    pub fn get(&self, id: Id) -> Result<Selection, StoreError> {
        let query = Query {
            profile_id: Some(id),
            each_sample: true,
            ..Default::default()
        };
        self.select(&query).map_err(|e| match e {
            StoreError::Query(_) => {
                StoreError::Query(format!("no profile {} in the store", hex(&id)))
            }
            other => other,
        })
    }
}
