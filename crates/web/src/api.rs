//! What each address answers: the page for `/ui/<view>`, its assets, and
//! the reports as JSON under `/api/`, each from the analysis the command
//! line's report of the same name runs.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use http::{header, Response, StatusCode};
use http_body_util::Full;
use protoprof_analysis::{self as analysis, Order, Selection, TopOptions};
use protoprof_model_meta::StringTable;
use protoprof_model_meta::{Fields, SampleSource};
use protoprof_model_pprof::fields::perftools::profiles::sample;
use protoprof_model_pprof::perftools::profiles::{Profile, Sample};
use protoprof_model_pprof::samples::ProfileSamples;
use serde_json::{json, Value};

use crate::assets;
use crate::cache::Kept;
use crate::params::Params;
use crate::served::{Compare, Served, StorePane};
use crate::served_profile::ServedProfile;
use crate::state::State;
use crate::store::Selected;
use crate::WebError;

/// The page's views, each at `/ui/<view>`.
pub(crate) const VIEWS: [&str; 8] = [
    "flamegraph",
    "top",
    "graph",
    "peek",
    "source",
    "traces",
    "tags",
    "message",
];

type Answer = Response<Full<Bytes>>;

/// The answer to `GET path?query`.
pub(crate) fn route(state: &State, path: &str, query: &str) -> Answer {
    let with_query = |to: &str| match query {
        "" => to.to_string(),
        q => format!("{to}?{q}"),
    };
    match path {
        "/" | "/ui" | "/ui/" => redirect(&with_query("/ui/flamegraph")),
        // Never kept: edits change what these answer.
        _ if path.starts_with("/api/message/") => {
            crate::message::http::get(state.message.as_ref(), path, query)
        }
        _ if path.starts_with("/api/") => {
            let key = format!("{path}?{query}");
            let kept = state.cache.get_or_compute(&key, || {
                let _one = one_at_a_time(state);
                let params = Params::parse(query);
                let selected = match &state.served.store {
                    Some(pane) => state.selections.resolve(pane.as_ref(), &params),
                    None => Ok(None),
                };
                let selected = match selected {
                    Ok(selected) => selected,
                    Err(e) => return json_answer(Err(e)),
                };
                let request = ApiRequest {
                    state: &state.served,
                    params,
                    selected,
                    has_message: state.message.is_some(),
                };
                request.answer(&path["/api/".len()..])
            });
            typed(kept.status, &kept.content_type, kept.body)
        }
        _ => match path.strip_prefix("/ui/") {
            Some(view) if VIEWS.contains(&view) => {
                typed(StatusCode::OK, "text/html; charset=utf-8", assets::PAGE)
            }
            Some(asset) => match assets::asset(asset) {
                Some((content_type, body)) => typed(StatusCode::OK, content_type, body),
                None => plain(StatusCode::NOT_FOUND, "no such page"),
            },
            None => plain(StatusCode::NOT_FOUND, "no such page"),
        },
    }
}

/// The lock that makes a large profile's reports run one at a time.
fn one_at_a_time(state: &State) -> Option<std::sync::MutexGuard<'_, ()>> {
    let large = state.served.profile.sample_count() > crate::state::LARGE_PROFILE_SAMPLES;
    large.then(|| state.one_report.lock().unwrap_or_else(|e| e.into_inner()))
}

/// A plain-text answer.
pub(crate) fn plain(status: StatusCode, text: &str) -> Answer {
    typed(status, "text/plain; charset=utf-8", text.to_string())
}

/// A kept answer: `body` as `content_type`.
fn keep(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Kept {
    Kept {
        status,
        content_type: content_type.to_string(),
        body: body.into(),
    }
}

fn plain_kept(status: StatusCode, text: &str) -> Kept {
    keep(status, "text/plain; charset=utf-8", text.to_string())
}

fn typed(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Answer {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .body(Full::new(body.into()))
        .expect("valid response")
}

fn redirect(to: &str) -> Answer {
    Response::builder()
        .status(StatusCode::FOUND)
        .header(header::LOCATION, to)
        .body(Full::new(Bytes::new()))
        .expect("valid response")
}

fn json_answer(result: Result<Value, WebError>) -> Kept {
    let (status, value) = match result {
        Ok(value) => (StatusCode::OK, value),
        Err(e) => (StatusCode::BAD_REQUEST, json!({ "error": e.to_string() })),
    };
    keep(status, "application/json", value.to_string())
}

/// The profile one answer reads: the served one, or that one with the
/// URL's label frames added.
enum Reading<'a> {
    Served(&'a ServedProfile),
    Labelled(ServedProfile),
}

impl std::ops::Deref for Reading<'_> {
    type Target = ServedProfile;

    fn deref(&self) -> &ServedProfile {
        match self {
            Reading::Served(p) => p,
            Reading::Labelled(p) => p,
        }
    }
}

/// The flame graph of `source`'s sample type `type_name`, or of the callers
/// of the functions `pivot` matches.
fn graph_of<S: ProfileSamples>(
    source: &S,
    type_name: &str,
    selection: &Selection,
    pivot: Option<&regex::Regex>,
) -> Result<analysis::FlameGraph, WebError> {
    let i = analysis::sample_index(source.profile(), Some(type_name))
        .map_err(|e| WebError::Analysis(e.to_string()))?;
    Ok(match pivot {
        Some(rx) => analysis::callers_graph(source, i, selection, rx),
        None => analysis::flame_graph(source, i, selection),
    })
}

/// `full` without the nodes narrower than `min_share` of its total, and
/// how many that leaves out.
fn pruned(full: analysis::FlameGraph, min_share: f64) -> (analysis::FlameGraph, usize) {
    let min_value = (full.total.unsigned_abs() as f64 * min_share) as i64;
    let graph = full.pruned(min_value.max(1));
    let left_out = full.nodes.len() - graph.nodes.len();
    (graph, left_out)
}

struct ApiRequest<'s> {
    state: &'s Served,
    params: Params,
    /// The store's selection the URL names, when it names one.
    selected: Option<Arc<Selected>>,
    /// Whether the message view has a message.
    has_message: bool,
}

impl ApiRequest<'_> {
    fn answer(&self, report: &str) -> Kept {
        match report {
            "meta" => json_answer(Ok(self.meta())),
            "flamegraph" => json_answer(self.flame_graph()),
            "top" => json_answer(self.top()),
            "peek" => json_answer(self.peek()),
            "source" => json_answer(self.source()),
            "tree" => json_answer(self.text_report(Self::tree_text)),
            "traces" => json_answer(self.text_report(Self::traces_text)),
            "tags" => json_answer(self.text_report(Self::tags_text)),
            "graph.svg" => self.graph_svg(),
            "graph.dot" => match self.graph_dot() {
                Ok(dot) => keep(StatusCode::OK, "text/vnd.graphviz; charset=utf-8", dot),
                Err(e) => plain_kept(StatusCode::BAD_REQUEST, &e.to_string()),
            },
            "store/labels" => json_answer(self.store_labels()),
            "store/series" => json_answer(self.store_series()),
            _ => plain_kept(StatusCode::NOT_FOUND, "no such report"),
        }
    }

    /// The profile the reports read, with `tagroot`'s label frames added.
    fn profile(&self) -> Reading<'_> {
        let p = self.served_profile();
        let keys = self.params.tag_root();
        if keys.is_empty() {
            return Reading::Served(p);
        }
        // Label frames change the samples: a model of them, for this answer.
        let mut model = p.to_model();
        analysis::add_label_nodes(&mut model, &keys, &[], "minimum");
        Reading::Labelled(model.into())
    }

    /// The profile served: the URL's selection of the store, else the
    /// server's own.
    fn served_profile(&self) -> &ServedProfile {
        match &self.selected {
            Some(selected) => &selected.profile,
            None => &self.state.profile,
        }
    }

    /// The profile and its base apart, when compared.
    fn compare(&self) -> Option<&Compare> {
        match &self.selected {
            Some(selected) => selected.compare.as_ref(),
            None => self.state.compare.as_ref(),
        }
    }

    fn title(&self) -> &str {
        match &self.selected {
            Some(selected) => &selected.title,
            None => &self.state.title,
        }
    }

    /// A compared profile with the URL's label frames added.
    fn with_label_roots<'p>(&self, p: &'p Profile) -> Cow<'p, Profile> {
        let keys = self.params.tag_root();
        if keys.is_empty() {
            return Cow::Borrowed(p);
        }
        let mut p = p.clone();
        analysis::add_label_nodes(&mut p, &keys, &[], "minimum");
        Cow::Owned(p)
    }

    fn index(&self, p: &ServedProfile) -> Result<usize, WebError> {
        analysis::sample_index(p.header(), self.params.get("si")).map_err(|e| WebError::Param {
            name: "si".into(),
            detail: e.to_string(),
        })
    }

    /// What the page needs before any report: sample types, label keys
    /// and values for the pickers, which views have something to show.
    fn meta(&self) -> Value {
        let served = self.served_profile();
        let p = served.header();
        let types: Vec<Value> = p
            .sample_type
            .iter()
            .map(|t| json!({ "type": p.string(t.type_), "unit": p.string(t.unit) }))
            .collect();
        let default = analysis::sample_index(p, None).ok();
        let labels: Vec<Value> = string_labels(served)
            .into_iter()
            .map(|(key, values)| json!({ "key": key, "values": values }))
            .collect();
        json!({
            "title": self.title(),
            "sample_types": types,
            "default_index": default,
            "labels": labels,
            "base": self.compare().map(|c| c.base_title.as_str()),
            "message": self.has_message,
            "message_only": self.state.message_only,
            "store": self.state.store.as_ref().map(|pane| pane.initial()),
        })
    }

    fn flame_graph(&self) -> Result<Value, WebError> {
        let selection = self.params.selection()?;
        let pivot = self.params.regex("pivot")?;
        // The profile the reports read, its label frames added once.
        let p = self.profile();
        let i = self.index(&p)?;
        let t = &p.header().sample_type[i];
        let type_name = p.header().string(t.type_).to_string();
        // Widths are the profile's own; with a base, each node's value in
        // the base too, for the colours of the change.
        // `of=base`: the base's own graph, to draw beside the profile's.
        let of_base = self.params.get("of") == Some("base");
        let graph = |q: &Profile| {
            let labelled = self.with_label_roots(q);
            graph_of(&*labelled, &type_name, &selection, pivot.as_ref())
        };
        let min_share = self.params.min_share()?;
        let base = match (self.compare(), of_base) {
            (Some(compare), false) => Some(graph(&compare.base)?),
            _ => None,
        };
        let (graph, left_out) = match (self.compare(), of_base, &pivot) {
            (Some(compare), true, _) => pruned(graph(&compare.base)?, min_share),
            (Some(compare), false, _) => pruned(graph(&compare.new)?, min_share),
            (None, _, Some(_)) => pruned(
                graph_of(&*p, &type_name, &selection, pivot.as_ref())?,
                min_share,
            ),
            // The served profile alone: never a whole tree in memory.
            (None, _, None) => {
                let i = self.index(&p)?;
                analysis::flame_graph_at_least(&*p, i, &selection, min_share)
            }
        };
        let base_values = base.as_ref().map(|b| graph.values_in(b));
        let column = |f: fn(&analysis::FlameNode) -> i64| -> Vec<i64> {
            graph.nodes.iter().map(f).collect()
        };
        Ok(json!({
            "sample_type": p.header().string(t.type_),
            "unit": p.header().string(t.unit),
            "total": graph.total,
            "base_total": base.as_ref().map(|b| b.total),
            "names": graph.names,
            // -1: a root.
            "parent": graph.nodes.iter().map(|n| match n.parent {
                analysis::NO_PARENT => -1,
                p => i64::from(p),
            }).collect::<Vec<i64>>(),
            "name": graph.nodes.iter().map(|n| n.name).collect::<Vec<u32>>(),
            "value": column(|n| n.value),
            "self": column(|n| n.self_value),
            "base": base_values,
            "nodes_left_out": left_out,
            "filters": selection.active_filters(),
            "unmatched": analysis::filters_matching_nothing(&*p, &selection),
        }))
    }

    fn top(&self) -> Result<Value, WebError> {
        let selection = self.params.selection()?;
        let p = self.profile();
        let i = self.index(&p)?;
        let options = TopOptions {
            order: match self.params.get("sort") {
                Some("cum") => Order::Cum,
                _ => Order::Flat,
            },
            node_fraction: self.params.tree_options()?.node_fraction,
            ..TopOptions::default()
        };
        let report = analysis::top_report(&*p, i, &selection, &options);
        let mut sum = 0i64;
        let rows: Vec<Value> = report
            .rows
            .iter()
            .map(|r| {
                sum = sum.saturating_add(r.flat);
                json!({
                    "name": r.function,
                    "flat": report.format_value(r.flat),
                    "flat_pct": analysis::report::percentage(r.flat, report.total).trim(),
                    "sum_pct": analysis::report::percentage(sum, report.total).trim(),
                    "cum": report.format_value(r.cum),
                    "cum_pct": analysis::report::percentage(r.cum, report.total).trim(),
                    "flat_value": r.flat,
                    "cum_value": r.cum,
                    "inline": r.inline.label(),
                })
            })
            .collect();
        Ok(json!({
            "header": report.header(p.header(), &selection.active_filters()),
            "rows": rows,
            "unmatched": analysis::filters_matching_nothing(&*p, &selection),
        }))
    }

    /// pprof's peek view: the nodes matching `f`, which also focuses.
    fn peek(&self) -> Result<Value, WebError> {
        let rx = match self.params.regex("f")? {
            Some(rx) => rx,
            None => match self.heaviest_functions()? {
                Some(rx) => rx,
                None => return Ok(json!({ "text": "", "note": "Nothing to peek at." })),
            },
        };
        self.text_report(|_, p, i, selection| {
            let peek = analysis::peek(p, i, selection, &rx);
            if peek.nodes.is_empty() {
                return Err(WebError::Analysis(format!(
                    "no matches found for regexp: {}",
                    rx.as_str()
                )));
            }
            Ok(peek.text(p.header(), &selection.active_filters()))
        })
    }

    /// Until a search narrows it, peek shows the heaviest functions (by
    /// flat, as `top` lists them first), as pprof's peek view does.
    fn heaviest_functions(&self) -> Result<Option<regex::Regex>, WebError> {
        const SHOWN: usize = 10;
        let selection = self.params.selection()?;
        let p = self.profile();
        let i = self.index(&p)?;
        let report = analysis::top_report(&*p, i, &selection, &TopOptions::default());
        let names: Vec<String> = report
            .rows
            .iter()
            .take(SHOWN)
            .map(|r| regex::escape(&r.function))
            .collect();
        if names.is_empty() {
            return Ok(None);
        }
        let rx = regex::Regex::new(&format!("^(?:{})$", names.join("|")))
            .map_err(|e| WebError::Analysis(e.to_string()))?;
        Ok(Some(rx))
    }

    /// pprof's source view (`-list`): the functions matching `f`, read
    /// from the allowed source path only.
    fn source(&self) -> Result<Value, WebError> {
        let Some(rx) = self.params.regex("f")? else {
            return Ok(json!({ "text": "", "note": "Search for the functions to list." }));
        };
        let mut files = analysis::DiskSources {
            confined: true,
            ..self.state.sources.clone()
        };
        self.text_report(|_, p, i, selection| {
            let missing = analysis::MissingSource::Placeholders;
            let files: &mut dyn analysis::SourceFiles = &mut files;
            analysis::source_listing_with(p, i, selection, (&rx, files), missing).ok_or_else(|| {
                WebError::Analysis(format!("no matches found for regexp: {}", rx.as_str()))
            })
        })
    }

    fn tree_text(
        &self,
        p: &ServedProfile,
        i: usize,
        selection: &Selection,
    ) -> Result<String, WebError> {
        let tree = analysis::tree(p, i, selection, &self.params.tree_options()?);
        Ok(tree.text(p.header(), &selection.active_filters()))
    }

    fn traces_text(
        &self,
        p: &ServedProfile,
        i: usize,
        selection: &Selection,
    ) -> Result<String, WebError> {
        let traces = analysis::traces(p, i, selection);
        Ok(analysis::traces_text(
            p.header(),
            &analysis::report::label_report(p, i, selection),
            &traces,
        ))
    }

    fn tags_text(
        &self,
        p: &ServedProfile,
        i: usize,
        selection: &Selection,
    ) -> Result<String, WebError> {
        let tags = analysis::tags(p, i, selection);
        let header = p.header();
        let unit = header.string(header.sample_type[i].unit);
        Ok(analysis::tags_text(
            &tags,
            (unit, selection.value_ratio()),
            analysis::report::label_report(p, i, selection).total,
        ))
    }

    /// A report printed as the command line prints it, as `{text}`.
    fn text_report(
        &self,
        mut report: impl FnMut(&Self, &ServedProfile, usize, &Selection) -> Result<String, WebError>,
    ) -> Result<Value, WebError> {
        let selection = self.params.selection()?;
        let p = self.profile();
        let i = self.index(&p)?;
        let text = report(self, &p, i, &selection)?;
        Ok(json!({
            "text": text,
            "unmatched": analysis::filters_matching_nothing(&*p, &selection),
        }))
    }

    fn graph_dot(&self) -> Result<String, WebError> {
        let selection = self.params.selection()?;
        let p = self.profile();
        let i = self.index(&p)?;
        let options = self.params.tree_options()?;
        Ok(analysis::call_graph_dot(&*p, i, &selection, &options))
    }

    fn graph_svg(&self) -> Kept {
        let dot = match self.graph_dot() {
            Ok(dot) => dot,
            Err(e) => return plain_kept(StatusCode::BAD_REQUEST, &e.to_string()),
        };
        match crate::graphviz::dot_to_svg(&dot) {
            Ok(svg) => keep(StatusCode::OK, "image/svg+xml", svg),
            Err(e) => plain_kept(StatusCode::SERVICE_UNAVAILABLE, &e.to_string()),
        }
    }
}

impl ApiRequest<'_> {
    /// The label keys a store's selector can name, with their values.
    fn store_labels(&self) -> Result<Value, WebError> {
        let pane = self.store()?;
        let labels = pane.labels().map_err(WebError::Analysis)?;
        let labels: Vec<Value> = labels
            .into_iter()
            .map(|(key, values)| json!({ "key": key, "values": values }))
            .collect();
        Ok(json!({ "labels": labels }))
    }

    /// Totals per step of the selection, grouped by `by`.
    fn store_series(&self) -> Result<Value, WebError> {
        let pane = self.store()?;
        let selection = match crate::store::fields(&self.params) {
            Some((selection, _)) => selection,
            None => pane.initial(),
        };
        let get = |name: &str| self.params.get(name).unwrap_or("");
        let step = match get("step") {
            "" => "1m",
            step => step,
        };
        let series = pane
            .series(&selection, get("si"), step, get("by"))
            .map_err(WebError::Analysis)?;
        serde_json::to_value(series).map_err(|e| WebError::Analysis(e.to_string()))
    }

    fn store(&self) -> Result<&dyn StorePane, WebError> {
        self.state
            .store
            .as_deref()
            .ok_or_else(|| WebError::Analysis("this server reads no store".into()))
    }
}

/// Each string label key, with its values (the 200 most frequent first):
/// what the label pickers offer. One pass over the labels alone.
fn string_labels(source: &ServedProfile) -> Vec<(String, Vec<String>)> {
    let mut counts: HashMap<(i64, i64), u64> = HashMap::new();
    let labels_only = Fields::only(&[sample::LABEL]);
    let mut buffer = Sample::default();
    for i in 0..source.sample_count() {
        let sample = source.sample_fields(i, labels_only, &mut buffer);
        for label in sample.label.iter().filter(|l| l.str != 0) {
            *counts.entry((label.key, label.str)).or_default() += 1;
        }
    }
    let p = source.header();
    let mut by_key: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
    for ((key, value), count) in counts {
        let entry = by_key.entry(p.string(key).to_string()).or_default();
        entry.push((count, p.string(value).to_string()));
    }
    by_key
        .into_iter()
        .map(|(key, mut values)| {
            values.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            (key, values.into_iter().take(200).map(|(_, v)| v).collect())
        })
        .collect()
}
