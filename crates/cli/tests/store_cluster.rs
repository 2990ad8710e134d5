//! The profile store's queries on an Apache DataFusion Ballista cluster: a
//! scheduler, Ballista's own, started on loopback in this process, and two
//! executors, `protoprof store executor` processes; reports, SQL and series
//! with `--cluster` answer as the same commands run here. Ballista's stock
//! executor, in this process, cannot run them, and says so in one line.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::sync::Arc;
use std::time::Duration;

use ballista_executor::executor_process::{start_executor_process, ExecutorProcessConfig};
use ballista_scheduler::cluster::BallistaCluster;
use ballista_scheduler::config::SchedulerConfig;
use ballista_scheduler::scheduler_process::start_server;
use common::{free_port, ok, run};
use protoprof_tests::corpus_dir;

/// A scheduler and executors on loopback, running while this lives.
struct Cluster {
    url: String,
    work_dirs: Vec<PathBuf>,
    executors: Vec<Child>,
    runtime: tokio::runtime::Runtime,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for executor in &mut self.executors {
            let _ = executor.kill();
            let _ = executor.wait();
        }
    }
}

impl Cluster {
    /// Starts a scheduler and `executors` executors of `kind`, each working
    /// in a directory of its own under `dir`, and waits until they listen.
    fn start(dir: &Path, executors: usize, kind: Executors) -> Cluster {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(4)
            .thread_stack_size(32 * 1024 * 1024)
            .enable_all()
            .build()
            .unwrap();
        let scheduler_port = free_port();
        let config = SchedulerConfig {
            bind_host: "127.0.0.1".into(),
            external_host: "127.0.0.1".into(),
            bind_port: scheduler_port,
            ..Default::default()
        };
        let address = format!("127.0.0.1:{scheduler_port}").parse().unwrap();
        runtime.spawn(async move {
            let cluster = BallistaCluster::new_from_config(&config).await.unwrap();
            start_server(cluster, address, Arc::new(config))
                .await
                .unwrap();
        });
        wait_for(scheduler_port);
        let mut cluster = Cluster {
            url: format!("df://127.0.0.1:{scheduler_port}"),
            work_dirs: Vec::new(),
            executors: Vec::new(),
            runtime,
        };
        for n in 0..executors {
            let work_dir = dir.join(format!("executor-{n}"));
            std::fs::create_dir_all(&work_dir).unwrap();
            let (port, grpc_port) = (free_port(), free_port());
            match kind {
                Executors::Stock => {
                    cluster.start_stock(scheduler_port, (port, grpc_port), &work_dir)
                }
                Executors::Protoprof => cluster.executors.push(protoprof_executor(
                    scheduler_port,
                    (port, grpc_port),
                    &work_dir,
                )),
            }
            wait_for(port);
            cluster.work_dirs.push(work_dir);
        }
        cluster
    }

    /// Ballista's stock executor, in this process.
    fn start_stock(&self, scheduler_port: u16, (port, grpc_port): (u16, u16), work_dir: &Path) {
        let config = ExecutorProcessConfig {
            bind_host: "127.0.0.1".into(),
            external_host: Some("127.0.0.1".into()),
            port,
            grpc_port,
            scheduler_host: "127.0.0.1".into(),
            scheduler_port,
            vcores: 2,
            work_dir: Some(work_dir.to_str().unwrap().to_string()),
            ..Default::default()
        };
        self.runtime.spawn(async move {
            start_executor_process(Arc::new(config)).await.unwrap();
        });
    }

    /// How many jobs the executors wrote output for, in all.
    fn jobs_run(&self) -> usize {
        self.work_dirs
            .iter()
            .map(|d| std::fs::read_dir(d).map_or(0, |entries| entries.count()))
            .sum()
    }
}

/// `protoprof store executor`, a process of its own.
fn protoprof_executor(
    scheduler_port: u16,
    (port, grpc_port): (u16, u16),
    work_dir: &Path,
) -> Child {
    let scheduler = format!("127.0.0.1:{scheduler_port}");
    let (port, grpc_port) = (port.to_string(), grpc_port.to_string());
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_protoprof"));
    command.args([
        "store",
        "executor",
        "--scheduler",
        &scheduler,
        "--bind",
        "127.0.0.1",
    ]);
    command.args([
        "--external-host",
        "127.0.0.1",
        "--port",
        &port,
        "--grpc-port",
        &grpc_port,
    ]);
    command
        .args(["--concurrent-tasks", "2", "--work-dir"])
        .arg(work_dir);
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// The executors a cluster runs.
#[derive(Clone, Copy)]
enum Executors {
    /// Ballista's stock executors: DataFusion's core functions only.
    Stock,
    /// `protoprof store executor`: those and DataFusion's nested functions.
    Protoprof,
}

/// Waits (at most 30 s) until something listens on `port`.
fn wait_for(port: u16) {
    for _ in 0..300 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("nothing listens on {port}");
}

/// A store of corpus profiles from three services in `dir/fleet`.
fn fleet(corpus: &Path, dir: &Path) {
    let services = [
        ("checkout", "pprof/real/go-cpu.pb.gz"),
        ("checkout", "pprof/go/go-cpu.pb.gz"),
        ("search", "pprof/real/go-cpu-span-id-labels.pb.gz"),
        ("heap", "pprof/real/go-heap.pb.gz"),
    ];
    for (service, file) in services {
        let path = corpus.join(file);
        ok(
            dir,
            &[
                "store",
                "add",
                "fleet",
                "--service",
                service,
                path.to_str().unwrap(),
            ],
        );
    }
}

#[test]
fn a_cluster_answers_as_this_process_does() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    fleet(&corpus, dir.path());
    let cluster = Cluster::start(dir.path(), 2, Executors::Protoprof);
    let commands: [&[&str]; 7] = [
        &["top", "--store", "fleet", "--select", r#"service.name="checkout""#],
        // A sample label: a map lookup on the executors.
        &["tags", "--store", "fleet", "--select", r#"function=~"sl.*""#],
        &["traces", "--store", "fleet", "--select", r#"service.name=~"check.*|search""#],
        &["folded", "--store", "fleet", "--sample-type", "alloc_space"],
        &["store", "series", "fleet", "--step", "1h", "--group-by", "service.name"],
        &[
            "query",
            "--store",
            "fleet",
            "SELECT service_name, sample_type, sum(value) AS total FROM samples \
             GROUP BY 1, 2 ORDER BY 1, 2",
        ],
        &[
            "query",
            "--store",
            "fleet",
            "--format",
            "csv",
            "SELECT function_name, sum(value) AS flat FROM samples JOIN stack_leaf USING (stack_id) \
             WHERE sample_type = 'cpu' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 20",
        ],
    ];
    for command in commands {
        let here = ok(dir.path(), command);
        assert!(here.lines().count() > 3, "{command:?}: {here}");
        let jobs_before = cluster.jobs_run();
        let mut on_cluster = command.to_vec();
        on_cluster.extend(["--cluster", &cluster.url]);
        assert_eq!(ok(dir.path(), &on_cluster), here, "{command:?}");
        assert!(
            cluster.jobs_run() > jobs_before,
            "{command:?}: the executors ran nothing"
        );
    }
    // A selection of nothing: no ids to look up, the same answer.
    let nothing = [
        "top",
        "--store",
        "fleet",
        "--select",
        r#"service.name="nobody""#,
    ];
    let here = run(dir.path(), &nothing);
    let on_cluster = run(
        dir.path(),
        &[&nothing[..], &["--cluster", &cluster.url]].concat(),
    );
    assert_eq!(on_cluster, here, "a selection of nothing");
}

#[test]
fn a_cluster_that_cannot_answer_is_one_line() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    fleet(&corpus, dir.path());
    let stock = Cluster::start(dir.path(), 1, Executors::Stock);
    let nobody = format!("df://127.0.0.1:{}", free_port());
    let cases = [
        (nobody.as_str(), "cluster df://127.0.0.1"),
        ("http://127.0.0.1:50050", "expected df://host:port"),
        (stock.url.as_str(), "nested functions"),
    ];
    for (url, says) in cases {
        let (code, _, stderr) = run(dir.path(), &["top", "--store", "fleet", "--cluster", url]);
        assert_ne!(code, 0, "{url}");
        assert_eq!(stderr.trim().lines().count(), 1, "{url}: {stderr}");
        assert!(stderr.contains(says), "{url}: {stderr}");
    }
    // An executor with no scheduler to join, or no address for one.
    let unreachable = format!("127.0.0.1:{}", free_port());
    let (port, grpc_port) = (free_port().to_string(), free_port().to_string());
    for (scheduler, says) in [
        (unreachable.as_str(), "Could not connect to scheduler"),
        ("scheduler-without-port", "expected HOST:PORT"),
    ] {
        let executor = [
            "store",
            "executor",
            "--scheduler",
            scheduler,
            "--bind",
            "127.0.0.1",
        ];
        let ports = ["--port", &port, "--grpc-port", &grpc_port];
        let (code, _, stderr) = run(dir.path(), &[&executor[..], &ports].concat());
        assert_eq!(code, 2, "{scheduler}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "{scheduler}: {stderr}");
        assert!(stderr.contains(says), "{scheduler}: {stderr}");
    }
}

#[test]
fn a_cluster_reads_what_was_written_since_its_last_query() {
    let Some(corpus) = corpus_dir() else { return };
    let dir = tempfile::tempdir().unwrap();
    fleet(&corpus, dir.path());
    let cluster = Cluster::start(dir.path(), 1, Executors::Protoprof);
    let top = ["top", "--store", "fleet", "--sample-type", "samples"];
    let on_cluster = [&top[..], &["--cluster", &cluster.url]].concat();
    assert_eq!(ok(dir.path(), &on_cluster), ok(dir.path(), &top));
    // A store opened once on the cluster, as `serve --store --cluster`.
    let engine = protoprof_store::Engine::cluster(&cluster.url).unwrap();
    let store = protoprof_store::Store::open_on(&dir.path().join("fleet"), &engine).unwrap();
    let total = || {
        let query = protoprof_store::Query {
            sample_types: vec!["samples".into()],
            ..Default::default()
        };
        let merged = store.select(&query).unwrap().profile;
        merged.sample.iter().map(|s| s.value[0]).sum::<i64>()
    };
    let before = total();
    // The scheduler has listed the tables; a file lands in a partition it
    // listed, and one in a partition it did not.
    let added = [
        ("checkout", "pprof/real/go-cpu.pb.gz"),
        ("new", "pprof/go/go-cpu.pb.gz"),
    ];
    for (service, file) in added {
        let path = corpus.join(file);
        let add = ["store", "add", "fleet", "--service", service];
        let resource = ["--resource", "host.name=later", path.to_str().unwrap()];
        ok(dir.path(), &[&add[..], &resource].concat());
    }
    let here = ok(dir.path(), &top);
    assert_eq!(ok(dir.path(), &on_cluster), here);
    assert!(
        total() > before,
        "the store opened on the cluster read no new file"
    );
}
