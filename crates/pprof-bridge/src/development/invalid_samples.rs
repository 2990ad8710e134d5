//! Samples whose references resolve to nothing, left out of v1development
//! data so that the rest can be looked at: one broken sample of 165 (a
//! stack index past the table, as a v1.7 upgrade leaves a location slice
//! that ran one past `location_indices`) must not hide the other 164.
//! Reports leave them out with a warning; `convert` only when asked
//! (`--drop-invalid`), since its output would not hold them.

use protoprof_model_otlp::opentelemetry::proto::profiles::v1development as dev;

use crate::error::{DroppedSamples, Dropping};

/// Removes every sample of `data` whose stack, a location of its stack,
/// an attribute or its link is not in the dictionary; what was removed, or
/// `None` when every sample resolves (then `data` is unchanged).
pub fn drop_invalid_samples(data: &mut dev::ProfilesData) -> Option<DroppedSamples> {
    let empty = dev::ProfilesDictionary::new();
    let dictionary = data.dictionary.as_ref().unwrap_or(&empty);
    let mut dropping = Dropping::default();
    for (r, resource) in data.resource_profiles.iter_mut().enumerate() {
        for (s, scope) in resource.scope_profiles.iter_mut().enumerate() {
            for (p, profile) in scope.profiles.iter_mut().enumerate() {
                let at = |n| {
                    format!("resource_profiles[{r}].scope_profiles[{s}].profiles[{p}].samples[{n}]")
                };
                dropping.retain(&mut profile.samples, at, |sample| {
                    broken_reference(sample, dictionary)
                });
            }
        }
    }
    dropping.finish()
}

/// `.field: what it names` of the first reference of `sample` that
/// resolves to nothing in `d`.
fn broken_reference(sample: &dev::Sample, d: &dev::ProfilesDictionary) -> Option<String> {
    let in_table = |index: i32, len: usize| usize::try_from(index).is_ok_and(|i| i < len);
    let Some(stack) = usize::try_from(sample.stack_index)
        .ok()
        .and_then(|i| d.stack_table.get(i))
    else {
        return Some(format!(
            ".stack_index: stack {} (stack_table has {})",
            sample.stack_index,
            d.stack_table.len()
        ));
    };
    let locations = d.location_table.len();
    if let Some(&bad) = stack
        .location_indices
        .iter()
        .find(|&&l| !in_table(l, locations))
    {
        return Some(format!(
            ".stack_index: stack {} names location {bad} (location_table has {locations})",
            sample.stack_index
        ));
    }
    let attributes = d.attribute_table.len();
    if let Some(&bad) = sample
        .attribute_indices
        .iter()
        .find(|&&a| !in_table(a, attributes))
    {
        return Some(format!(
            ".attribute_indices: attribute {bad} (attribute_table has {attributes})"
        ));
    }
    if sample.link_index != 0 && !in_table(sample.link_index, d.link_table.len()) {
        return Some(format!(
            ".link_index: link {} (link_table has {})",
            sample.link_index,
            d.link_table.len()
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(stack_indices: &[i32]) -> dev::ProfilesData {
        let mut d = dev::ProfilesDictionary::new();
        d.stack_table = vec![dev::Stack::new(), dev::Stack::new()];
        d.stack_table[1].location_indices = vec![0];
        d.location_table = vec![dev::Location::new()];
        let mut profile = dev::Profile::new();
        profile.samples = stack_indices
            .iter()
            .map(|&stack_index| dev::Sample {
                stack_index,
                ..dev::Sample::new()
            })
            .collect();
        let mut scope = dev::ScopeProfiles::new();
        scope.profiles.push(profile);
        let mut resource = dev::ResourceProfiles::new();
        resource.scope_profiles.push(scope);
        dev::ProfilesData {
            resource_profiles: vec![resource],
            dictionary: Some(d).into(),
            ..Default::default()
        }
    }

    #[test]
    fn only_samples_that_resolve_are_kept() {
        let mut broken = data(&[1, 2, 0, -1, 1]);
        let dropped = drop_invalid_samples(&mut broken).unwrap();
        assert_eq!((dropped.count, dropped.of), (2, 5));
        assert_eq!(
            dropped.first,
            "resource_profiles[0].scope_profiles[0].profiles[0].samples[1].stack_index: \
             stack 2 (stack_table has 2)"
        );
        let kept = &broken.resource_profiles[0].scope_profiles[0].profiles[0].samples;
        let kept: Vec<i32> = kept.iter().map(|s| s.stack_index).collect();
        assert_eq!(kept, [1, 0, 1]);
        let mut whole = data(&[0, 1]);
        let before = whole.clone();
        assert_eq!(drop_invalid_samples(&mut whole), None);
        assert_eq!(whole, before);
    }
}
