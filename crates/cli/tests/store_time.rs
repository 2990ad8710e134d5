//! A store whose profiles are spread over days, as continuous profiling
//! spreads them: a report of a time range equals the report of `merge` of
//! the files in it, and reads only the partitions the range can touch
//! (`--explain` counts them); a store that cannot promise each row is in
//! its own time's hour is read whole before `--to`, until `store compact`
//! finds that they are.

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
/// The copies: one every nine hours and seven minutes from [`DAY_ONE`].
const COPIES: i64 = 12;

fn copy_time(k: i64) -> i64 {
    DAY_ONE + k * 9 * HOUR + 7 * 60_000_000_000
}

/// RFC 3339 of a time on the whole second.
fn rfc3339(nanos: i64) -> String {
    let seconds = nanos / 1_000_000_000;
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    // Days since 2026-11-01 (all in November and December here).
    let day = days - DAY_ONE / 86_400_000_000_000;
    let (month, date) = match day {
        0..30 => (11, day + 1),
        _ => (12, day - 29),
    };
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    format!("2026-{month:02}-{date:02}T{h:02}:{m:02}:{s:02}Z")
}

/// The corpus's Go CPU profile at each of the [`COPIES`]' times, as
/// `dir/p<k>.pb.gz`, added to `dir/fleet` in one `store add`.
fn spread_fleet(corpus: &Path, dir: &Path) {
    let mut add: Vec<String> = ["store", "add", "fleet", "--service", "checkout"]
        .map(String::from)
        .to_vec();
    for k in 0..COPIES {
        let name = format!("p{k}.pb.gz");
        write_copy(corpus, copy_time(k), &dir.join(&name));
        add.push(name);
    }
    let add: Vec<&str> = add.iter().map(String::as_str).collect();
    ok(dir, &add);
}

/// The corpus's Go CPU profile, starting at `time`, gzipped at `path`.
fn write_copy(corpus: &Path, time: i64, path: &Path) {
    let mut gz = Vec::new();
    let file = std::fs::File::open(corpus.join("pprof/real/go-cpu.pb.gz")).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut gz)
        .unwrap();
    let mut p = Profile::parse_from_bytes(&gz).unwrap();
    p.time_nanos = time;
    let out = std::fs::File::create(path).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    encoder.write_all(&p.write_to_bytes().unwrap()).unwrap();
    encoder.finish().unwrap();
}

/// `report` of `--store fleet` over [from, to), with what `--explain`
/// said: (files, queries) by table.
fn ranged(d: &Path, report: &[&str], range: (i64, i64)) -> (String, Vec<(String, usize, usize)>) {
    ranged_in(d, "fleet", report, range)
}

/// [`ranged`] of the store at `store`.
fn ranged_in(
    d: &Path,
    store: &str,
    report: &[&str],
    (from, to): (i64, i64),
) -> (String, Vec<(String, usize, usize)>) {
    let (from, to) = (rfc3339(from), rfc3339(to));
    let mut args = report.to_vec();
    args.extend(["--store", store, "--from", &from, "--to", &to, "--explain"]);
    let (status, out, err) = run(d, &args);
    assert_eq!(status, 0, "{args:?}: {err}");
    let mut read = Vec::new();
    for line in err.lines().filter_map(|l| l.strip_prefix("explain: ")) {
        // samples: 3 queries, 3 files (41.2 kB), 12.1 kB read
        let (table, rest) = line.split_once(": ").unwrap();
        let number = |word: &str| -> usize {
            let before = rest.split(word).next().unwrap();
            before
                .rsplit([' ', ','])
                .find(|w| !w.is_empty())
                .unwrap()
                .parse()
                .unwrap()
        };
        read.push((table.to_string(), number(" file"), number(" quer")));
    }
    assert!(!read.is_empty(), "{err}");
    (out, read)
}

/// `merge` of the copies `ks` as one file (the copy itself when one).
fn merged_copies(d: &Path, ks: &[i64], name: &str) -> String {
    if let [k] = ks {
        return format!("p{k}.pb.gz");
    }
    let files: Vec<String> = ks.iter().map(|k| format!("p{k}.pb.gz")).collect();
    let mut args = vec!["merge", "-o", name];
    args.extend(files.iter().map(String::as_str));
    ok(d, &args);
    name.to_string()
}

/// The copies whose time is in [from, to).
fn copies_in((from, to): (i64, i64)) -> Vec<i64> {
    (0..COPIES)
        .filter(|&k| (from..to).contains(&copy_time(k)))
        .collect()
}

/// Each table's files per query, at most.
fn most_files_per_query(read: &[(String, usize, usize)]) -> usize {
    read.iter()
        .map(|(_, files, queries)| files.div_ceil(*queries))
        .max()
        .unwrap()
}

#[test]
fn a_range_reads_only_its_partitions_and_equals_merge_of_its_files() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    spread_fleet(&corpus, d);
    assert!(d.join("fleet/.layout").exists(), "a new store is marked");
    let hour = (copy_time(4) - 7 * 60_000_000_000, copy_time(4) + HOUR);
    let days = (DAY_ONE + 24 * HOUR, DAY_ONE + 72 * HOUR);
    let reports: [&[&str]; 3] = [&["top"], &["traces"], &["tree"]];
    for (n, range) in [hour, days].into_iter().enumerate() {
        let ks = copies_in(range);
        assert!(!ks.is_empty());
        let file = merged_copies(d, &ks, &format!("merged-{n}.pb"));
        for report in reports {
            let (ours, read) = ranged(d, report, range);
            let theirs = ok(d, &[report, &[file.as_str()][..]].concat());
            assert!(ours == theirs, "{report:?} of {ks:?} differs from {file}");
            // Each query opens one file per partition the range holds: a
            // store add writes one per table and partition.
            assert_eq!(most_files_per_query(&read), ks.len(), "{read:?}");
            let tables: Vec<&str> = read.iter().map(|r| r.0.as_str()).collect();
            assert_eq!(
                tables,
                protoprof_store::TABLES,
                "every table, in the layout's order"
            );
        }
    }
    // Without the mark, --from bounds nothing: the partitions before it are
    // read too, and the answer is the same.
    std::fs::remove_file(d.join("fleet/.layout")).unwrap();
    let (ours, read) = ranged(d, &["top"], hour);
    assert_eq!(ours, ok(d, &["top", "p4.pb.gz"]));
    let samples = read.iter().find(|r| r.0 == "samples").unwrap();
    assert_eq!(samples.1 / samples.2, 5, "copies 0 to 4: {read:?}");
    assert_eq!(
        most_files_per_query(&read[1..]),
        1,
        "dictionaries: {read:?}"
    );
    let out = ok(d, &["store", "compact", "fleet"]);
    assert!(!out.contains("cannot skip"), "{out}");
    assert!(
        d.join("fleet/.layout").exists(),
        "compaction found none late: {out}"
    );
    let (_, read) = ranged(d, &["top"], hour);
    assert_eq!(most_files_per_query(&read), 1, "{read:?}");
}

/// The rows of `table` in the store `fleet`, and how many distinct ids
/// (the first column's) they hold.
fn rows_and_ids(d: &Path, table: &str, id: &str) -> (usize, usize) {
    let sql = format!("SELECT count(*) AS n, count(DISTINCT {id}) AS ids FROM {table}");
    let out = ok(d, &["query", "--store", "fleet", "--format", "csv", &sql]);
    let line = out.lines().nth(1).unwrap();
    let (n, ids) = line.split_once(',').unwrap();
    (n.parse().unwrap(), ids.parse().unwrap())
}

/// The Parquet files of `table` in the store `fleet`, below it.
fn files_of(d: &Path, table: &str) -> Vec<String> {
    let base = d.join("fleet").join(table);
    let mut files: Vec<String> = protoprof_tests::files_under(&base)
        .into_iter()
        .filter(|f| f.extension().is_some_and(|e| e == "parquet"))
        .map(|f| {
            f.strip_prefix(&base)
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    files
}

/// Once a day is over, `store compact` makes it one block per service,
/// one file per table: its dictionary rows once for the day, where each
/// hour had its own. Reports of ranges over blocks (an hour, two days,
/// from the middle of one day to the middle of the next) equal `merge` of
/// the files in range and read one file per day touched. A profile sent
/// again for a blocked day is found stored; a new one goes to its hour,
/// is read beside the block, and is merged into it at the next compaction.
#[test]
fn days_over_become_blocks_that_read_as_their_hours_did() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    spread_fleet(&corpus, d);
    let (stack_rows, stacks) = rows_and_ids(d, "stacks", "stack_id");
    assert_eq!(stack_rows, stacks * COPIES as usize, "once per hour stored");
    ok(d, &["store", "compact", "fleet"]);
    // Copies 0-2 fall on November 1st, 3-5 on the 2nd, 6-7 on the 3rd,
    // 8-10 on the 4th, 11 on the 5th.
    let days = ["01", "02", "03", "04", "05"];
    for table in protoprof_store::TABLES {
        let files = files_of(d, table);
        assert_eq!(files.len(), days.len(), "{table}: {files:?}");
        for (file, day) in files.iter().zip(days) {
            let block = format!("dt=2026-11-{day}/hour=all/service=checkout/");
            assert!(file.starts_with(&block), "{table}: {file}");
        }
    }
    assert_eq!(
        rows_and_ids(d, "stacks", "stack_id"),
        (stacks * days.len(), stacks),
        "once per day"
    );
    let hour = (copy_time(4) - 7 * 60_000_000_000, copy_time(4) + HOUR);
    let two_days = (DAY_ONE + 24 * HOUR, DAY_ONE + 72 * HOUR);
    let across = (copy_time(1), copy_time(4) + 60_000_000_000);
    let ranges = [(hour, 1), (two_days, 2), (across, 2)];
    let reports: [&[&str]; 3] = [&["top"], &["traces"], &["tree"]];
    let check = |ranges: &[((i64, i64), usize)], extra: &[&str]| {
        for (n, &(range, days_read)) in ranges.iter().enumerate() {
            let ks = copies_in(range);
            let mut files: Vec<String> = ks.iter().map(|k| format!("p{k}.pb.gz")).collect();
            files.extend(extra.iter().map(|f| f.to_string()));
            let merged = match &files[..] {
                [one] => one.clone(),
                _ => {
                    let mut merge = vec!["merge".to_string(), "-o".into(), format!("m{n}.pb")];
                    merge.extend(files.clone());
                    let merge: Vec<&str> = merge.iter().map(String::as_str).collect();
                    ok(d, &merge);
                    format!("m{n}.pb")
                }
            };
            for report in reports {
                let (ours, read) = ranged(d, report, range);
                let theirs = ok(d, &[report, &[merged.as_str()][..]].concat());
                assert!(ours == theirs, "{report:?} of {files:?} differs");
                assert_eq!(most_files_per_query(&read), days_read, "{read:?}");
            }
        }
    };
    check(&ranges, &[]);
    // Sent again: stored already, in its block.
    let again = ok(
        d,
        &["store", "add", "fleet", "--service", "checkout", "p4.pb.gz"],
    );
    assert!(again.contains("already stored"), "{again}");
    // A new profile of November 2nd, 06:30: its own hour, beside the block.
    let late = DAY_ONE + 30 * HOUR + 30 * 60_000_000_000;
    write_copy(&corpus, late, &d.join("late.pb.gz"));
    ok(
        d,
        &[
            "store",
            "add",
            "fleet",
            "--service",
            "checkout",
            "late.pb.gz",
        ],
    );
    assert!(files_of(d, "samples")
        .iter()
        .any(|f| f.contains("dt=2026-11-02/hour=06/")));
    let late_range = [(two_days, 3)];
    check(&late_range, &["late.pb.gz"]);
    ok(d, &["store", "compact", "fleet"]);
    for table in protoprof_store::TABLES {
        assert_eq!(files_of(d, table).len(), days.len(), "{table}: merged in");
    }
    check(&[(two_days, 2)], &["late.pb.gz"]);
}

/// A store whose rows lie past their partition's hour (written so by hand
/// here, as no writer of this layout writes them) is not marked by
/// compaction, and reads every partition before `--to`.
#[test]
fn compaction_marks_no_store_whose_rows_lie_late() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    spread_fleet(&corpus, d);
    std::fs::remove_file(d.join("fleet/.layout")).unwrap();
    // Copy 8's files moved two days back, all tables.
    let at = copy_time(8);
    let (from, to) = (partition_of(at), partition_of(at - 48 * HOUR));
    for file in protoprof_tests::files_under(&d.join("fleet")) {
        let name = file.to_string_lossy().into_owned();
        if name.contains(&from) {
            let moved = std::path::PathBuf::from(name.replace(&from, &to));
            std::fs::create_dir_all(moved.parent().unwrap()).unwrap();
            std::fs::rename(&file, moved).unwrap();
        }
    }
    let out = ok(d, &["store", "compact", "fleet"]);
    assert!(
        out.contains("--from cannot skip the partitions before it"),
        "{out}"
    );
    assert!(!d.join("fleet/.layout").exists());
    let range = (at - 7 * 60_000_000_000, at + HOUR);
    let (ours, _) = ranged(d, &["top"], range);
    assert_eq!(ours, ok(d, &["top", "p8.pb.gz"]));
}

/// `dt=…/hour=…` of a time.
fn partition_of(nanos: i64) -> String {
    let text = rfc3339(nanos);
    format!("dt={}/hour={}", &text[..10], &text[11..13])
}

/// Where the stores earlier versions wrote are kept, oldest first: hours
/// only (layout 2), then days over merged into day blocks (layout 3),
/// written by the current version.
const FIXTURES: [&str; 2] = [
    "tests/fixtures/store-layout-2",
    "tests/fixtures/store-layout-3",
];

/// The profiles of the fixture store: two of a made-up service, an hour
/// apart, with labels, two sample types, inlined frames and a mapping.
fn fixture_profiles() -> Vec<Profile> {
    use protoprof_model_pprof::perftools::profiles::{
        Function, Label, Line, Location, Mapping, Sample, ValueType,
    };
    let strings = [
        "",
        "samples",
        "count",
        "cpu",
        "nanoseconds",
        "main",
        "main.go",
        "compute",
        "lib.go",
        "inlined",
        "thread",
        "worker",
        "/bin/app",
        "abc123",
        "bytes",
    ];
    let mut profiles = Vec::new();
    for n in 0..2i64 {
        let mut p = Profile::new();
        p.string_table = strings.iter().map(|s| s.to_string()).collect();
        for (t, u) in [(1, 2), (3, 4)] {
            let mut v = ValueType::new();
            (v.type_, v.unit) = (t, u);
            p.sample_type.push(v);
        }
        let mut period = ValueType::new();
        (period.type_, period.unit) = (3, 4);
        p.period_type = Some(period).into();
        p.period = 10_000_000;
        p.time_nanos = DAY_ONE + n * HOUR + 60_000_000_000;
        p.duration_nanos = 10_000_000_000;
        let mut m = Mapping::new();
        (m.id, m.memory_start, m.memory_limit, m.filename, m.build_id) =
            (1, 0x1000, 0x9000, 12, 13);
        m.has_functions = true;
        p.mapping.push(m);
        for (id, name, file) in [(1, 5, 6), (2, 7, 8), (3, 9, 8)] {
            let mut f = Function::new();
            (f.id, f.name, f.system_name, f.filename, f.start_line) =
                (id, name, name, file, 10 * id as i64);
            p.function.push(f);
        }
        for (id, lines) in [(1u64, vec![(1u64, 12i64)]), (2, vec![(3, 40), (2, 31)])] {
            let mut l = Location::new();
            (l.id, l.mapping_id, l.address) = (id, 1, 0x1000 + 0x10 * id);
            for (function, line) in lines {
                let mut entry = Line::new();
                (entry.function_id, entry.line) = (function, line);
                l.line.push(entry);
            }
            p.location.push(l);
        }
        for (stack, values, bytes) in [
            (vec![2u64, 1], [5, 50_000_000], 0i64),
            (vec![1], [2 + n, 20_000_000], 4096),
        ] {
            let mut s = Sample::new();
            s.location_id = stack;
            s.value = values.to_vec();
            let mut label = Label::new();
            (label.key, label.str) = (10, 11);
            s.label.push(label);
            if bytes > 0 {
                let mut number = Label::new();
                (number.key, number.num, number.num_unit) = (14, bytes, 14);
                s.label.push(number);
            }
            p.sample.push(s);
        }
        profiles.push(p);
    }
    profiles
}

/// A store written by each layout (kept in the repository; the current
/// layout's written once by `PROTOPROF_WRITE_STORE_FIXTURE=1 cargo test
/// --test store_time`) reads, in every later version, to the reports of
/// the profiles it was written from: an upgrade never loses what a store
/// holds.
#[test]
fn stores_earlier_versions_wrote_read_the_same() {
    for fixture in FIXTURES {
        a_store_an_earlier_version_wrote_reads_the_same(fixture);
    }
}

fn a_store_an_earlier_version_wrote_reads_the_same(fixture: &str) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut files = Vec::new();
    for (n, p) in fixture_profiles().iter().enumerate() {
        let name = format!("f{n}.pb");
        std::fs::write(d.join(&name), p.write_to_bytes().unwrap()).unwrap();
        files.push(name);
    }
    let current = fixture == FIXTURES[FIXTURES.len() - 1];
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture);
    if current && std::env::var_os("PROTOPROF_WRITE_STORE_FIXTURE").is_some() {
        let _ = std::fs::remove_dir_all(&fixture);
        let mut add = vec![
            "store",
            "add",
            fixture.to_str().unwrap(),
            "--service",
            "app",
        ];
        add.extend(files.iter().map(String::as_str));
        ok(d, &add);
        ok(d, &["store", "compact", fixture.to_str().unwrap()]);
    }
    let mut merge = vec!["merge", "-o", "both.pb"];
    merge.extend(files.iter().map(String::as_str));
    ok(d, &merge);
    let store = fixture.to_str().unwrap();
    let reports: [&[&str]; 5] = [
        &["top"],
        &["traces"],
        &["tags"],
        &["top", "--sample-index", "cpu", "--granularity", "lines"],
        &["peek", "compute"],
    ];
    for report in reports {
        let theirs = ok(d, &[report, &["both.pb"][..]].concat());
        let ours = ok(d, &[report, &["--store", store][..]].concat());
        assert!(
            ours == theirs,
            "{fixture:?} {report:?}:\n{ours}\nwhere the files give\n{theirs}"
        );
        let first = (DAY_ONE, DAY_ONE + HOUR);
        let (ours, _) = ranged_in(d, store, report, first);
        assert_eq!(
            ours,
            ok(d, &[report, &["f0.pb"][..]].concat()),
            "{report:?}"
        );
    }
}
