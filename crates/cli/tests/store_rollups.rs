//! Rollups: once a day is over, `store compact` sums each service's day,
//! and reports of ranges that cover whole days read those sums. Every
//! report over them equals the report of `merge` of the files selected,
//! and the same report with `--no-rollups`; a selection that needs what a
//! rollup drops (a label) reads raw rows, as does a day whose files
//! changed since its rollup.

mod common;

use std::io::{Read, Write};
use std::path::Path;

use common::{ok, run};
use protobuf::Message;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_tests::corpus_dir;

/// 2026-11-01T00:00:00Z.
const DAY_ONE: i64 = 1_793_491_200_000_000_000;
const HOUR: i64 = 3_600_000_000_000;
const MINUTE: i64 = 60_000_000_000;
/// Copies per host and service: one every seven hours, four days.
const COPIES: i64 = 14;

/// A profile stored: its file, service, host and start.
struct Stored {
    file: String,
    service: &'static str,
    host: &'static str,
    time: i64,
}

/// The corpus's `source` starting at `time`, gzipped at `path`.
fn write_copy(corpus: &Path, source: &str, time: i64, path: &Path) {
    let mut bytes = Vec::new();
    let file = std::fs::File::open(corpus.join("pprof/real").join(source)).unwrap();
    let mut gz = flate2::read::GzDecoder::new(file);
    gz.read_to_end(&mut bytes).unwrap();
    let mut p = Profile::parse_from_bytes(&bytes).unwrap();
    p.time_nanos = time;
    let out = std::fs::File::create(path).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    encoder.write_all(&p.write_to_bytes().unwrap()).unwrap();
    encoder.finish().unwrap();
}

/// `checkout` on hosts `a` and `b` (two Go CPU profiles in turn, one with
/// labels) and `search` on `a` (a Go heap profile, four sample types),
/// every seven hours for four days, added to `d/fleet` per service and
/// host, then compacted.
fn spread_fleet(corpus: &Path, d: &Path) -> Vec<Stored> {
    let mut stored = Vec::new();
    let sources = [
        (
            "checkout",
            "a",
            ["go-cpu.pb.gz", "go-cpu-labels-exemplars.pb.gz"],
        ),
        (
            "checkout",
            "b",
            ["go-cpu-labels-exemplars.pb.gz", "go-cpu.pb.gz"],
        ),
        ("search", "a", ["go-heap.pb.gz", "go-heap.pb.gz"]),
    ];
    for (service, host, files) in sources {
        let mut add = vec!["store", "add", "fleet", "--service", service];
        let resource = format!("host.name={host}");
        add.extend(["--resource", &resource]);
        let mut names = Vec::new();
        for k in 0..COPIES {
            let time = DAY_ONE + k * 7 * HOUR + 5 * MINUTE + host.as_bytes()[0] as i64;
            let file = format!("{service}-{host}-{k}.pb.gz");
            write_copy(corpus, files[k as usize % 2], time, &d.join(&file));
            names.push(file.clone());
            stored.push(Stored {
                file,
                service,
                host,
                time,
            });
        }
        add.extend(names.iter().map(String::as_str));
        ok(d, &add);
    }
    let compacted = ok(d, &["store", "compact", "fleet"]);
    // Copies reach November 4th at 21:05: days 1 to 4, of two services.
    assert!(
        compacted.contains(": 8 days of a service rolled up"),
        "{compacted}"
    );
    stored
}

/// RFC 3339 of a time in November 2026, on the whole second.
fn rfc3339(nanos: i64) -> String {
    let seconds = (nanos - DAY_ONE) / 1_000_000_000;
    let (day, rest) = (seconds / 86_400 + 1, seconds % 86_400);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("2026-11-{day:02}T{h:02}:{m:02}:{s:02}Z")
}

/// The reports compared, each as its arguments.
const REPORTS: [&[&str]; 8] = [
    &["top"],
    &["traces"],
    &["tags"],
    &["tree"],
    &["peek", "main\\."],
    &["callgrind"],
    &["folded"],
    &["callgraph"],
];

/// `report` of the store over `selection` (its arguments), and which
/// tables it read (`--explain`).
fn stored_report(d: &Path, report: &[&str], selection: &[&str]) -> (String, Vec<String>) {
    let mut args = report.to_vec();
    args.extend(["--store", "fleet", "--explain"]);
    args.extend(selection);
    let (status, out, err) = run(d, &args);
    assert_eq!(status, 0, "{args:?}: {err}");
    let tables = (err.lines().filter_map(|l| l.strip_prefix("explain: ")))
        .map(|l| l.split(':').next().unwrap().to_string())
        .collect();
    (out, tables)
}

/// `merge` of `files` as `name` (the file itself when one).
fn merged(d: &Path, files: &[&str], name: &str) -> String {
    if let [one] = files {
        return one.to_string();
    }
    let mut args = vec!["merge", "-o", name];
    args.extend(files);
    ok(d, &args);
    name.to_string()
}

/// A selection of the store: its arguments, and which profiles it takes.
struct Case {
    args: Vec<String>,
    /// Report options given to both sides (`--sample-index`).
    both: Vec<String>,
    takes: Box<dyn Fn(&Stored) -> bool>,
    /// Whether it covers a whole day, which it then reads summed.
    rolled_up: bool,
}

fn case(args: &[&str], takes: impl Fn(&Stored) -> bool + 'static, rolled_up: bool) -> Case {
    let texts = |args: &[&str]| args.iter().map(|a| a.to_string()).collect();
    let at = args.iter().position(|a| a.starts_with("--sample-index"));
    let (store, both) = args.split_at(at.unwrap_or(args.len()));
    Case {
        args: texts(store),
        both: texts(both),
        takes: Box::new(takes),
        rolled_up,
    }
}

/// Each report of each case equals the report of `merge` of the files
/// it takes, and the same report with `--no-rollups`; cases covering a
/// whole day read its rollup, and `--no-rollups` reads none.
fn check_cases(d: &Path, stored: &[Stored], cases: &[Case]) {
    for (n, case) in cases.iter().enumerate() {
        let mut taken: Vec<&Stored> = stored.iter().filter(|s| (case.takes)(s)).collect();
        // pprof merges in the order given; the store, in order of time.
        taken.sort_by_key(|s| s.time);
        let files: Vec<&str> = taken.iter().map(|s| s.file.as_str()).collect();
        assert!(!files.is_empty(), "{:?} takes nothing", case.args);
        let merged = merged(d, &files, &format!("m{n}.pb"));
        let selection: Vec<&str> = case.args.iter().map(String::as_str).collect();
        for report in REPORTS {
            let both: Vec<&str> = case.both.iter().map(String::as_str).collect();
            let mut ours_args = report.to_vec();
            ours_args.extend(&both);
            let (ours, tables) = stored_report(d, &ours_args, &selection);
            let theirs = ok(d, &[&ours_args[..], &[merged.as_str()][..]].concat());
            assert!(
                ours == theirs,
                "{report:?} {selection:?} differs from merge"
            );
            let read_rollups = tables
                .iter()
                .any(|t| is_rollup(t) && t.ends_with("samples"));
            assert_eq!(
                read_rollups, case.rolled_up,
                "{report:?} {selection:?}: {tables:?}"
            );
            let raw = [&selection[..], &["--no-rollups"]].concat();
            let (raw_out, raw_tables) = stored_report(d, &ours_args, &raw);
            assert!(
                raw_out == ours,
                "{report:?} {selection:?}: --no-rollups differs"
            );
            assert!(!raw_tables.iter().any(|t| is_rollup(t)), "{raw_tables:?}");
        }
    }
}

/// Whether `table` is a rollup table: a day's or a span's.
fn is_rollup(table: &str) -> bool {
    table.starts_with("day_") || table.starts_with("span_")
}

#[test]
fn reports_over_rollups_equal_merge_of_the_files_selected() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let stored = spread_fleet(&corpus, d);
    let day = |n: i64| DAY_ONE + (n - 1) * 24 * HOUR;
    let (from, to) = (rfc3339(day(2)), rfc3339(day(4)));
    let (mid_from, mid_to) = (rfc3339(day(1) + 10 * HOUR), rfc3339(day(3) + 13 * HOUR));
    let in_range = |(f, t): (i64, i64)| move |s: &Stored| (f..t).contains(&s.time);
    let checkout = |s: &Stored| s.service == "checkout";
    let cases = [
        case(&["--select", "service.name=\"checkout\""], checkout, true),
        case(
            &[
                "--select",
                "service.name=\"checkout\"",
                "--from",
                &from,
                "--to",
                &to,
            ],
            move |s| checkout(s) && in_range((day(2), day(4)))(s),
            true,
        ),
        // The ends of the range, partial days, are read raw.
        case(
            &[
                "--select",
                "{service.name=\"checkout\", host.name=\"b\"}",
                "--from",
                &mid_from,
                "--to",
                &mid_to,
            ],
            move |s| {
                checkout(s)
                    && s.host == "b"
                    && in_range((day(1) + 10 * HOUR, day(3) + 13 * HOUR))(s)
            },
            true,
        ),
        // November 3rd to 6th, whole: a span of four days, per host.
        case(
            &[
                "--select",
                "{service.name=\"checkout\", host.name=\"a\"}",
                "--from",
                &rfc3339(day(3)),
                "--to",
                &rfc3339(day(7)),
            ],
            move |s| checkout(s) && s.host == "a" && in_range((day(3), day(7)))(s),
            true,
        ),
        // Within one day: raw rows only.
        case(
            &[
                "--select",
                "service.name=\"checkout\"",
                "--from",
                &mid_from,
                "--to",
                &rfc3339(day(1) + 20 * HOUR),
            ],
            move |s| checkout(s) && in_range((day(1) + 10 * HOUR, day(1) + 20 * HOUR))(s),
            false,
        ),
        case(
            &[
                "--select",
                "service.name=\"search\"",
                "--sample-index",
                "alloc_space",
            ],
            |s| s.service == "search",
            true,
        ),
    ];
    check_cases(d, &stored, &cases);
}

/// How many files each day rollup table holds.
fn rollup_files(d: &Path) -> Vec<usize> {
    let tables = [
        "day_label_sets",
        "day_profiles",
        "day_samples",
        "day_service_profiles",
        "day_service_samples",
        "day_hour_totals",
        "day_service_hour_totals",
    ];
    files_in(d, &tables)
}

/// How many files each span table holds.
fn span_files(d: &Path) -> Vec<usize> {
    let tables = [
        "span_label_sets",
        "span_profiles",
        "span_samples",
        "span_service_profiles",
        "span_service_samples",
        "span_stacks",
        "span_locations",
        "span_functions",
        "span_mappings",
    ];
    files_in(d, &tables)
}

/// How many Parquet files each of rollup tables `tables` holds.
fn files_in(d: &Path, tables: &[&str]) -> Vec<usize> {
    let count = |t: &str| {
        let files = protoprof_tests::files_under(&d.join("fleet/rollups").join(t));
        files
            .iter()
            .filter(|f| f.extension().is_some_and(|e| e == "parquet"))
            .count()
    };
    tables.iter().map(|t| count(t)).collect()
}

/// The files `--explain` says `report` read of `table`.
fn files_read(d: &Path, args: &[&str], table: &str) -> usize {
    let mut args = args.to_vec();
    args.extend(["--store", "fleet", "--explain"]);
    let (status, _, err) = run(d, &args);
    assert_eq!(status, 0, "{err}");
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix(&format!("explain: {table}: ")));
    let Some(line) = line else { return 0 };
    // 1 query, 3 files (41.2 kB), 12.1 kB read
    let files = line.split(", ").nth(1).unwrap();
    files.split(' ').next().unwrap().parse().unwrap()
}

/// `store series` of the store equals it with `--no-rollups`: per hour,
/// day and span, grouped by nothing, the service and the host, over all
/// of it and over a range that ends mid-day.
fn check_series(d: &Path) {
    let groupings: [&[&str]; 3] = [
        &[],
        &["--group-by", "service.name"],
        &["--group-by", "host.name"],
    ];
    let ranges: [&[&str]; 2] = [
        &[],
        &["--from", "2026-11-02", "--to", "2026-11-05T12:00:00Z"],
    ];
    for step in ["1h", "1d", "4d"] {
        for (group, range) in groupings.iter().flat_map(|g| ranges.map(|r| (g, r))) {
            let args = [
                &["store", "series", "fleet", "--step", step][..],
                group,
                range,
            ]
            .concat();
            let ours = ok(d, &args);
            assert!(ours.lines().count() > 4, "{args:?}: {ours}");
            let raw = ok(d, &[&args[..], &["--no-rollups"]].concat());
            assert_eq!(ours, raw, "{args:?}");
        }
    }
}

/// `query`'s sums of table `table`'s values by `by` (columns), as CSV
/// lines.
fn sql_sums(d: &Path, table: &str, by: &str) -> Vec<String> {
    let sql = format!("SELECT {by}, sum(value) AS value FROM {table} GROUP BY {by} ORDER BY {by}");
    let answer = ok(d, &["query", "--store", "fleet", &sql, "--format", "csv"]);
    answer.lines().skip(1).map(String::from).collect()
}

/// In SQL, each day's rollup sums its raw rows, and each span of 16 days
/// (holding every day stored) its service's; a stale rollup (`stale`: a
/// day's CSV prefix, `dt,service,`) is not there, nor the span holding it.
fn check_sql(d: &Path, stale: Option<&str>) {
    let by_day = "dt, service, sample_type";
    let mut raw = sql_sums(d, "samples", by_day);
    assert!(raw.len() >= 8, "{raw:?}");
    raw.retain(|line| stale.is_none_or(|day| !line.starts_with(day)));
    assert_eq!(sql_sums(d, "day_service_samples", by_day), raw);
    assert_eq!(sql_sums(d, "day_samples", by_day), raw);
    let mut services = sql_sums(d, "samples", "service");
    let stale_service = stale.map(|day| day.split(',').nth(1).unwrap());
    services.retain(|line| stale_service.is_none_or(|s| !line.starts_with(&format!("{s},"))));
    let spans = "span_service_samples WHERE days = '16'";
    assert_eq!(sql_sums(d, spans, "service"), services);
}

/// A selection on a label reads raw rows (a rollup sums over labels); a
/// day given a profile since its rollup reads raw rows, and the spans
/// holding it are not read, until the next compaction sums them again,
/// and the stale rollups are then removed.
#[test]
fn rollups_are_read_only_where_they_answer_as_the_raw_rows() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut stored = spread_fleet(&corpus, d);
    let checkout = ["--select", "service.name=\"checkout\""];
    let labelled = ["--select", "{service.name=\"checkout\", function=\"slow\"}"];
    let (ours, tables) = stored_report(d, &["top"], &labelled);
    assert!(!tables.iter().any(|t| is_rollup(t)), "{tables:?}");
    let (raw, _) = stored_report(d, &["top", "--no-rollups"], &labelled);
    assert_eq!(ours, raw);
    assert_eq!(rollup_files(d), [8; 7]);
    check_sql(d, None);
    // Per service: October 30th to November 2nd, November 3rd to 6th,
    // and the 16 days from October 26th holding both.
    assert_eq!(span_files(d), [6; 9]);
    let top = [&["top"][..], &checkout].concat();
    let read = |table: &str| files_read(d, &top, table);
    assert_eq!(
        (read("span_service_samples"), read("day_service_samples")),
        (1, 0)
    );
    // November 2nd, 06:30: after its rollup.
    let time = DAY_ONE + 30 * HOUR + 30 * MINUTE;
    write_copy(&corpus, "go-cpu.pb.gz", time, &d.join("late.pb.gz"));
    let add = [
        "store",
        "add",
        "fleet",
        "--service",
        "checkout",
        "--resource",
        "host.name=a",
    ];
    ok(d, &[&add[..], &["late.pb.gz"]].concat());
    let file = "late.pb.gz".to_string();
    stored.push(Stored {
        file,
        service: "checkout",
        host: "a",
        time,
    });
    let cases = || [case(&checkout, |s: &Stored| s.service == "checkout", true)];
    check_cases(d, &stored, &cases());
    check_series(d);
    check_sql(d, Some("2026-11-02,checkout,"));
    // November 3rd to 6th from its span, the 1st from its day, the 2nd raw.
    assert_eq!(
        (read("span_service_samples"), read("day_service_samples")),
        (1, 1)
    );
    let compacted = ok(d, &["store", "compact", "fleet"]);
    assert!(
        compacted.contains(": 1 days of a service rolled up"),
        "{compacted}"
    );
    assert!(
        compacted.contains(": 2 spans of days of a service rolled up"),
        "{compacted}"
    );
    assert_eq!(rollup_files(d), [8; 7], "the stale rollup is gone");
    assert_eq!(span_files(d), [6; 9], "the stale spans are gone");
    assert_eq!(
        (read("span_service_samples"), read("day_service_samples")),
        (1, 0)
    );
    check_cases(d, &stored, &cases());
    check_series(d);
    check_sql(d, None);
}

/// A rollup file that does not read (cut short) is not read: the report
/// warns of it once, names it, and reads its days from the rest (the
/// same report); `--strict` fails naming it; `store check` lists it,
/// `--repair` moves it aside, and the next compaction writes it again.
#[test]
fn a_damaged_rollup_is_read_around_and_written_again() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    spread_fleet(&corpus, d);
    let checkout = ["--select", "service.name=\"checkout\""];
    let (before, _) = stored_report(d, &["top"], &checkout);
    let spans = d.join("fleet/rollups/span_service_samples");
    let damaged = protoprof_tests::files_under(&spans)
        .into_iter()
        .find(|f| f.to_string_lossy().contains("days=16/service=checkout"))
        .unwrap();
    let whole = std::fs::read(&damaged).unwrap();
    std::fs::write(&damaged, &whole[..whole.len() / 2]).unwrap();
    let name = damaged.file_name().unwrap().to_string_lossy().into_owned();
    let top = [&["top", "--store", "fleet"][..], &checkout].concat();
    let (status, out, err) = run(d, &top);
    assert_eq!(status, 0, "{err}");
    assert!(out == before, "the same report around the damaged span");
    assert_eq!(err.matches(&name).count(), 1, "{err}");
    let (status, _, err) = run(d, &[&top[..], &["--strict"]].concat());
    assert_ne!(status, 0);
    assert!(err.contains(&name), "{err}");
    let (_, listed, _) = run(d, &["store", "check", "fleet"]);
    assert!(listed.contains(&name), "{listed}");
    ok(d, &["store", "check", "fleet", "--repair"]);
    assert!(!damaged.exists());
    let compacted = ok(d, &["store", "compact", "fleet"]);
    assert!(
        compacted.contains(": 1 spans of days of a service rolled up"),
        "{compacted}"
    );
    assert!(damaged.exists(), "written again");
    let (after, tables) = stored_report(d, &["top"], &checkout);
    assert!(after == before);
    assert!(
        tables.contains(&"span_service_samples".to_string()),
        "{tables:?}"
    );
}
