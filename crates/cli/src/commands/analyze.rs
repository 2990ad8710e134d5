//! `protoprof top`, `folded`, `flamegraph` and `diff`.

use protoprof_analysis::{
    self as analysis, Granularity, Order, Selection, TagFilter, TopOptions, TreeOptions,
};
use std::path::{Path, PathBuf};

use protoprof_codec::{AutoView, PprofView, SampleSource};
use protoprof_model_meta::StringTable;
use protoprof_model_pprof::fields::perftools::profiles::sample as sample_field;
use protoprof_model_pprof::perftools::profiles::{Mapping, Profile};

use crate::cli::{
    CallgraphArgs, CallgrindArgs, DiffArgs, FlamegraphArgs, FoldedArgs, GranularityArg,
    GraphFormat, InputArgs, ListArgs, OutputFormat, PeekArgs, SelectionArgs, TopArgs, TracesArgs,
    TreeArgs,
};
use crate::error::{CliError, Result};
use crate::io::{self, print, Style};

fn index(p: &Profile, selector: Option<&str>) -> Result<usize> {
    analysis::sample_index(p, selector)
        .map_err(|e| CliError::failure(format!("--sample-index: {e}")))
}

/// [`index`], with what would leave the report empty or unnamed without a
/// word said on standard error: functions with pprof's reserved id 0 (which
/// `go tool pprof` refuses), and a default sample type that totals 0 when
/// others have values.
pub(super) fn checked_index(
    input: &InputArgs,
    source: &dyn Analysed,
    selector: Option<&str>,
) -> Result<usize> {
    let subject = subject(input);
    let p = source.model();
    let i = index(p, selector)?;
    let reserved = p.function.iter().filter(|f| f.id == 0).count();
    if reserved > 0 {
        let message = format!(
            "{reserved} of {} functions have id 0, which pprof reserves (go tool pprof refuses \
             the profile: \"malformed profile: found function with reserved ID=0\"); lines \
             naming function 0 show as <unknown>",
            p.function.len()
        );
        io::warn(&subject, message);
    }
    if selector.is_none() {
        warn_empty_default(&subject, source, i);
    }
    Ok(i)
}

/// Says so when sample type `i`, the default, is 0 in every sample and
/// others are not, naming those.
fn warn_empty_default(subject: &str, source: &dyn Analysed, i: usize) {
    // Commonly the first sample has a value: no pass over the rest.
    if source.has_value(i) {
        return;
    }
    let totals = source.totals();
    if totals.iter().all(|&t| t == 0) {
        return;
    }
    let p = source.model();
    let name = |k: usize| {
        let t = &p.sample_type[k];
        format!("{}/{}", p.string(t.type_), p.string(t.unit))
    };
    let with_values: Vec<String> = (0..totals.len())
        .filter(|&k| totals[k] != 0)
        .map(|k| {
            format!(
                "{} (--sample-index {})",
                name(k),
                p.string(p.sample_type[k].type_)
            )
        })
        .collect();
    let message = format!(
        "the default sample type, {}, totals 0, so this report is empty; these have values: {}",
        name(i),
        with_values.join(", ")
    );
    io::warn(subject, message);
}

/// The inputs the report reads, as warnings name them.
fn subject(input: &InputArgs) -> String {
    if let Some(store) = &input.store {
        return format!("store {}", store.display());
    }
    let names: Vec<String> = input.files.iter().map(|f| io::shown(f)).collect();
    names.join(", ")
}

/// The selection the options ask for.
pub(crate) fn selection(args: &SelectionArgs) -> Result<Selection> {
    let regex = |option: &'static str, value: &Option<String>| {
        Selection::regex(option, value.as_deref().unwrap_or(""))
    };
    let tag = |option: &'static str, value: &Option<String>| {
        value
            .as_deref()
            .filter(|v| !v.is_empty())
            .map(|v| TagFilter::parse(option, v))
            .transpose()
    };
    let build = || -> std::result::Result<Selection, analysis::SelectionError> {
        Ok(Selection {
            focus: regex("focus", &args.focus)?,
            ignore: regex("ignore", &args.ignore)?,
            hide: regex("hide", &args.hide)?,
            show: regex("show", &args.show)?,
            show_from: regex("show-from", &args.show_from)?,
            prune_from: regex("prune-from", &args.prune_from)?,
            tag_focus: tag("tagfocus", &args.tagfocus)?,
            tag_ignore: tag("tagignore", &args.tagignore)?,
            tag_show: regex("tagshow", &args.tagshow)?,
            tag_hide: regex("taghide", &args.taghide)?,
            granularity: match args.granularity {
                GranularityArg::Functions => Granularity::Functions,
                GranularityArg::Filefunctions => Granularity::FileFunctions,
                GranularityArg::Files => Granularity::Files,
                GranularityArg::Lines => Granularity::Lines,
                GranularityArg::Addresses => Granularity::Addresses,
            },
            noinlines: args.noinlines,
            object_names: false,
            relative_percentages: args.relative_percentages,
            mean: args.mean,
            compact_labels: args.compact_labels,
            drop_negative: args.drop_negative,
            call_tree: false,
            names_as_given: io::names_as_given(),
            divide_by: divide_by(args.divide_by)?,
        })
    };
    let selection = build().map_err(|e| CliError::failure(e.to_string()))?;
    // As pprof says how it read a tag filter that could be either.
    for (option, filter, text) in [
        ("tagfocus", &selection.tag_focus, &args.tagfocus),
        ("tagignore", &selection.tag_ignore, &args.tagignore),
    ] {
        if let (Some(filter), Some(text)) = (filter, text) {
            if filter.is_range() {
                let value = text.split_once('=').map_or(text.as_str(), |(_, v)| v);
                eprintln!(
                    "protoprof: --{option}: interpreted '{value}' as a range, not a regular expression"
                );
            }
        }
    }
    Ok(selection)
}

/// `--divide-by`, refused as pprof refuses it when zero (a NaN or an
/// infinity divides nothing, as in pprof: see `Selection::value_ratio`).
fn divide_by(value: Option<f64>) -> std::result::Result<Option<f64>, analysis::SelectionError> {
    match value {
        Some(d) if d == 0.0 => Err(analysis::SelectionError {
            option: "divide-by",
            value: d.to_string(),
            detail: "zero divisor specified".into(),
        }),
        other => Ok(other),
    }
}

/// pprof's warnings for filters that match nothing in `source` (an empty
/// report otherwise says nothing of why).
pub(super) fn warn_unmatched(source: &dyn Analysed, selection: &Selection) {
    for filter in source.unmatched(selection) {
        eprintln!("protoprof: {filter} expression matched no samples");
    }
}

pub fn top(args: &TopArgs, style: Style) -> Result<u8> {
    with_input(&args.input, |source| top_of(source, args, style))
}

/// Runs `f` on what `input` names: one file as a view over its bytes (no
/// model per sample), or several files and base profiles merged.
pub(super) fn with_input<T>(
    input: &InputArgs,
    f: impl FnOnce(&dyn Analysed) -> Result<T>,
) -> Result<T> {
    if input.tagroot.is_some() || input.tagleaf.is_some() || input.store.is_some() {
        // Frames are added to the model, as pprof adds them before any filter.
        let mut p = combined(input)?;
        add_label_frames(&mut p, input);
        return f(&p);
    }
    if let ([path], true, true) = (
        &input.files[..],
        input.base.is_empty(),
        input.diff_base.is_empty(),
    ) {
        return match io::decode_view(path, io::read_input(path)?, None)? {
            AutoView::Pprof(mut view) => {
                prepare(view.message.header_mut(), path, input);
                f(&view.message)
            }
            // Converted as read: no pprof sample held beside the input.
            AutoView::Development(view) => {
                let mut view = view.message;
                let mut converted = io::development_as_pprof(path, &mut view)?;
                prepare(converted.header_mut(), path, input);
                f(&converted.reading(&view))
            }
            AutoView::Experimental(view) => {
                let mut view = view.message;
                match io::experimental_as_pprof(path, &mut view) {
                    Some(converted) => {
                        let mut converted = converted?;
                        prepare(converted.header_mut(), path, input);
                        f(&converted.reading(&view))
                    }
                    None => {
                        let whole = io::experimental_whole_as_pprof(path, view)?;
                        f(&symbolized(path, whole, input))
                    }
                }
            }
            AutoView::Other(other) => f(&symbolized(path, io::otlp_as_pprof(path, &other)?, input)),
        };
    }
    let combined = combined(input)?;
    f(&combined)
}

/// `--tagroot` and `--tagleaf`'s frames added to `p`, with a warning for
/// keys no sample has.
pub(crate) fn add_label_frames(p: &mut Profile, input: &InputArgs) {
    let (root_keys, leaf_keys) = input.label_frame_keys();
    if root_keys.is_empty() && leaf_keys.is_empty() {
        return;
    }
    let (root_matched, leaf_matched) =
        analysis::add_label_nodes(p, &root_keys, &leaf_keys, "minimum");
    for (keys, matched, option) in [
        (&root_keys, root_matched, "--tagroot"),
        (&leaf_keys, leaf_matched, "--tagleaf"),
    ] {
        if !keys.is_empty() && !matched {
            let message = format!("no sample has a label of {}", keys.join(", "));
            io::warn(option, message);
        }
    }
}

/// `profile`, read from `path`, made ready for a report (see [`prepare`]).
fn symbolized(path: &Path, mut profile: Profile, input: &InputArgs) -> Profile {
    prepare(&mut profile, path, input);
    profile
}

/// What pprof does to a profile before its report: the executable named
/// (`--executable`) made its first mapping's file, then symbolization as
/// the report asks, then `--add-comment`'s comment.
fn prepare(p: &mut Profile, path: &Path, input: &InputArgs) {
    set_executable(p, input);
    io::symbolize_for_report(io::shown(path), p);
    add_comment(p, input);
}

/// pprof's `[binary] profile` form: the binary's path replaces the first
/// mapping's file (a mapping is added for a profile that has none, every
/// location in it), so symbolization reads that binary.
fn set_executable(p: &mut Profile, input: &InputArgs) {
    let Some(executable) = &input.executable else {
        return;
    };
    if p.mapping.is_empty() {
        p.mapping.push(Mapping {
            id: 1,
            ..Default::default()
        });
        p.location.iter_mut().for_each(|l| l.mapping_id = 1);
    }
    p.string_table.push(executable.display().to_string());
    p.mapping[0].filename = p.string_table.len() as i64 - 1;
}

/// `--add-comment`'s comment appended to the profile's, as pprof's
/// `-add_comment` appends it after merging.
fn add_comment(p: &mut Profile, input: &InputArgs) {
    if let Some(comment) = input.add_comment.as_deref().filter(|c| !c.is_empty()) {
        p.string_table.push(comment.to_string());
        p.comment.push(p.string_table.len() as i64 - 1);
    }
}

/// The inputs merged, and the bases merged, negated and merged in (pprof's
/// `fetchProfiles`), then symbolized once, as pprof symbolizes what it
/// merged.
pub(crate) fn combined(input: &InputArgs) -> Result<Profile> {
    let mut p = combined_unsymbolized(input)?;
    let what = match (&input.store, &input.files[..]) {
        (Some(store), _) => io::shown(store),
        (None, [one]) => io::shown(one),
        (None, [first, rest @ ..]) => format!("{} (and {} more)", io::shown(first), rest.len()),
        (None, []) => String::new(),
    };
    set_executable(&mut p, input);
    io::symbolize_for_report(what, &mut p);
    add_comment(&mut p, input);
    Ok(p)
}

fn combined_unsymbolized(input: &InputArgs) -> Result<Profile> {
    let merge = |files: &[PathBuf]| -> Result<Profile> {
        match files {
            [one] => io::load_pprof(one),
            _ => merge_files(files),
        }
    };
    let mut p = match input.store {
        Some(_) => super::store::selected(input)?,
        None => merge(&input.files)?,
    };
    let (bases, diff) = match input.diff_base.is_empty() {
        true => (&input.base, false),
        false => (&input.diff_base, true),
    };
    let (base, diff) = match input.store_base() {
        Some(base) => (super::store::selected(&base)?, true),
        None if bases.is_empty() => return Ok(p),
        None => (merge(bases)?, diff),
    };
    if input.normalize {
        analysis::base::normalize(&mut p, &base);
    }
    let base = analysis::base::as_base(base, diff);
    merged(vec![p, base])
}

/// The profiles in `files` merged as pprof merges them. Their samples are
/// read through views, so only the merged samples become models, unless
/// their units differ: then values are scaled first, on whole models.
pub fn merge_files(files: &[PathBuf]) -> Result<Profile> {
    let views = files
        .iter()
        .map(|f| io::load_pprof_view(f, io::read_input(f)?))
        .collect::<Result<Vec<_>>>()?;
    let headers: Vec<&Profile> = views.iter().map(|v| v.profile()).collect();
    check_mergeable(files, &headers)?;
    if analysis::units::units_differ(&headers) {
        return merged(views.into_iter().map(PprofView::into_profile).collect());
    }
    protoprof_pprof_bridge::merge::merge(&views).map_err(|e| CliError::invalid(e.to_string()))
}

/// Refuses, naming two of `files`, profiles pprof does not merge: of other
/// sample types (count, names or units that do not convert) or period
/// types. A usage error (2), as the files asked for are the fault.
fn check_mergeable(files: &[PathBuf], headers: &[&Profile]) -> Result<()> {
    let Err(why) = analysis::units::common_units(headers) else {
        return Ok(());
    };
    let types = |p: &Profile| {
        let each = p.sample_type.iter();
        let each = each.map(|t| format!("{}/{}", p.string(t.type_), p.string(t.unit)));
        each.collect::<Vec<_>>().join(", ")
    };
    let other = (1..headers.len())
        .find(|&k| types(headers[k]) != types(headers[0]))
        .unwrap_or(1);
    let (a, b) = (io::shown(&files[0]), io::shown(&files[other]));
    Err(CliError::failure(format!(
        "{a} and {b} do not merge ({why}): {a} has sample types {}, {b} has {}",
        types(headers[0]),
        types(headers[other])
    )))
}

/// Profiles merged as pprof's `combineProfiles` merges them: brought to
/// common units first, then merged.
pub(crate) fn merged(mut profiles: Vec<Profile>) -> Result<Profile> {
    analysis::units::scale_profiles(&mut profiles)
        .map_err(|e| CliError::invalid(format!("cannot merge: {e}")))?;
    protoprof_pprof_bridge::merge::merge(&profiles).map_err(|e| CliError::invalid(e.to_string()))
}

/// What the analyses read: a view or a model, behind one object-safe face.
pub(super) trait Analysed {
    fn report(
        &self,
        index: usize,
        selection: &Selection,
        options: &TopOptions,
    ) -> analysis::TopReport;
    fn top_proto(&self, index: usize, selection: &Selection, options: &TopOptions) -> Profile;
    fn folded(&self, index: usize, selection: &Selection) -> analysis::FoldedStacks;
    fn traces(&self, index: usize, selection: &Selection) -> Vec<analysis::Trace>;
    fn tags(&self, index: usize, selection: &Selection) -> Vec<analysis::TagValues>;
    fn peek(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        order: Order,
    ) -> analysis::Peek;
    fn tree(&self, index: usize, selection: &Selection, options: &TreeOptions) -> analysis::Peek;
    fn callgrind(&self, index: usize, selection: &Selection) -> String;
    fn dot(&self, index: usize, selection: &Selection, options: &TreeOptions) -> String;
    fn label_report(&self, index: usize, selection: &Selection) -> analysis::TopReport;
    fn listing(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        files: &mut dyn analysis::SourceFiles,
    ) -> Option<String>;
    fn disassembly(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        objects: &mut dyn analysis::ObjectFiles,
    ) -> std::result::Result<String, String>;
    fn web_listing(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        tools: (
            &mut dyn analysis::ObjectFiles,
            &mut dyn analysis::SourceFiles,
        ),
    ) -> std::result::Result<analysis::WebList, String>;
    fn unmatched(&self, selection: &Selection) -> Vec<&'static str>;
    fn model(&self) -> &Profile;
    /// Each sample type's total over every sample.
    fn totals(&self) -> Vec<i64>;
    /// Whether some sample has a value other than 0 of sample type `index`
    /// (read until the first).
    fn has_value(&self, index: usize) -> bool;
}

impl<S: protoprof_model_pprof::samples::ProfileSamples> Analysed for S {
    fn report(
        &self,
        index: usize,
        selection: &Selection,
        options: &TopOptions,
    ) -> analysis::TopReport {
        analysis::top_report(self, index, selection, options)
    }

    fn top_proto(&self, index: usize, selection: &Selection, options: &TopOptions) -> Profile {
        analysis::top_proto(self, index, selection, options)
    }

    fn folded(&self, index: usize, selection: &Selection) -> analysis::FoldedStacks {
        analysis::folded_stacks(self, index, selection)
    }

    fn traces(&self, index: usize, selection: &Selection) -> Vec<analysis::Trace> {
        analysis::traces(self, index, selection)
    }

    fn tags(&self, index: usize, selection: &Selection) -> Vec<analysis::TagValues> {
        analysis::tags(self, index, selection)
    }

    fn peek(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        order: Order,
    ) -> analysis::Peek {
        analysis::peek_in_order(self, index, selection, rx, order)
    }

    fn tree(&self, index: usize, selection: &Selection, options: &TreeOptions) -> analysis::Peek {
        analysis::tree(self, index, selection, options)
    }

    fn callgrind(&self, index: usize, selection: &Selection) -> String {
        analysis::callgrind(self, index, selection)
    }

    fn dot(&self, index: usize, selection: &Selection, options: &TreeOptions) -> String {
        analysis::call_graph_dot(self, index, selection, options)
    }

    fn label_report(&self, index: usize, selection: &Selection) -> analysis::TopReport {
        analysis::report::label_report(self, index, selection)
    }

    fn listing(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        files: &mut dyn analysis::SourceFiles,
    ) -> Option<String> {
        analysis::source_listing(self, index, selection, rx, files)
    }

    fn disassembly(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        objects: &mut dyn analysis::ObjectFiles,
    ) -> std::result::Result<String, String> {
        analysis::disassembly(self, index, selection, rx, objects)
    }

    fn web_listing(
        &self,
        index: usize,
        selection: &Selection,
        rx: &regex::Regex,
        tools: (
            &mut dyn analysis::ObjectFiles,
            &mut dyn analysis::SourceFiles,
        ),
    ) -> std::result::Result<analysis::WebList, String> {
        analysis::web_listing(self, index, selection, rx, tools)
    }

    fn unmatched(&self, selection: &Selection) -> Vec<&'static str> {
        analysis::filters_matching_nothing(self, selection)
    }

    fn totals(&self) -> Vec<i64> {
        let mut totals = vec![0i64; self.profile().sample_type.len()];
        let mut buffer = Default::default();
        let values = protoprof_model_meta::Fields::only(&[sample_field::VALUE]);
        for n in 0..self.sample_count() {
            let s = self.sample_fields(n, values, &mut buffer);
            for (total, v) in totals.iter_mut().zip(&s.value) {
                *total = total.saturating_add(*v);
            }
        }
        totals
    }

    fn has_value(&self, index: usize) -> bool {
        let mut buffer = Default::default();
        let values = protoprof_model_meta::Fields::only(&[sample_field::VALUE]);
        (0..self.sample_count()).any(|n| {
            let s = self.sample_fields(n, values, &mut buffer);
            s.value.get(index).is_some_and(|&v| v != 0)
        })
    }

    fn model(&self) -> &Profile {
        self.profile()
    }
}

fn top_of(source: &dyn Analysed, args: &TopArgs, style: Style) -> Result<u8> {
    let p = source.model();
    let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
    let selection = selection(&args.selection)?;
    let options = TopOptions {
        order: if args.cum { Order::Cum } else { Order::Flat },
        node_count: args.nodes.unwrap_or(0),
        node_fraction: args.nodefraction,
        unit: args.unit.clone(),
    };
    if args.topproto {
        let top = source.top_proto(i, &selection, &options);
        warn_unmatched(source, &selection);
        let bytes = io::encode_as(&top, crate::cli::Encoding::Binary, true)?;
        io::write_output(Path::new("-"), &bytes)?;
        return Ok(0);
    }
    let report = source.report(i, &selection, &options);
    warn_unmatched(source, &selection);
    if args.format == OutputFormat::Json {
        let json = TopJson {
            sample_type: &report.sample_type.0,
            unit: &report.sample_type.1,
            total: report.total,
            rows: &report.rows,
        };
        return print(&(serde_json::to_string_pretty(&json).expect("serializable") + "\n"))
            .map(|_| 0);
    }
    let mut out = report.header(p, &selection.active_filters()).join("\n") + "\n";
    let table = report.table();
    let (columns, rows) = table.split_once('\n').unwrap_or((&table, ""));
    out.push_str(&style.bold(columns));
    out.push('\n');
    out.push_str(rows);
    print(&out)?;
    Ok(0)
}

pub fn traces(args: &TracesArgs) -> Result<u8> {
    let text = with_input(&args.input, |source| {
        let p = source.model();
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let traces = source.traces(i, &selection);
        warn_unmatched(source, &selection);
        if args.format == OutputFormat::Json {
            return Ok(serde_json::to_string_pretty(&traces).expect("serializable") + "\n");
        }
        Ok(analysis::traces_text(
            p,
            &whole_profile(source, i, &selection),
            &traces,
        ))
    })?;
    print(&text)?;
    Ok(0)
}

pub fn tags(args: &TracesArgs) -> Result<u8> {
    let text = with_input(&args.input, |source| {
        let p = source.model();
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let tags = source.tags(i, &selection);
        warn_unmatched(source, &selection);
        if args.format == OutputFormat::Json {
            return Ok(serde_json::to_string_pretty(&tags).expect("serializable") + "\n");
        }
        let total = whole_profile(source, i, &selection).total;
        Ok(analysis::tags_text(
            &tags,
            (p.string(p.sample_type[i].unit), selection.value_ratio()),
            total,
        ))
    })?;
    print(&text)?;
    Ok(0)
}

pub fn peek(args: &PeekArgs) -> Result<u8> {
    let rx = Selection::regex("peek", &args.regex)
        .map_err(|e| CliError::failure(e.to_string()))?
        .ok_or_else(|| CliError::failure("peek needs a regular expression"))?;
    let text = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let order = match args.cum {
            true => Order::Cum,
            false => Order::Flat,
        };
        let peek = source.peek(i, &selection, &rx, order);
        warn_unmatched(source, &selection);
        if peek.nodes.is_empty() {
            return Err(CliError::invalid(format!(
                "no matches found for regexp: {}",
                args.regex
            )));
        }
        if args.format == OutputFormat::Json {
            return Ok(report_nodes_json(&peek));
        }
        Ok(peek.text(source.model(), &selection.active_filters()))
    })?;
    print(&text)?;
    Ok(0)
}

pub fn tree(args: &TreeArgs) -> Result<u8> {
    let options = args.trim.options(&args.unit);
    let text = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let tree = source.tree(i, &selection, &options);
        warn_unmatched(source, &selection);
        if args.format == OutputFormat::Json {
            return Ok(report_nodes_json(&tree));
        }
        Ok(tree.text(source.model(), &selection.active_filters()))
    })?;
    print(&text)?;
    Ok(0)
}

pub fn list(args: &ListArgs) -> Result<u8> {
    let rx = Selection::regex("list", &args.regex)
        .map_err(|e| CliError::failure(e.to_string()))?
        .ok_or_else(|| CliError::failure("list needs a regular expression"))?;
    let mut sources = args.sources.disk_sources();
    let text = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let listing = source.listing(i, &selection, &rx, &mut sources);
        warn_unmatched(source, &selection);
        listing.ok_or_else(|| {
            CliError::invalid(format!("no matches found for regexp: {}", args.regex))
        })
    })?;
    print(&text)?;
    Ok(0)
}

pub fn callgraph(args: &CallgraphArgs) -> Result<u8> {
    let options = args.trim.options("minimum");
    let dot = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = Selection {
            call_tree: args.call_tree,
            ..selection(&args.selection)?
        };
        let dot = source.dot(i, &selection, &options);
        warn_unmatched(source, &selection);
        Ok(dot)
    })?;
    let bytes = match args.format {
        GraphFormat::Dot => dot.into_bytes(),
        GraphFormat::Svg => {
            let svg =
                protoprof_web::dot_to_svg(&dot).map_err(|e| CliError::failure(e.to_string()))?;
            protoprof_web::with_pan_and_zoom(&svg)
        }
        image => {
            let format = format!("{image:?}").to_lowercase();
            protoprof_web::render_dot(&dot, &format)
                .map_err(|e| CliError::failure(e.to_string()))?
        }
    };
    if let Some(viewer) = args.view {
        let suffix = format!("{:?}", args.format).to_lowercase();
        super::viewer::show(&bytes, &suffix, viewer)?;
        return Ok(0);
    }
    io::write_output_gzip(&args.output, false, |out| out.write_all(&bytes))?;
    Ok(0)
}

/// The labels pprof prints of the profile `top` would read (file, type,
/// time, duration and total), as its interactive shell greets with them.
pub(super) fn labels_of(command: &crate::cli::Command) -> Result<Vec<String>> {
    let crate::cli::Command::Top(args) = command else {
        return Ok(Vec::new());
    };
    with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let report = source.label_report(i, &Selection::default());
        Ok(analysis::report::profile_labels(source.model(), &report))
    })
}

/// `comments`: the profile's comments, one per line, as pprof's
/// `-comments` prints them.
pub fn comments(input: &InputArgs) -> Result<u8> {
    let text = with_input(input, |source| {
        let p = source.model();
        Ok(p.comment
            .iter()
            .map(|&c| format!("{}\n", p.string(c)))
            .collect::<String>())
    })?;
    print(&text)?;
    Ok(0)
}

pub fn callgrind(args: &CallgrindArgs) -> Result<u8> {
    let text = with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = Selection {
            call_tree: args.call_tree,
            ..selection(&args.selection)?
        };
        warn_unmatched(source, &selection);
        Ok(source.callgrind(i, &selection))
    })?;
    if let Some(viewer) = args.view {
        return super::viewer::show(text.as_bytes(), "grind", viewer).map(|_| 0);
    }
    print(&text)?;
    Ok(0)
}

/// `peek`'s and `tree`'s JSON: the sample type, the total and the nodes
/// with their edges.
fn report_nodes_json(report: &analysis::Peek) -> String {
    let json = serde_json::json!({
        "sample_type": report.report.sample_type.0,
        "unit": report.report.sample_type.1,
        "total": report.report.total,
        "nodes": report.nodes,
    });
    serde_json::to_string_pretty(&json).expect("serializable") + "\n"
}

/// The report pprof's labels are written from (see
/// [`analysis::report::label_report`]).
fn whole_profile(
    source: &dyn Analysed,
    index: usize,
    selection: &Selection,
) -> analysis::TopReport {
    source.label_report(index, selection)
}

/// `top --format json`: values as exact integers in the sample type's unit.
#[derive(serde::Serialize)]
struct TopJson<'r> {
    sample_type: &'r str,
    unit: &'r str,
    total: i64,
    rows: &'r [analysis::FunctionTotals],
}

pub fn folded(args: &FoldedArgs) -> Result<u8> {
    // Written as they are formatted: a profile of a million distinct
    // stacks would otherwise hold its whole text, twice.
    with_input(&args.input, |source| {
        let i = checked_index(&args.input, source, args.sample_index.as_deref())?;
        let selection = selection(&args.selection)?;
        let stacks = source.folded(i, &selection);
        warn_unmatched(source, &selection);
        io::write_stdout(|out| stacks.write_to(out))
    })?;
    Ok(0)
}

pub fn flamegraph(args: &FlamegraphArgs) -> Result<u8> {
    let selection = selection(&args.selection)?;
    let bases: Vec<PathBuf> = [&args.input.base[..], &args.input.diff_base[..]].concat();
    let base_input = match args.input.store_base() {
        Some(selection) => Some(selection),
        None if bases.is_empty() => None,
        None => Some(files_input(&bases)),
    };
    // With a base: a differential flame graph (inferno's two-column input:
    // the base's value, then the profile's), widths from the profile,
    // colours from the change. Otherwise the profile's positive stacks.
    let new_only = args.input.without_base();
    let (lines, title, unit) = with_input(&new_only, |source| {
        let p = source.model();
        let i = checked_index(&new_only, source, args.sample_index.as_deref())?;
        let stacks = source.folded(i, &selection).into_lines();
        warn_unmatched(source, &selection);
        let lines = match &base_input {
            None => stacks
                .into_iter()
                .filter(|(_, v)| *v > 0)
                .map(|(s, v)| format!("{s} {v}"))
                .collect(),
            Some(base) => differential(stacks, base, args.sample_index.as_deref(), &selection)?,
        };
        let unit = p.string(p.sample_type[i].unit).to_string();
        Ok((lines, p.string(p.sample_type[i].type_).to_string(), unit))
    })?;
    let mut options = inferno::flamegraph::Options::default();
    let shown = subject(&args.input);
    if lines.is_empty() {
        // inferno draws nothing of nothing; say whose samples are missing.
        return Err(CliError::failure(format!(
            "{shown}: no sample has a {title} value to draw a flame graph of"
        )));
    }
    options.title = format!("{title} ({shown})");
    options.count_name = unit;
    let mut svg = Vec::new();
    inferno::flamegraph::from_lines(&mut options, lines.iter().map(String::as_str), &mut svg)
        .map_err(|e| CliError::failure(format!("rendering the flame graph: {e}")))?;
    io::write_output_gzip(&args.output, args.gzip, |out| out.write_all(&svg))?;
    Ok(0)
}

/// Files read as the profile, on their own.
fn files_input(files: &[PathBuf]) -> InputArgs {
    InputArgs {
        files: files.to_vec(),
        base: Vec::new(),
        diff_base: Vec::new(),
        normalize: false,
        add_comment: None,
        executable: None,
        tagroot: None,
        tagleaf: None,
        store: None,
        select: None,
        from: None,
        to: None,
        cluster: None,
        explain: false,
        strict: false,
        no_rollups: false,
        sample_type: Vec::new(),
        base_select: None,
        base_from: None,
        base_to: None,
        symbolize: crate::cli::SYMBOLIZE_DEFAULT.into(),
    }
}

/// `stack base new` for every stack of either (sorted, as inferno wants;
/// negative values as 0: flame graphs have no negative widths).
fn differential(
    stacks: Vec<(String, i64)>,
    base_input: &InputArgs,
    selector: Option<&str>,
    selection: &Selection,
) -> Result<Vec<String>> {
    let base_stacks = with_input(base_input, |base| {
        let i = index(base.model(), selector)?;
        Ok(base.folded(i, selection).into_lines())
    })?;
    let mut both: std::collections::BTreeMap<String, (i64, i64)> = Default::default();
    for (s, v) in base_stacks {
        both.entry(s).or_default().0 = v.max(0);
    }
    for (s, v) in stacks {
        both.entry(s).or_default().1 = v.max(0);
    }
    Ok(both
        .into_iter()
        .map(|(s, (before, after))| format!("{s} {before} {after}"))
        .collect())
}

pub fn diff(args: &DiffArgs, style: Style) -> Result<u8> {
    let (selector, nodes) = (args.sample_index.as_deref(), args.nodes.unwrap_or(0));
    let selection = selection(&args.selection)?;
    let mut a = io::load_pprof_view(&args.base, io::read_input(&args.base)?)?;
    let mut b = io::load_pprof_view(&args.new, io::read_input(&args.new)?)?;
    io::symbolize_for_report(io::shown(&args.base), a.header_mut());
    io::symbolize_for_report(io::shown(&args.new), b.header_mut());
    let names = (io::shown(&args.base), io::shown(&args.new));
    let units_differ = comparable((a.profile(), &names.0), (b.profile(), &names.1))?;
    let report = match args.normalize || units_differ {
        // Units brought together and NEW normalised on whole models, as
        // pprof's -diff_base does before comparing.
        true => {
            let mut profiles = [a.into_profile(), b.into_profile()];
            analysis::units::scale_profiles(&mut profiles)
                .map_err(|e| CliError::invalid(format!("cannot compare: {e}")))?;
            let [a, mut b] = profiles;
            if args.normalize {
                analysis::base::normalize(&mut b, &a);
            }
            let (ia, ib) = (index(&a, selector)?, index(&b, selector)?);
            analysis::diff_report((&a, ia), (&b, ib), &selection, nodes)
        }
        false => {
            let (ia, ib) = (index(a.profile(), selector)?, index(b.profile(), selector)?);
            analysis::diff_report((&a, ia), (&b, ib), &selection, nodes)
        }
    };
    if args.format == OutputFormat::Json {
        return print(&(serde_json::to_string_pretty(&report).expect("serializable") + "\n"))
            .map(|_| 0);
    }
    let mut out = report
        .header((&names.0, &names.1), &selection.active_filters())
        .join("\n")
        + "\n";
    let table = report.table();
    let (columns, rows) = table.split_once('\n').unwrap_or((&table, ""));
    out.push_str(&style.bold(columns));
    out.push('\n');
    out.push_str(rows);
    print(&out)?;
    Ok(0)
}

/// Whether two profiles can be compared as pprof's `-diff_base` merges
/// them (the same sample types, in units of one kind); `true` when their
/// units differ, so that values must be scaled first.
fn comparable(base: (&Profile, &str), new: (&Profile, &str)) -> Result<bool> {
    analysis::units::common_units(&[base.0, new.0]).map_err(|e| {
        CliError::invalid(format!(
            "cannot compare {} with {}: {e} (diff compares profiles of the same sample types)",
            new.1, base.1
        ))
    })?;
    Ok(analysis::units::units_differ(&[base.0, new.0]))
}
