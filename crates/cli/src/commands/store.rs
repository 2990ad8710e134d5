//! `protoprof store add`, `get`, `series` and `compact`, and the profile
//! `--store` reads for every report.

use std::path::Path;

use protoprof_codec::AutoView;
use protoprof_model_otlp::opentelemetry::proto::common::v1::KeyValue;
use protoprof_model_otlp::opentelemetry::proto::profiles::v1development::{
    self as dev, ProfilesData as DevelopmentData,
};
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_pprof_bridge::{pprof_to_development, ProfileId, ToDevelopmentOptions};
use protoprof_store::{ProfileContext, Query, SampleEvents, Store, StoreError, StoreWriter};

use crate::cli::{
    InputArgs, QueryArgs, QueryFormat, StoreAddArgs, StoreCommand, StoreGetArgs, StoreSeriesArgs,
    Target,
};
use crate::error::{CliError, Context, Result};
use crate::io::{self, shown};

/// `samples` rows gathered before a flush: bounds `store add`'s memory.
const FLUSH_ROWS: usize = 4_000_000;

pub fn run(command: &StoreCommand) -> Result<u8> {
    match command {
        StoreCommand::Add(args) => add(args),
        StoreCommand::Get(args) => get(args),
        StoreCommand::Series(args) => series(args),
        StoreCommand::Compact { store } => compact(store),
        StoreCommand::Check { store, repair } => check(store, *repair),
        StoreCommand::Executor(args) => super::store_executor::run(args),
    }
}

fn store_error(store: &Path) -> impl Fn(StoreError) -> CliError + '_ {
    move |e| match &e {
        StoreError::Query(message) => CliError::failure(message.clone()),
        StoreError::NotAStore(_) => CliError::failure(e.to_string()),
        other => CliError::failure(format!("{}: {other}", store.display())),
    }
}

fn add(args: &StoreAddArgs) -> Result<u8> {
    let defaults = io::resource_attributes(&args.resources)?;
    let mut writer = StoreWriter::new(&args.store);
    // A profile the store holds (or one added before in this run) is not
    // added again: adding a file twice counts it once.
    let mut stored = protoprof_store::stored_ids(&args.store);
    let mut added = 0;
    // Files are read and converted a few at once, on threads of their own,
    // and added in the order given.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    for paths in args.files.chunks(threads) {
        let read = protoprof_model_meta::threads::map_in_order(paths, threads, |p| profiles_of(p));
        for (path, profiles) in paths.iter().zip(read) {
            for (at, profile, mut context) in profiles? {
                give_resource(&mut context, &defaults, args.service.as_deref());
                let refused =
                    |e: StoreError| CliError::invalid(format!("{}{at}: {e}", shown(path)));
                // Added either way: the flush leaves out what the store holds.
                let id = writer.add(&profile, &context).map_err(refused)?;
                let what = match stored.insert(id) {
                    true => format!("{} samples", profile.sample.len()),
                    false => "already stored".to_string(),
                };
                io::print(&format!(
                    "{}\t{}{at}\t{}\t{what}\n",
                    protoprof_store::hex(&id),
                    shown(path),
                    context.stored_service_name(),
                ))?;
                added += 1;
                if writer.pending_rows() >= FLUSH_ROWS {
                    writer.flush().map_err(store_error(&args.store))?;
                }
            }
        }
    }
    writer.flush().map_err(store_error(&args.store))?;
    if added == 0 {
        return Err(CliError::failure("no profile in the inputs"));
    }
    Ok(0)
}

/// The `--resource` attributes `defaults` added where the profile's
/// resource does not say them, and its service name taken
/// ([`take_service_name`], `service` where it names none).
fn give_resource(context: &mut ProfileContext, defaults: &[KeyValue], service: Option<&str>) {
    for kv in defaults {
        if !context
            .resource_attributes
            .iter()
            .any(|(k, _)| *k == kv.key)
        {
            context
                .resource_attributes
                .push((kv.key.clone(), attribute_text(kv, &[])));
        }
    }
    take_service_name(context, service);
}

/// `service.name` moved from the attributes into its field; `fallback`
/// (`--service`) where the resource names none.
fn take_service_name(context: &mut ProfileContext, fallback: Option<&str>) {
    if let Some(at) = context
        .resource_attributes
        .iter()
        .position(|(k, _)| k == "service.name")
    {
        context.service_name = context.resource_attributes.remove(at).1;
    }
    if context.service_name.is_empty() {
        context.service_name = fallback.unwrap_or_default().to_string();
    }
}

/// The pprof profiles of `path` (pprof, or each OTLP profile converted),
/// each with where it is in the file and its resource.
fn profiles_of(path: &Path) -> Result<Vec<(String, Profile, ProfileContext)>> {
    profiles_in(path, io::read_input(path)?)
}

/// [`profiles_of`] the `bytes` read from `path`.
fn profiles_in(path: &Path, bytes: Vec<u8>) -> Result<Vec<(String, Profile, ProfileContext)>> {
    let decoded = io::decode_view(path, bytes, None)?;
    if let AutoView::Pprof(view) = decoded {
        return Ok(vec![(
            String::new(),
            view.message.into_profile(),
            ProfileContext::default(),
        )]);
    }
    let decoded = decoded.without_otlp_views();
    let AutoView::Other(other) = &decoded else {
        return Err(CliError::failure(format!("{}: not a profile", shown(path))));
    };
    let message = &*other.decoded.message;
    if let Some(mut data) = io::development_data(message) {
        let samples = protoprof_pprof_bridge::data_samples(&data);
        if let Some(sent) = sent_pprof(path, &data, &samples) {
            return Ok(vec![sent]);
        }
        drop(samples);
        // The contexts are read after the conversion, which may leave out
        // samples the bridge refuses: each sample's events stay beside it.
        let each = io::development_each(path, &mut data)?;
        let contexts = development_contexts(&data, &protoprof_pprof_bridge::data_samples(&data));
        return Ok(with_contexts(each, contexts));
    }
    if let Some(mut data) = io::otlp_data(message) {
        let each = io::experimental_each(path, &mut data)?;
        return Ok(with_contexts(each, experimental_contexts(&data)));
    }
    Err(CliError::failure(format!(
        "{}: is {}, not a profile",
        shown(path),
        message.descriptor_dyn().full_name()
    )))
}

/// The one pprof profile `data` holds when it is in the shape pprof ->
/// OTLP writes (one Profile per pprof sample type, as `convert --to otlp`
/// and `send` write it), with its resource and the first Profile's id:
/// stored as the pprof profile that was sent, so that one pprof is one
/// stored profile, not one per sample type. `None` for other data, and
/// for data the bridge refuses so (samples naming entries that do not
/// exist): converted profile by profile, the rest is kept, as from
/// elsewhere.
fn sent_pprof(
    path: &Path,
    data: &DevelopmentData,
    samples: &protoprof_pprof_bridge::DevelopmentSource,
) -> Option<Located> {
    let converted = protoprof_pprof_bridge::development_to_sent_pprof(data, samples).ok()??;
    io::print_bridge_warnings(path, &converted.warnings);
    let resource = &data.resource_profiles[0];
    let scope = &resource.scope_profiles[0];
    let context = ProfileContext {
        resource_attributes: texts(attributes_of(resource, scope), data),
        profile_id: scope.profiles[0].profile_id.as_slice().try_into().ok(),
        ..Default::default()
    };
    Some((String::new(), converted.value, context))
}

/// `receive --store`: each accepted request's profiles written to the store
/// and synced before the request is answered; requests that arrive while
/// a flush runs are written together by the next one (group commit).
struct StoreKeeper {
    dir: std::path::PathBuf,
    group: protoprof_store::GroupWriter,
}

/// The keeper `receive --store DIR` answers through.
pub fn keeper(dir: &Path) -> std::sync::Arc<dyn protoprof_net::receive::Keeper> {
    std::sync::Arc::new(StoreKeeper {
        dir: dir.to_path_buf(),
        group: protoprof_store::GroupWriter::new(dir, FLUSH_ROWS),
    })
}

impl protoprof_net::receive::Keeper for StoreKeeper {
    fn keep(
        &self,
        request: &protoprof_net::receive::Accepted,
    ) -> std::result::Result<String, String> {
        let (dictionary, mut profiles) = match request.read.with_parts(converted) {
            Some(Converted::Sent(sent)) => (None, vec![sent]),
            Some(Converted::Shared(dictionary, profiles)) => (Some(dictionary), profiles),
            // What the bridge refuses whole (samples naming entries that
            // do not exist) is read again as files are, to convert the rest.
            None => {
                let profiles = profiles_in(Path::new("request"), request.body.to_vec());
                (None, profiles.map_err(|e| e.message)?)
            }
        };
        for (_, _, context) in &mut profiles {
            take_service_name(context, None);
        }
        let each: Vec<_> = profiles.iter().map(|(_, p, c)| (p, c)).collect();
        let written = match dictionary {
            // The profiles as pprof are let go of once their rows are
            // made, before waiting for the flush: a request holds less.
            Some(dictionary) => {
                let pending = self.group.rows_sharing(&dictionary, &each);
                drop(each);
                drop(profiles);
                drop(dictionary);
                pending.and_then(|pending| self.group.commit(pending))
            }
            None => self.group.write(&each),
        };
        match written {
            Ok(_) => Ok(self.dir.display().to_string()),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A profile, where it is in its file or message, and its resource.
type Located = (String, Profile, ProfileContext);

/// A request's profiles as pprof, to store.
enum Converted {
    /// The one pprof profile a request in pprof's shape was made from.
    Sent(Located),
    /// Each OTLP profile as pprof, all sharing one dictionary.
    Shared(Profile, Vec<Located>),
}

/// The profiles of a request the receiver read and validated, converted
/// to pprof: the pprof profile that was sent ([`sent_pprof`]), or each
/// OTLP profile sharing one dictionary, each with its resource; `None`
/// when the bridge refuses the request whole.
fn converted(
    data: &DevelopmentData,
    samples: &protoprof_pprof_bridge::DevelopmentSource,
) -> Option<Converted> {
    if let Some(sent) = sent_pprof(Path::new("request"), data, samples) {
        return Some(Converted::Sent(sent));
    }
    let shared = protoprof_pprof_bridge::development_to_pprof_shared(data, samples).ok()?;
    io::print_bridge_warnings(Path::new("request"), &shared.warnings);
    let shared = shared.value;
    let each = with_contexts(shared.profiles, development_contexts(data, samples));
    Some(Converted::Shared(shared.dictionary, each))
}

fn with_contexts(
    each: Vec<(String, Profile)>,
    contexts: Vec<ProfileContext>,
) -> Vec<(String, Profile, ProfileContext)> {
    each.into_iter()
        .zip(contexts)
        .map(|((at, p), c)| (format!(" {at}"), p, c))
        .collect()
}

/// Each v1development profile's resource and scope attributes, id and
/// sample events (its samples read from `samples`), in the order the
/// bridge converts them.
fn development_contexts(
    data: &DevelopmentData,
    samples: &protoprof_pprof_bridge::DevelopmentSource,
) -> Vec<ProfileContext> {
    let mut out = Vec::new();
    for rp in &data.resource_profiles {
        for sp in &rp.scope_profiles {
            for p in &sp.profiles {
                out.push(ProfileContext {
                    resource_attributes: texts(attributes_of(rp, sp), data),
                    profile_id: p.profile_id.as_slice().try_into().ok(),
                    sample_events: sample_events(samples, out.len()),
                    ..Default::default()
                });
            }
        }
    }
    out
}

/// The events of each sample of profile `profile` of `samples`: its
/// `timestamps_unix_nano`, and its values where they pair with them.
fn sample_events(
    samples: &protoprof_pprof_bridge::DevelopmentSource,
    profile: usize,
) -> Vec<SampleEvents> {
    let mut buffer = Default::default();
    let each = (0..samples.sample_count(profile)).map(|n| {
        let s = samples.sample(profile, n, &mut buffer);
        let paired = s.values.len() == s.timestamps_unix_nano.len();
        let values = if paired { s.values.clone() } else { Vec::new() };
        events_of(&s.timestamps_unix_nano, values)
    });
    when_any(each.collect())
}

/// A sample's events: its times and the values paired with them. Times
/// past what INT64 holds (the year 2262) are kept as its largest value,
/// as pprof's times are.
fn events_of(timestamps_unix_nano: &[u64], values: Vec<i64>) -> SampleEvents {
    let time = |t: &u64| i64::try_from(*t).unwrap_or(i64::MAX);
    SampleEvents {
        timestamps_unix_nano: timestamps_unix_nano.iter().map(time).collect(),
        values,
    }
}

/// `events`, or none when no sample has any.
fn when_any(mut events: Vec<SampleEvents>) -> Vec<SampleEvents> {
    if events.iter().all(|e| e.timestamps_unix_nano.is_empty()) {
        events.clear();
    }
    events
}

/// Each v1experimental container's resource and scope attributes, id
/// and sample events: its samples' times (their values are per sample
/// type, not per event).
fn experimental_contexts(
    data: &protoprof_model_otlp::opentelemetry::proto::profiles::v1experimental::ProfilesData,
) -> Vec<ProfileContext> {
    let mut out = Vec::new();
    for rp in &data.resource_profiles {
        for sp in &rp.scope_profiles {
            let scope = sp.scope.as_ref().map_or(&[][..], |s| &s.attributes[..]);
            for c in &sp.profiles {
                let resource = rp.resource.as_ref().map_or(&[][..], |r| &r.attributes[..]);
                let samples = c.profile.as_ref().map_or(&[][..], |p| &p.sample[..]);
                let events = samples
                    .iter()
                    .map(|s| events_of(&s.timestamps_unix_nano, Vec::new()));
                let attributes = resource.iter().chain(scope);
                out.push(ProfileContext {
                    resource_attributes: attributes
                        .map(|kv| (kv.key.clone(), attribute_text(kv, &[])))
                        .collect(),
                    profile_id: c.profile_id.as_slice().try_into().ok(),
                    sample_events: when_any(events.collect()),
                    ..Default::default()
                });
            }
        }
    }
    out
}

/// A v1development profile's resource and scope attributes, but the
/// scope's `pprof.scope.*`, which say how the bridge laid a pprof profile
/// out, not where it came from.
fn attributes_of<'a>(
    resource: &'a dev::ResourceProfiles,
    scope: &'a dev::ScopeProfiles,
) -> impl Iterator<Item = &'a KeyValue> {
    let of_resource = resource
        .resource
        .as_ref()
        .map_or(&[][..], |r| &r.attributes[..]);
    let of_scope = scope.scope.as_ref().map_or(&[][..], |s| &s.attributes[..]);
    let layout = |kv: &&KeyValue| kv.key.starts_with("pprof.scope.");
    of_resource
        .iter()
        .chain(of_scope.iter().filter(move |kv| !layout(kv)))
}

/// Attributes as the store keeps them: key and text, string indices
/// resolved against `data`'s dictionary.
fn texts<'a>(
    attributes: impl Iterator<Item = &'a KeyValue>,
    data: &DevelopmentData,
) -> Vec<(String, String)> {
    let strings = data
        .dictionary
        .as_ref()
        .map_or(&[][..], |d| &d.string_table[..]);
    attributes
        .map(|kv| (kv.key.clone(), attribute_text(kv, strings)))
        .collect()
}

/// An attribute's value as text, as users write it (arrays and key-value
/// lists as JSON, bytes as base64).
fn attribute_text(kv: &KeyValue, strings: &[String]) -> String {
    protoprof_pprof_bridge::attribute_value_text(kv.value.as_ref(), strings)
}

fn get(args: &StoreGetArgs) -> Result<u8> {
    let id = protoprof_store::parse_hex(&args.profile_id).ok_or_else(|| {
        CliError::failure(format!(
            "--profile-id {:?}: expected 32 hex digits, as `store add` prints",
            args.profile_id
        ))
    })?;
    let store = open_on(&args.store, args.cluster.as_deref())?;
    let selection = store.get(id).map_err(store_error(&args.store))?;
    let gzip = args.gzip || args.output.extension().is_some_and(|e| e == "gz");
    let bytes = match args.to {
        Target::Pprof => io::encode_as(&selection.profile, args.format, gzip)?,
        Target::Otlp => {
            let resource = store.resource(id).map_err(store_error(&args.store))?;
            let options = ToDevelopmentOptions {
                resource_attributes: resource
                    .iter()
                    .map(|(k, v)| io::string_attribute(k, v))
                    .collect(),
                profile_id: ProfileId::Fixed(id),
                ..Default::default()
            };
            let mut converted = pprof_to_development(&selection.profile, &options)
                .context(format!("profile {}", args.profile_id))?;
            with_events(&mut converted.value, &selection.events)
                .context(format!("profile {}", args.profile_id))?;
            io::encode_as(&converted.value, args.format, gzip)?
        }
    };
    io::write_output(&args.output, &bytes)?;
    Ok(0)
}

/// `data` (a stored profile as OTLP, one Profile per sample type, each
/// with every pprof sample in order) with each sample's stored `events`
/// back: its times, and its values where each time has one (its value
/// stays what the reports count).
fn with_events(data: &mut DevelopmentData, events: &[SampleEvents]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    let profiles = (data.resource_profiles.iter_mut())
        .flat_map(|r| r.scope_profiles.iter_mut())
        .flat_map(|s| s.profiles.iter_mut());
    for p in profiles {
        if p.samples.len() != events.len() {
            let (samples, events) = (p.samples.len(), events.len());
            return Err(CliError::failure(format!(
                "{samples} samples as OTLP, stored events for {events}"
            )));
        }
        for (s, e) in p.samples.iter_mut().zip(events) {
            let times = e.timestamps_unix_nano.iter().map(|&t| t.max(0) as u64);
            let times: Vec<u64> = times.collect();
            let value: i64 = s.values.iter().sum();
            // OTLP pairs values with times or gives times alone (each one
            // event); times that tell neither (stored from a sample whose
            // values did not pair with them) are left out, but for one.
            match (e.values.is_empty(), times.len() as i64 == value) {
                _ if times.is_empty() => {}
                (false, _) => s.values = e.values.clone(),
                (true, true) => s.values.clear(),
                (true, false) if times.len() == 1 => {}
                (true, false) => continue,
            }
            s.timestamps_unix_nano = times;
        }
    }
    Ok(())
}

/// The profile `--store` and its selection choose, merged: what the
/// reports read instead of files.
pub fn selected(input: &InputArgs) -> Result<Profile> {
    let Some(dir) = &input.store else {
        return Err(CliError::failure("no --store"));
    };
    let store = open_on(dir, input.cluster.as_deref())?
        .strict(input.strict)
        .rollups(!input.no_rollups);
    let selection = (
        input.select.as_deref(),
        input.from.as_deref(),
        input.to.as_deref(),
    );
    let selection = select_from(&store, selection, &input.sample_type);
    warn_skipped(&store);
    let selection = selection?;
    if input.explain {
        eprint!("{}", explained(&selection.reads));
    }
    Ok(selection.profile)
}

/// The profiles a selection of `store` gives, merged.
pub(crate) fn select_from(
    store: &Store,
    selection: (Option<&str>, Option<&str>, Option<&str>),
    sample_types: &[String],
) -> Result<protoprof_store::Selection> {
    let query = store_query(selection, sample_types)?;
    let dir = store.root();
    store.select(&query).map_err(store_error(dir))
}

/// A warning for each file of `store` its reads went without.
pub(crate) fn warn_skipped(store: &Store) {
    for file in store.take_warnings() {
        io::warn(
            file,
            "read without this file, which does not read (--strict makes it an error; \
             store check --repair moves it aside)",
        );
    }
}

/// What `--explain` says: a line per table read.
fn explained(reads: &[protoprof_store::TableRead]) -> String {
    if reads.is_empty() {
        return "explain: no file read here (a cluster's executors read them)\n".into();
    }
    let count = |n: usize, (one, many): (&str, &str)| match n {
        1 => format!("1 {one}"),
        n => format!("{n} {many}"),
    };
    let mut out = String::new();
    for read in reads {
        out.push_str(&format!(
            "explain: {}: {}, {} ({}), {} read\n",
            read.table,
            count(read.queries, ("query", "queries")),
            count(read.files, ("file", "files")),
            size(read.file_bytes),
            size(read.bytes_read)
        ));
    }
    out
}

/// `bytes` as people read sizes: `812 B`, `41.2 kB`, `5.3 MB`.
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", bytes as f64 / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", bytes as f64 / 1e6),
        _ => format!("{:.1} GB", bytes as f64 / 1e9),
    }
}

/// The store at `dir`, its queries run here or on `--cluster`.
pub(crate) fn open_on(dir: &Path, cluster: Option<&str>) -> Result<Store> {
    let engine = match cluster {
        Some(url) => protoprof_store::Engine::cluster(url)
            .map_err(|e| CliError::failure(format!("--{e}")))?,
        None => protoprof_store::Engine::Local,
    };
    Store::open_on(dir, &engine).map_err(store_error(dir))
}

/// The query `--select`, `--from`, `--to` and `--sample-type` make.
pub(crate) fn store_query(
    (select, from, to): (Option<&str>, Option<&str>, Option<&str>),
    sample_types: &[String],
) -> Result<Query> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64);
    let time = |option: &str, text: Option<&str>| -> Result<Option<i64>> {
        text.map(|t| protoprof_store::parse_time(t, now))
            .transpose()
            .map_err(|e| CliError::failure(format!("--{option}: {e}")))
    };
    let query = Query {
        matchers: protoprof_store::parse_selector(select.unwrap_or(""))
            .map_err(|e| CliError::failure(format!("--select: {e}")))?,
        from: time("from", from)?,
        to: time("to", to)?,
        sample_types: sample_types.to_vec(),
        profile_id: None,
        each_sample: false,
    };
    if let (Some(f), Some(t)) = (query.from, query.to) {
        if f >= t {
            return Err(CliError::failure(format!(
                "--from {} is not before --to {}",
                from.unwrap_or_default(),
                to.unwrap_or_default()
            )));
        }
    }
    Ok(query)
}

/// `protoprof store compact`: one line of what it merged.
fn compact(dir: &Path) -> Result<u8> {
    Store::open(dir).map_err(store_error(dir))?;
    let done = protoprof_store::compact(dir).map_err(store_error(dir))?;
    io::print(&format!(
        "{}: {} partitions compacted: {} files into {}, {} rows into {}\n",
        dir.display(),
        done.partitions,
        done.files.0,
        done.files.1,
        done.rows.0,
        done.rows.1
    ))?;
    let rolled_up = [(done.rollups, "days"), (done.spans, "spans of days")];
    for (count, what) in rolled_up.into_iter().filter(|(count, _)| *count > 0) {
        let line = format!("{}: {count} {what} of a service rolled up\n", dir.display());
        io::print(&line)?;
    }
    if !done.start_bounds_reads {
        io::print(&format!(
            "{}: some samples lie past their partition's hour (written before such samples \
             were kept apart): --from cannot skip the partitions before it\n",
            dir.display()
        ))?;
    }
    Ok(0)
}

/// `protoprof store check`: a line per problem, then one of what was
/// read; exit 1 while a problem is left.
fn check(dir: &Path, repair: bool) -> Result<u8> {
    Store::open(dir).map_err(store_error(dir))?;
    let checked = protoprof_store::check(dir, repair).map_err(store_error(dir))?;
    let mut out = String::new();
    for bad in &checked.bad_files {
        out.push_str(&format!("{}: {}", bad.path.display(), bad.problem));
        match &bad.moved_to {
            Some(to) => out.push_str(&format!("; moved to {}\n", to.display())),
            None => out.push('\n'),
        }
    }
    for dangling in &checked.dangling {
        out.push_str(&format!("{}: {dangling}\n", dir.display()));
    }
    let moved = checked
        .bad_files
        .iter()
        .filter(|b| b.moved_to.is_some())
        .count();
    let left = checked.bad_files.len() - moved;
    let references = match (left, checked.dangling.len()) {
        (1.., _) => "references not looked up while a file is unreadable (--repair moves them)",
        (0, 0) => "every reference found",
        (0, _) => "dangling references above",
    };
    out.push_str(&format!(
        "{}: {} files read, {} unreadable, {} moved aside; {references}\n",
        dir.display(),
        checked.files,
        checked.bad_files.len(),
        moved
    ));
    io::print(&out)?;
    Ok(u8::from(left > 0 || !checked.dangling.is_empty()))
}

/// `protoprof store series`: totals per step.
fn series(args: &StoreSeriesArgs) -> Result<u8> {
    let selection = (
        args.select.as_deref(),
        args.from.as_deref(),
        args.to.as_deref(),
    );
    let series = protoprof_store::SeriesQuery {
        query: store_query(selection, &args.sample_type)?,
        step_nanos: protoprof_store::parse_step(&args.step)
            .map_err(|e| CliError::failure(format!("--step: {e}")))?,
        group_by: args.group_by.clone(),
        function: args.function.clone(),
    };
    let store = open_on(&args.store, args.cluster.as_deref())?.rollups(!args.no_rollups);
    let batches = store.series(&series).map_err(store_error(&args.store))?;
    answer(&batches, args.format, Path::new("-"), &args.store)
}

/// Writes `batches` as `format` to `output`.
fn answer(
    batches: &[protoprof_store::RecordBatch],
    format: QueryFormat,
    output: &Path,
    store: &Path,
) -> Result<u8> {
    let format = match format {
        QueryFormat::Table => protoprof_store::SqlOutput::Table,
        QueryFormat::Csv => protoprof_store::SqlOutput::Csv,
        QueryFormat::Json => protoprof_store::SqlOutput::Json,
        QueryFormat::Parquet => protoprof_store::SqlOutput::Parquet,
    };
    if format == protoprof_store::SqlOutput::Parquet && output == Path::new("-") {
        return Err(CliError::failure(
            "--format parquet writes a file: name it with -o",
        ));
    }
    let mut bytes = Vec::new();
    protoprof_store::write_answer(batches, format, &mut bytes).map_err(store_error(store))?;
    io::write_output(output, &bytes)?;
    Ok(0)
}

/// `protoprof query`: one SQL statement's answer.
pub fn query(args: &QueryArgs) -> Result<u8> {
    let store = open_on(&args.store, args.cluster.as_deref())?;
    let batches = store.sql(&args.sql).map_err(store_error(&args.store))?;
    answer(&batches, args.format, &args.output, &args.store)
}
