//! A store survives what happens to the processes that change it:
//! `store compact` killed (`kill -9`) at moments spread over its run (its
//! merges, day blocks and rollups: each round adds a profile to a day
//! over, whose rollup is written again), a hundred times, leaves every
//! report as it was, and every profile added there once; the next
//! compaction removes what a killed one left. `receive --store` killed
//! among its exports, thirty times, keeps every acknowledged profile,
//! once. A disk that fills (a small tmpfs) makes `receive` refuse what it
//! cannot write and `store compact` fail, each leaving nothing half
//! written, and loses nothing acknowledged.

mod common;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{ok, Receiving};
use protobuf::Message;
use protoprof_model_pprof::perftools::profiles::Profile;
use protoprof_tests::corpus_dir;

const HOUR: i64 = 3_600_000_000_000;
/// 2026-11-01T00:00:00Z.
const DAY_ONE: i64 = 1_793_491_200_000_000_000;
/// How many times compaction is killed.
const KILLS: usize = 100;

/// The corpus's Go CPU profile, starting at `time`, gzipped at `path`.
fn write_copy(profile: &Profile, time: i64, path: &Path) {
    let mut p = profile.clone();
    p.time_nanos = time;
    let out = std::fs::File::create(path).unwrap();
    let mut encoder = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    encoder.write_all(&p.write_to_bytes().unwrap()).unwrap();
    encoder.finish().unwrap();
}

/// Adds a copy of `profile` at `time` as `dir/NAME`, in a `store add` of
/// its own (a file per partition and flush: work for compaction).
fn add(dir: &Path, profile: &Profile, time: i64, name: &str) {
    write_copy(profile, time, &dir.join(name));
    ok(
        dir,
        &["store", "add", "fleet", "--service", "checkout", name],
    );
}

/// The corpus's Go CPU profile.
fn go_cpu_profile(corpus: &Path) -> Profile {
    let mut bytes = Vec::new();
    let file = std::fs::File::open(corpus.join("pprof/real/go-cpu.pb.gz")).unwrap();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut bytes)
        .unwrap();
    Profile::parse_from_bytes(&bytes).unwrap()
}

/// What the store says: `traces` of all of it (every sample, its stack
/// and labels, and the header).
fn reports(dir: &Path) -> String {
    ok(dir, &["traces", "--store", "fleet"])
}

/// `traces` of `merge` of `files`: what the store's reports are when it
/// holds each of them once.
fn merged_traces(d: &Path, files: &[String]) -> String {
    let mut merge = vec!["merge", "-o", "all.pb"];
    merge.extend(files.iter().map(String::as_str));
    ok(d, &merge);
    ok(d, &["traces", "all.pb"])
}

/// The store's `profiles` table holds `count` rows, each its own profile.
fn assert_each_profile_once(d: &Path, count: usize) {
    let sql = "SELECT count(*) AS n, count(DISTINCT profile_id) AS ids FROM profiles";
    let counted = ok(d, &["query", "--store", "fleet", "--format", "csv", sql]);
    assert_eq!(counted, format!("n,ids\n{count},{count}\n"));
}

/// `store compact` killed after `delay`; whether it had finished.
fn compact_killed_after(dir: &Path, delay: Duration) -> bool {
    let binary = assert_cmd::cargo::cargo_bin("protoprof");
    let mut child = std::process::Command::new(binary)
        .current_dir(dir)
        .args(["store", "compact", "fleet"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    let finished = child.try_wait().unwrap().is_some();
    let _ = child.kill();
    child.wait().unwrap();
    finished
}

/// Whether a compaction's staging directory (`.NAME.compact`, where it
/// writes what it swaps in, then holds the old files until removed) is
/// left in the store: a compaction killed between its start and its end.
fn half_done(store: &Path) -> bool {
    let mut pending = vec![store.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') && name.ends_with(".compact") {
                return true;
            }
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            }
        }
    }
    false
}

/// A small generator of delays: the same moments at every run.
struct Moments(u64);

impl Moments {
    fn within(&mut self, span: Duration) -> Duration {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let part = (self.0 >> 33) as f64 / (1u64 << 31) as f64;
        span.mul_f64(part)
    }
}

#[test]
fn compaction_killed_at_any_moment_loses_and_doubles_nothing() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let profile = go_cpu_profile(&corpus);
    // Two days over (made blocks) and the hour now (merged as an hour).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as i64;
    let mut names = Vec::new();
    let mut added = 0i64;
    // Each round's work: a profile in a new hour of a day over, and at
    // every fifth round one in the hour now, beside the others there.
    let mut add_next = |d: &Path, names: &mut Vec<String>| {
        let time = match added % 5 {
            4 => now - added * 1_000_000,
            _ => DAY_ONE + (added % 2) * 24 * HOUR + (added / 2 % 24) * HOUR + added,
        };
        let name = format!("p{added}.pb.gz");
        add(d, &profile, time, &name);
        names.push(name);
        added += 1;
    };
    for _ in 0..6 {
        add_next(d, &mut names);
    }
    ok(d, &["store", "compact", "fleet"]);
    // How long a round's compaction takes, on a copy.
    add_next(d, &mut names);
    let copy = d.join("copy");
    std::fs::create_dir(&copy).unwrap();
    let status = std::process::Command::new("cp")
        .args(["-a", "fleet", "copy/fleet"])
        .current_dir(d)
        .status()
        .unwrap();
    assert!(status.success());
    let start = Instant::now();
    ok(&copy, &["store", "compact", "fleet"]);
    let span = start.elapsed();
    let mut moments = Moments(62);
    let (mut finished, mut cut_short) = (0, 0);
    let mut expected = reports(d);
    for kill in 0..KILLS {
        if compact_killed_after(d, moments.within(span)) {
            finished += 1;
        }
        if half_done(&d.join("fleet")) {
            cut_short += 1;
        }
        assert_eq!(reports(d), expected, "after kill {kill}");
        add_next(d, &mut names);
        expected = reports(d);
    }
    assert!(finished < KILLS / 2, "{finished} kills came after the end");
    assert!(
        cut_short >= KILLS / 10,
        "only {cut_short} kills left a compaction's work half done"
    );
    ok(d, &["store", "compact", "fleet"]);
    assert!(
        !half_done(&d.join("fleet")),
        "a compaction removes what others left"
    );
    // Every profile there once: the reports are those of the files.
    let files = merged_traces(d, &names);
    assert!(
        reports(d) == files,
        "the store's reports differ from the files'"
    );
    assert_each_profile_once(d, names.len());
    let checked = ok(d, &["store", "check", "fleet"]);
    assert!(checked.contains("0 unreadable"), "{checked}");
    assert!(checked.contains("every reference found"), "{checked}");
}

/// How many times a receiver is killed among its exports.
const RECEIVER_KILLS: usize = 30;
/// Exports sent at once in each round.
const EXPORTS: usize = 3;

/// `send`s of `files` to `address` at once, each a thread: whether each
/// was acknowledged.
fn exporting(d: &Path, address: &str, files: &[String]) -> Vec<std::thread::JoinHandle<bool>> {
    let send = |file: &String| {
        let (dir, address, file) = (d.to_path_buf(), address.to_string(), file.clone());
        std::thread::spawn(move || Receiving::send(&dir, &address, &file))
    };
    files.iter().map(send).collect()
}

/// The profiles' start times the store holds samples of.
fn stored_times(d: &Path) -> Vec<i64> {
    let sql = "SELECT DISTINCT profile_time_unix_nano AS t FROM samples ORDER BY t";
    let csv = ok(d, &["query", "--store", "fleet", "--format", "csv", sql]);
    csv.lines().skip(1).map(|l| l.parse().unwrap()).collect()
}

/// `receive --store` killed (`kill -9`) while exports arrive, at moments
/// spread over a round's span, and restarted on its address at once, as
/// a service manager restarts it: the exports' retries land there. Every
/// acknowledged profile is in the store, once (its flush's files renamed
/// in part when it died are written again whole, and one written whole
/// is found stored), and the reports are those of the files.
#[test]
fn receivers_killed_among_their_exports_keep_each_acknowledged_profile_once() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let profile = go_cpu_profile(&corpus);
    let (mut names, mut times) = (Vec::new(), Vec::new());
    let mut round_files = |round: usize| -> Vec<String> {
        (0..EXPORTS)
            .map(|i| {
                let time = DAY_ONE + ((round * EXPORTS + i) as i64) * 7 * 60_000_000_000;
                let name = format!("r{round}-{i}.pb.gz");
                write_copy(&profile, time, &d.join(&name));
                names.push(name.clone());
                times.push(time);
                name
            })
            .collect()
    };
    // A round's span: a receiver's start and its exports, unkilled.
    let start = Instant::now();
    let receiving = Receiving::start(d, "fleet", "127.0.0.1:0");
    let mut address = receiving.address.clone();
    let sends = exporting(d, &address, &round_files(0));
    assert!(sends.into_iter().all(|s| s.join().unwrap()));
    let span = start.elapsed();
    let mut receiving = Some(receiving);
    let mut moments = Moments(7);
    let mut acknowledged = EXPORTS;
    for round in 1..=RECEIVER_KILLS {
        let mut running = receiving.take().unwrap();
        let sends = exporting(d, &address, &round_files(round));
        std::thread::sleep(moments.within(span));
        running.child.kill().unwrap(); // SIGKILL
        running.child.wait().unwrap();
        drop(running);
        let restarted = Receiving::start(d, "fleet", &address);
        address = restarted.address.clone();
        receiving = Some(restarted);
        acknowledged += sends
            .into_iter()
            .filter_map(|s| s.join().unwrap().then_some(()))
            .count();
    }
    drop(receiving);
    assert_eq!(
        acknowledged,
        names.len(),
        "every export retried into the restart"
    );
    assert_eq!(stored_times(d), times, "every acknowledged profile there");
    // Once: the reports are those of the files.
    let files = merged_traces(d, &names);
    assert!(
        reports(d) == files,
        "the store's reports differ from the files'"
    );
    ok(d, &["store", "compact", "fleet"]);
    assert_each_profile_once(d, names.len());
    assert!(reports(d) == files, "after compaction too");
}

/// A small tmpfs, mounted in a mount namespace of its own (`unshare`),
/// held by a process that sleeps in it; the test reaches it through that
/// process's `/proc/PID/root`. `None` where the machine lets no test
/// mount one.
struct SmallDisk {
    holder: std::process::Child,
    path: PathBuf,
}

impl SmallDisk {
    fn mount(d: &Path, size: &str) -> Option<SmallDisk> {
        use std::io::BufRead;
        let mount_point = d.join("small-disk");
        std::fs::create_dir(&mount_point).unwrap();
        let script = r#"mount -t tmpfs -o size="$2" tmpfs "$1" && echo mounted && exec sleep 3600"#;
        // As root a mount namespace will do; otherwise a user namespace
        // too, where the machine allows one.
        for user in [&[][..], &["--user", "--map-root-user"][..]] {
            let spawned = std::process::Command::new("unshare")
                .args(user)
                .args([
                    "--mount",
                    "--propagation",
                    "private",
                    "sh",
                    "-c",
                    script,
                    "sh",
                ])
                .arg(&mount_point)
                .arg(size)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::null())
                .spawn();
            let Ok(mut holder) = spawned else { return None };
            let mut line = String::new();
            let out = holder.stdout.take().unwrap();
            let _ = std::io::BufReader::new(out).read_line(&mut line);
            if line.trim() == "mounted" {
                let inside = mount_point.strip_prefix("/").unwrap();
                let path = Path::new(&format!("/proc/{}/root", holder.id())).join(inside);
                return Some(SmallDisk { holder, path });
            }
            let _ = holder.kill();
            let _ = holder.wait();
        }
        None
    }

    /// Fills what space is left with a file of its own.
    fn fill(&self) {
        let mut filler = std::fs::File::create(self.path.join("filler")).unwrap();
        for chunk in [1 << 16, 1 << 12, 1] {
            while filler.write_all(&vec![0u8; chunk]).is_ok() {}
        }
    }

    /// Gives the space back.
    fn free(&self) {
        std::fs::remove_file(self.path.join("filler")).unwrap();
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = self.holder.kill();
        let _ = self.holder.wait();
    }
}

/// The hidden entries (files being written, compactions' staging
/// directories) below `dir`.
fn hidden_entries(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        // (The store's own marks and counts are hidden files too.)
        let ours =
            [".layout", ".lock", ".write.lock", ".swaps", ".flushes"].contains(&name.as_str());
        if name.starts_with('.') && !ours {
            found.push(entry.path());
        } else if entry.file_type().unwrap().is_dir() {
            found.extend(hidden_entries(&entry.path()));
        }
    }
    found
}

/// No file being written, nor any compaction's staging directory, is
/// left in the store `fleet` (they would hold the space).
fn assert_nothing_hidden(d: &Path) {
    let left = hidden_entries(&d.join("fleet/"));
    assert!(
        left.is_empty(),
        "{} left, such as {:?}",
        left.len(),
        left.first()
    );
}

/// A store on a disk that fills: `receive --store` refuses (503) the
/// exports it cannot write, and leaves no file of them, whole or half;
/// `store compact` fails there and leaves the store reading as it did,
/// with nothing staged left; once the space is back, the exports sent
/// again are stored, and every profile acknowledged is there once.
#[test]
fn a_full_disk_refuses_what_it_cannot_write_and_keeps_what_it_acknowledged() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(disk) = SmallDisk::mount(d, "16m") else {
        eprintln!("skipped: this machine lets no test mount a tmpfs (unshare --mount)");
        return;
    };
    std::fs::create_dir(disk.path.join("fleet")).unwrap();
    std::os::unix::fs::symlink(disk.path.join("fleet"), d.join("fleet")).unwrap();
    let profile = go_cpu_profile(&corpus);
    let files: Vec<String> = (0..9)
        .map(|k| {
            let name = format!("e{k}.pb.gz");
            write_copy(&profile, DAY_ONE + k * 60_000_000_000, &d.join(&name));
            name
        })
        .collect();
    let receiving = Receiving::start(d, "fleet", "127.0.0.1:0");
    let send = |files: &[String]| -> Vec<bool> {
        let sends = exporting(d, &receiving.address, files);
        sends.into_iter().map(|s| s.join().unwrap()).collect()
    };
    assert_eq!(send(&files[..3]), [true; 3]);
    let before = reports(d);
    disk.fill();
    assert_eq!(send(&files[3..6]), [false; 3], "refused on a full disk");
    assert_nothing_hidden(d);
    assert!(
        reports(d) == before,
        "nothing of the refused exports stored"
    );
    // Three flushes' files to merge, and no space to merge them in.
    let (status, _, err) = common::run(d, &["store", "compact", "fleet"]);
    assert_ne!(status, 0, "compaction on a full disk: {err}");
    assert_nothing_hidden(d);
    assert!(reports(d) == before, "the store reads as it did");
    disk.free();
    assert_eq!(send(&files[3..]), [true; 6], "sent again, with space");
    drop(receiving);
    ok(d, &["store", "compact", "fleet"]);
    assert!(
        reports(d) == merged_traces(d, &files),
        "every profile there"
    );
    assert_each_profile_once(d, files.len());
}
