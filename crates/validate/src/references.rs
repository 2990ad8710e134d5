//! Index and id checks for every reference the schema declares, through the
//! generated walkers (`refs::walk_profile`). Nothing here names a field: a
//! new annotated index field is checked as soon as it is generated.

use std::collections::HashMap;

use protobuf::reflect::ReflectValueRef;
use protobuf::MessageDyn;
use protoprof_model_meta::threads::both;
use protoprof_model_meta::{FieldRef, IdIndex, RefKind, RefPath, ReferenceVisitor, Schema};

use crate::report::Collector;
use crate::rules::Rule;

/// The rules a schema's reference problems are reported under.
pub(crate) struct RefRules {
    pub range: &'static Rule,
    pub negative: &'static Rule,
    /// By-id references to an id no entry has.
    pub missing: Option<&'static Rule>,
    /// By-id references of 0 where 0 is invalid.
    pub zero: Option<&'static Rule>,
    pub slice: Option<&'static Rule>,
    pub unknown: &'static Rule,
    /// Tables whose emptiness a rule of its own reports (the string table):
    /// a 0 pointing into them adds nothing.
    pub reported_when_empty: &'static [&'static str],
}

/// From this many samples or table entries on, their checks are shared
/// between two threads ([`ReferenceChecker::check_each_in_halves`]): reading
/// them and checking their references is most of validating a large
/// profile.
pub(crate) const PARALLEL_ELEMENTS: usize = protoprof_model_meta::threads::PARALLEL_ITEMS;

/// `check` over the elements `0..count`, reporting to `collector` what
/// one thread would: from [`PARALLEL_ELEMENTS`] on, the second half on
/// another thread with a forked collector, which `collector` absorbs.
pub(crate) fn check_in_halves(
    collector: &mut Collector,
    count: usize,
    check: impl Fn(std::ops::Range<usize>, &mut Collector) + Sync,
) {
    let pass = |range, [c]: &mut [Collector; 1]| check(range, c);
    let ([checked], _) = passes_in_halves(collector, count, pass);
    collector.absorb(checked);
}

/// One pass over the elements `0..count` making `N` checks, each reporting
/// to its own collector forked from `template`: each collector ends up
/// holding what a pass of its check alone reports, to be absorbed where
/// that pass would have run. Reading an element once for several checks is
/// what this saves. From [`PARALLEL_ELEMENTS`] on, the second half runs on
/// another thread; what `pass` returns for each part comes back in order.
pub(crate) fn passes_in_halves<T: Send, const N: usize>(
    template: &Collector,
    count: usize,
    pass: impl Fn(std::ops::Range<usize>, &mut [Collector; N]) -> T + Sync,
) -> ([Collector; N], Vec<T>) {
    let forks = || -> [Collector; N] { std::array::from_fn(|_| template.fork()) };
    let mut first = forks();
    if count < PARALLEL_ELEMENTS {
        let only = pass(0..count, &mut first);
        return (first, vec![only]);
    }
    let middle = count / 2;
    let mut later = forks();
    let (first_part, second_part) = both(
        true,
        || pass(0..middle, &mut first),
        || pass(middle..count, &mut later),
    );
    for (collector, later) in first.iter_mut().zip(later) {
        collector.absorb(later);
    }
    (first, vec![first_part, second_part])
}

/// What one reference points into.
#[derive(Clone)]
struct Target {
    len: usize,
    ids: Option<std::sync::Arc<IdIndex<()>>>,
    /// For slices: the length of the table used when `len` is 0.
    len_when_empty: usize,
}

/// The tables of a root message that its references point into, measured
/// once; checkers of them ([`Self::checker`]) report each to a collector
/// of its own (one per thread, or per pass over some elements).
#[derive(Clone)]
pub(crate) struct ReferenceTables {
    /// The schema's references, in the order of `targets`.
    schema_references: &'static [FieldRef],
    rules: &'static RefRules,
    /// The id sets are shared between clones, not copied.
    targets: Vec<Target>,
}

impl ReferenceTables {
    /// Measures every table of `root` the schema's references point into.
    pub fn new(schema: &Schema, root: &dyn MessageDyn, rules: &'static RefRules) -> Self {
        let descriptor = root.descriptor_dyn();
        let mut lengths: HashMap<&str, usize> = HashMap::new();
        let mut id_sets: HashMap<&str, std::sync::Arc<IdIndex<()>>> = HashMap::new();
        let mut length_of = |field: &'static str| {
            *lengths.entry(field).or_insert_with(|| {
                descriptor
                    .field_by_name(field)
                    .map_or(0, |f| f.get_repeated(root).len())
            })
        };
        let mut targets = Vec::with_capacity(schema.references.len());
        for r in schema.references {
            let len = length_of(r.table.field);
            let len_when_empty = r.table_when_empty.map_or(0, |t| length_of(t.field));
            let ids = (r.kind == RefKind::Id).then(|| {
                id_sets
                    .entry(r.table.field)
                    .or_insert_with(|| {
                        let ids = ids_of(root, r.table.field);
                        std::sync::Arc::new(IdIndex::set(ids.into_iter()))
                    })
                    .clone()
            });
            targets.push(Target {
                len,
                ids,
                len_when_empty,
            });
        }
        ReferenceTables {
            schema_references: schema.references,
            rules,
            targets,
        }
    }

    /// A checker of these tables reporting to `collector`.
    pub fn checker<'c>(&self, collector: &'c mut Collector) -> ReferenceChecker<'c> {
        self.clone().into_checker(collector)
    }

    /// [`Self::checker`], without a copy.
    pub fn into_checker(self, collector: &mut Collector) -> ReferenceChecker<'_> {
        ReferenceChecker {
            collector,
            tables: self,
        }
    }

    /// Sets the length of the root's table `field` (held elsewhere than in
    /// the root: a view leaves it in the input bytes).
    pub fn set_table_length(&mut self, field: &str, len: usize) {
        let references = self.schema_references;
        for (r, target) in references.iter().zip(&mut self.targets) {
            if r.table.field == field {
                target.len = len;
            }
            if r.table_when_empty.is_some_and(|t| t.field == field) {
                target.len_when_empty = len;
            }
        }
    }

    /// Whether each id of `ids` names an entry of the root's table `table`,
    /// and none is 0: by-id references to the table that lie in `ids` then
    /// need no check.
    pub fn names_every_id(&self, table: &str, ids: std::ops::RangeInclusive<u64>) -> bool {
        let references = self.schema_references.iter().zip(&self.targets);
        !ids.contains(&0)
            && references
                .filter(|(r, _)| r.kind == RefKind::Id && r.table.field == table)
                .any(|(_, target)| {
                    target
                        .ids
                        .as_ref()
                        .is_some_and(|set| set.contains_all(ids.clone()))
                })
    }

    /// Whether every value in `values` lies within the table that
    /// `message`'s `field` indexes by position: those references then
    /// need no check. False when the schema has no such reference.
    pub fn positions_fit(
        &self,
        (message, field): (&str, &str),
        values: std::ops::RangeInclusive<u64>,
    ) -> bool {
        let mut references = (self.schema_references.iter().zip(&self.targets))
            .filter(|(r, _)| r.message == message && r.field == field)
            .peekable();
        references.peek().is_some()
            && references.all(|(r, target)| {
                r.kind == RefKind::Position
                    && (values.is_empty() || *values.end() < target.len as u64)
            })
    }
}

/// Checks references against [`ReferenceTables`], reporting to a collector.
pub(crate) struct ReferenceChecker<'c> {
    collector: &'c mut Collector,
    tables: ReferenceTables,
}

impl<'c> ReferenceChecker<'c> {
    /// Measures every table of `root` the schema's references point into.
    pub fn new(
        schema: &Schema,
        root: &dyn MessageDyn,
        rules: &'static RefRules,
        collector: &'c mut Collector,
    ) -> Self {
        ReferenceTables::new(schema, root, rules).into_checker(collector)
    }
}

impl ReferenceChecker<'_> {
    /// The tables this checker checks against.
    pub fn tables(&self) -> &ReferenceTables {
        &self.tables
    }

    /// `check` on each element in `range` of the repeated field `field`,
    /// in order, with the element's path; it stops once the collector has
    /// stopped. `buffer` is `check`'s to read elements into.
    pub fn check_each<B>(
        &mut self,
        range: std::ops::Range<usize>,
        (field, path): (&'static str, &mut RefPath),
        buffer: &mut B,
        check: &impl Fn(&mut B, usize, &mut RefPath, &mut ReferenceChecker),
    ) {
        for i in range {
            if self.collector.stopped() {
                break;
            }
            self.check_element((field, i), path, |path, c| check(buffer, i, path, c));
        }
    }

    /// `check` on element `i` of the repeated field `field`, with `path`
    /// extended to the element's meanwhile; nothing once the collector has
    /// stopped.
    pub fn check_element(
        &mut self,
        (field, i): (&'static str, usize),
        path: &mut RefPath,
        check: impl FnOnce(&mut RefPath, &mut Self),
    ) {
        if self.collector.stopped() {
            return;
        }
        path.push(field, Some(i));
        check(path, self);
        path.pop();
    }

    /// [`Self::check_each`] over elements `0..count`, in halves on two
    /// threads from [`PARALLEL_ELEMENTS`] on ([`check_in_halves`]), each
    /// with a checker of these tables, which gives the report one thread
    /// gives. Each thread makes its own buffer with `buffer`.
    pub fn check_each_in_halves<B>(
        &mut self,
        count: usize,
        (field, path): (&'static str, &mut RefPath),
        buffer: impl Fn() -> B + Sync,
        check: impl Fn(&mut B, usize, &mut RefPath, &mut ReferenceChecker) + Sync,
    ) {
        let (tables, path) = (&self.tables, &*path);
        check_in_halves(self.collector, count, |range, collector| {
            let mut checker = tables.checker(collector);
            let mut path = path.clone();
            checker.check_each(range, (field, &mut path), &mut buffer(), &check);
        });
    }

    /// Where the checker reports, for checks made alongside the walk.
    pub fn collector(&mut self) -> &mut Collector {
        self.collector
    }

    /// A reference the quick check in `reference` did not clear.
    #[cold]
    fn report_reference(
        &mut self,
        id: usize,
        r: &'static FieldRef,
        path: &RefPath,
        index: Option<usize>,
        value: i128,
    ) {
        let (target, rules) = (&self.tables.targets[id], self.tables.rules);
        let at = || path.with_field(r.field, index);
        match r.kind {
            RefKind::Position => {
                if value < 0 {
                    self.collector
                        .report(rules.negative, at, Some(value.to_string()), || {
                            format!("negative index into {}", r.table.field)
                        });
                } else if value as u128 >= target.len as u128
                    && !(target.len == 0
                        && (r.empty_table_is_none
                            || rules.reported_when_empty.contains(&r.table.field)))
                {
                    let len = target.len;
                    self.collector
                        .report(rules.range, at, Some(value.to_string()), || {
                            format!(
                                "index {value} out of range: {} has {len} entries",
                                r.table.field
                            )
                        });
                }
            }
            RefKind::Id => {
                let ids = target
                    .ids
                    .as_ref()
                    .expect("id sets are built for by-id references");
                if value == 0 {
                    if let (false, Some(rule)) = (r.zero_is_none, rules.zero) {
                        self.collector.report(rule, at, Some("0".into()), || {
                            format!(
                                "id 0 is reserved; this must name an entry of {}",
                                r.table.field
                            )
                        });
                    }
                } else if value < 0 || !ids.contains(value as u64) {
                    if let Some(rule) = rules.missing {
                        self.collector
                            .report(rule, at, Some(value.to_string()), || {
                                format!("no entry of {} has id {value}", r.table.field)
                            });
                    }
                }
            }
        }
    }
}

/// The `id` of every entry of a table.
fn ids_of(root: &dyn MessageDyn, table: &str) -> Vec<u64> {
    let Some(field) = root.descriptor_dyn().field_by_name(table) else {
        return Vec::new();
    };
    let entries = field.get_repeated(root);
    let mut ids = Vec::with_capacity(entries.len());
    for i in 0..entries.len() {
        if let ReflectValueRef::Message(entry) = entries.get(i) {
            let id = entry
                .descriptor_dyn()
                .field_by_name("id")
                .map(|f| f.get_singular_field_or_default(&*entry));
            if let Some(ReflectValueRef::U64(id)) = id {
                ids.push(id);
            }
        }
    }
    ids
}

impl ReferenceVisitor for ReferenceChecker<'_> {
    // Inlined into the generated walkers, once per location id of every
    // sample: a call here cost 14% of validating a large profile.
    #[inline(always)]
    fn reference(
        &mut self,
        id: usize,
        r: &'static FieldRef,
        path: &RefPath,
        index: Option<usize>,
        value: i128,
    ) {
        let target = &self.tables.targets[id];
        // The common case first, kept small enough to inline: a by-id
        // reference to an existing entry (every location id of every sample), an
        // index within its table (every label's strings).
        let fine = match (r.kind, &target.ids) {
            (RefKind::Id, Some(ids)) => {
                value > 0 && value <= i128::from(u64::MAX) && ids.contains(value as u64)
            }
            (RefKind::Position, _) => value >= 0 && value < target.len as i128,
            _ => false,
        };
        if fine {
            return;
        }
        self.report_reference(id, r, path, index, value);
    }

    #[inline]
    fn slice(&mut self, id: usize, r: &'static FieldRef, path: &RefPath, start: u64, length: u64) {
        if length == 0 {
            return; // no slice: the deprecated location_index (or an empty stack) applies
        }
        let target = &self.tables.targets[id];
        let (len, table) = match (target.len, r.table_when_empty) {
            (0, Some(fallback)) => (target.len_when_empty, fallback.field),
            (len, _) => (len, r.table.field),
        };
        let end = start.checked_add(length);
        if end.is_none_or(|end| end > len as u64) {
            if let Some(rule) = self.tables.rules.slice {
                let length_field = r.slice_length.unwrap_or("length");
                self.collector.report(
                    rule,
                    || path.with_field(r.field, None),
                    Some(format!("{start}, {length_field} {length}")),
                    || match end {
                        Some(end) => format!(
                            "slice [{start}, {end}) out of range: {table} has {len} entries"
                        ),
                        None => format!("slice start {start} plus length {length} overflows"),
                    },
                );
            }
        }
    }

    fn unknown_fields(
        &mut self,
        message: &'static str,
        path: &RefPath,
        fields: &protobuf::UnknownFields,
    ) {
        report_unknown(
            self.collector,
            self.tables.rules.unknown,
            message,
            || path.to_string(),
            fields,
        );
    }
}

/// An unknown-fields warning listing the field numbers.
pub(crate) fn report_unknown(
    collector: &mut Collector,
    rule: &'static Rule,
    message: &str,
    path: impl FnOnce() -> String,
    fields: &protobuf::UnknownFields,
) {
    let mut numbers: Vec<u32> = fields.iter().map(|(n, _)| n).collect();
    if numbers.is_empty() {
        return;
    }
    numbers.sort_unstable();
    numbers.dedup();
    let list = numbers
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    collector.report(rule, path, Some(format!("fields {list}")), || {
        format!("{message} has fields its schema does not declare: {list}")
    });
}

/// A visitor that hands everything to `inner` but the walks over some
/// repeated fields, which `walk` makes itself (reading their elements from
/// elsewhere: a view that leaves them in the input bytes). `walk` returns
/// whether the walker should walk the field's elements as it holds them.
pub(crate) struct ElementsFrom<V, W> {
    pub inner: V,
    pub walk: W,
}

impl<V, W> ReferenceVisitor for ElementsFrom<V, W>
where
    V: ReferenceVisitor,
    W: FnMut(&mut V, &'static str, &'static str, &mut RefPath) -> bool,
{
    #[inline]
    fn reference(
        &mut self,
        id: usize,
        r: &'static FieldRef,
        path: &RefPath,
        index: Option<usize>,
        value: i128,
    ) {
        self.inner.reference(id, r, path, index, value);
    }

    fn slice(&mut self, id: usize, r: &'static FieldRef, path: &RefPath, start: u64, len: u64) {
        self.inner.slice(id, r, path, start, len);
    }

    fn unknown_fields(
        &mut self,
        message: &'static str,
        path: &RefPath,
        fields: &protobuf::UnknownFields,
    ) {
        self.inner.unknown_fields(message, path, fields);
    }

    fn walk_elements(
        &mut self,
        message: &'static str,
        field: &'static str,
        path: &mut RefPath,
    ) -> bool {
        (self.walk)(&mut self.inner, message, field, path)
            && self.inner.walk_elements(message, field, path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Options;
    use crate::rules;

    /// Halves report what one thread reports, with every cap and with
    /// `fail_fast`, problems in both halves or in the second only.
    #[test]
    fn checks_in_halves_report_what_one_thread_reports() {
        let count = 2 * PARALLEL_ELEMENTS + 3;
        for bad in [
            vec![4, 7, count - 1],
            vec![PARALLEL_ELEMENTS + 9, count - 2],
        ] {
            let check = |range: std::ops::Range<usize>, c: &mut Collector| {
                for i in range.filter(|i| bad.contains(i)) {
                    let rule = match i % 2 {
                        0 => &rules::PPROF_LABEL_KEY,
                        _ => &rules::PPROF_LABEL_UNIT,
                    };
                    c.report(rule, || format!("sample[{i}]"), None, || "bad".into());
                    if c.stopped() {
                        return;
                    }
                }
            };
            for (max_per_rule, fail_fast) in [(100, false), (1, false), (100, true)] {
                let options = Options {
                    max_per_rule,
                    fail_fast,
                    ..Options::default()
                };
                let (mut one, mut halves) = (Collector::new(options), Collector::new(options));
                check(0..count, &mut one);
                check_in_halves(&mut halves, count, check);
                let (one, halves) = (one.finish("M"), halves.finish("M"));
                assert_eq!(halves, one, "{bad:?} {max_per_rule} {fail_fast}");
                assert!(one.errors + one.warnings > 0);
            }
        }
    }
}
