//! Samples whose references resolve to nothing, left out of
//! v1experimental data so that the rest can be looked at, as
//! `development/invalid_samples.rs` does for v1development: a location
//! slice past `location_indices` (or the location table), a location
//! position past the table, an attribute or link index past its table.

use protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental as otlp;

use crate::error::{DroppedSamples, Dropping};

/// Removes every sample of `data` whose stack, attributes or link do not
/// resolve in its profile's tables; what was removed, or `None` when every
/// sample resolves (then `data` is unchanged).
pub fn drop_invalid_experimental_samples(data: &mut otlp::ProfilesData) -> Option<DroppedSamples> {
    let mut dropping = Dropping::default();
    for (r, resource) in data.resource_profiles.iter_mut().enumerate() {
        for (s, scope) in resource.scope_profiles.iter_mut().enumerate() {
            for (c, container) in scope.profiles.iter_mut().enumerate() {
                let Some(profile) = container.profile.as_mut() else {
                    continue;
                };
                let (samples, tables) = Tables::of(profile);
                let at = |n| {
                    format!(
                        "resource_profiles[{r}].scope_profiles[{s}].profiles[{c}].profile.\
                         sample[{n}]"
                    )
                };
                dropping.retain(samples, at, |sample| tables.broken_reference(sample));
            }
        }
    }
    dropping.finish()
}

/// What a sample's references are checked against.
struct Tables<'p> {
    location_indices: &'p [i64],
    locations: u64,
    attributes: u64,
    links: u64,
}

impl<'p> Tables<'p> {
    /// The samples of `p`, to be edited, and its tables, borrowed beside.
    fn of(p: &'p mut otlp::Profile) -> (&'p mut Vec<otlp::Sample>, Tables<'p>) {
        let tables = Tables {
            location_indices: &p.location_indices,
            locations: p.location.len() as u64,
            attributes: p.attribute_table.len() as u64,
            links: p.link_table.len() as u64,
        };
        (&mut p.sample, tables)
    }

    /// `.field: what it names` of the first reference of `s` that
    /// resolves to nothing, as the bridge reads them.
    fn broken_reference(&self, s: &otlp::Sample) -> Option<String> {
        let locations = self.locations;
        let location = |p: u64| {
            (p >= locations).then(|| format!(": location {p} (location table has {locations})"))
        };
        if s.locations_length == 0 {
            if let Some(why) = s.location_index.iter().find_map(|&p| location(p)) {
                return Some(format!(".location_index{why}"));
            }
        } else {
            let (start, end) = (
                s.locations_start_index,
                s.locations_start_index.saturating_add(s.locations_length),
            );
            let slice_of = match self.location_indices.len() as u64 {
                0 => locations,
                n => n,
            };
            if end > slice_of {
                return Some(format!(
                    ".locations_start_index: slice {start}..{end} (its table has {slice_of})"
                ));
            }
            let positions = self
                .location_indices
                .get(start as usize..end as usize)
                .unwrap_or_default();
            if let Some(why) = positions.iter().find_map(|&p| location(p as u64)) {
                return Some(format!(".locations_start_index{why}"));
            }
        }
        if let Some(&a) = s.attributes.iter().find(|&&a| a >= self.attributes) {
            return Some(format!(
                ".attributes: attribute {a} (attribute table has {})",
                self.attributes
            ));
        }
        if self.links > 0 && s.link >= self.links {
            return Some(format!(
                ".link: link {} (link table has {})",
                s.link, self.links
            ));
        }
        None
    }
}
