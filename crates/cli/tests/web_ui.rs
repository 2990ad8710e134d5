//! `protoprof serve` in a real browser: Debian's Chromium driven through
//! chromedriver (WebDriver, by fantoccini), on loopback. Each view is
//! opened on corpus profiles, clicked, searched, refined and compared, and
//! the numbers on the page are checked against the command line's reports
//! of the same profile. Screenshots go to `target/ui-screenshots/`
//! (docs/ui.md shows them).
//!
//! The server's refusals (other hosts, other methods, bad parameters) are
//! checked over plain HTTP, without a browser.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::ok;
use fantoccini::actions::{InputSource, MouseActions, PointerAction, MOUSE_BUTTON_RIGHT};
use fantoccini::{Client, ClientBuilder, Locator};
use protoprof_tests::{chromium, corpus_dir, workspace_root, Chromium};
use serde_json::{json, Value};

/// One browser at a time: two cores run the suite.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// `protoprof serve` on a free loopback port, stopped on drop.
struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start(dir: &Path, args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_protoprof"))
            .current_dir(dir)
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("protoprof serve starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("Serving web UI on ")
            .unwrap_or_else(|| panic!("serve printed {line:?}"))
            .trim_end_matches('/')
            .to_string();
        Server { child, url }
    }

    /// A raw HTTP/1.1 request: (status line, headers and body as text).
    fn raw(&self, request: &str) -> (String, String) {
        let address = self.url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (status, rest) = answer.split_once("\r\n").unwrap_or((&answer, ""));
        (status.to_string(), rest.to_string())
    }

    fn get(&self, path: &str, host: &str) -> (String, String) {
        self.raw(&format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        ))
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A headless Chromium session through its own chromedriver.
struct Page {
    client: Client,
    driver: Child,
}

impl Page {
    async fn open(chromium: &Chromium) -> Page {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(&chromium.driver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let deadline = Instant::now() + Duration::from_secs(30);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let capabilities = json!({
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium.browser,
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu",
                         "--disable-dev-shm-usage", "--window-size=1400,1000"],
            },
        });
        // Plain HTTP: chromedriver is on loopback.
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = ClientBuilder::new(connector)
            .capabilities(capabilities.as_object().unwrap().clone())
            .connect(&format!("http://127.0.0.1:{port}"))
            .await
            .expect("a chromium session");
        Page { client, driver }
    }

    /// Goes to `url` and waits until the page says `view` is drawn.
    async fn show(&self, url: &str, view: &str) {
        self.client.goto(url).await.unwrap();
        self.ready(view).await;
    }

    async fn ready(&self, view: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = self.js("return document.body.dataset.ready").await;
            if ready == json!(view) {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "{view} never drawn (ready={ready})"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn js(&self, script: &str) -> Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    async fn text(&self, css: &str) -> String {
        let script = format!("return document.querySelector({css:?}).textContent");
        self.js(&script)
            .await
            .as_str()
            .unwrap_or_default()
            .to_string()
    }

    async fn click(&self, css: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
    }

    /// Moves the mouse to the middle of flame graph node `node` and, with
    /// `button`, presses it there.
    async fn point_at_node(&self, node: u64, button: Option<u64>) {
        let script = format!(
            "const [i, b] = protoprof.flame.boxes.find(([i]) => i === {node});
             const r = document.getElementById('flame').getBoundingClientRect();
             return [r.left + b.x + Math.min(b.w / 2, 40), r.top + b.y + 9];"
        );
        let at = self.js(&script).await;
        let (x, y) = (at[0].as_f64().unwrap(), at[1].as_f64().unwrap());
        let mut mouse = MouseActions::new("mouse".into()).then(PointerAction::MoveTo {
            duration: None,
            x: x.round(),
            y: y.round(),
        });
        if let Some(button) = button {
            mouse = mouse
                .then(PointerAction::Down { button })
                .then(PointerAction::Up { button });
        }
        self.client.perform_actions(mouse).await.unwrap();
    }

    async fn screenshot(&self, name: &str) {
        let png = self.client.screenshot().await.unwrap();
        let dir = workspace_root().join("target/ui-screenshots");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
    }

    async fn close(mut self) {
        let _ = self.client.close().await;
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// The sum of `protoprof folded`'s values with `args`.
fn folded_total(dir: &Path, args: &[&str]) -> i64 {
    let out = ok(dir, &[&["folded"], args].concat());
    out.lines()
        .map(|l| l.rsplit_once(' ').unwrap().1.parse::<i64>().unwrap())
        .sum()
}

/// `protoprof top`'s header lines and rows (the six columns, the name and
/// its inline mark as one).
fn cli_top(dir: &Path, args: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let out = ok(dir, &[&["top"], args].concat());
    let (header, table) = out.split_once("      flat  flat%").unwrap();
    let rows = table
        .lines()
        .skip(1)
        .map(|line| {
            let mut cells: Vec<String> =
                line.split_whitespace().take(5).map(String::from).collect();
            let name = line
                .split_whitespace()
                .skip(5)
                .collect::<Vec<_>>()
                .join(" ");
            cells.push(name);
            cells
        })
        .collect();
    (header.lines().map(String::from).collect(), rows)
}

/// The top table's rows as the page shows them.
async fn page_top_rows(page: &Page, table: &str) -> Vec<Vec<String>> {
    let script = format!(
        "return [...document.querySelectorAll('{table} table.top tr')].slice(1)
            .map(tr => [...tr.children].map(td => td.textContent))"
    );
    serde_json::from_value(page.js(&script).await).unwrap()
}

fn corpus_file(corpus: &Path, name: &str) -> String {
    corpus.join(name).to_string_lossy().into_owned()
}

#[test]
fn flame_graph_search_zoom_and_refine_show_the_clis_numbers() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = workspace_root();
    let file = corpus_file(&corpus, "pprof/real/go-cpu-labels-exemplars.pb.gz");
    let server = Server::start(&dir, &[&file]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/", server.url), "flamegraph").await;
        // The whole graph's width is every sample's value, as `folded` sums it.
        let total = page.js("return protoprof.flameData.total").await;
        assert_eq!(total, json!(folded_total(&dir, &[&file])));
        // The top table beside it: the rows of `protoprof top`.
        let (_, rows) = cli_top(&dir, &[&file]);
        assert_eq!(page_top_rows(&page, "#side-top").await, rows);
        page.screenshot("flamegraph").await;

        // Search: matches highlighted, their share of the total shown.
        let search = page.client.find(Locator::Id("search")).await.unwrap();
        search.send_keys("main\\.work").await.unwrap();
        let focused = folded_total(&dir, &["--focus", "main\\.work", &file]);
        let share = format!("{:.2}%", 100.0 * focused as f64 / total.as_f64().unwrap());
        let shown = page.text("#search-share").await;
        assert!(shown.ends_with(&format!("({share})")), "{shown} vs {share}");
        page.screenshot("flamegraph-search").await;

        // Hover over a root: its name and value, without delay.
        page.point_at_node(0, None).await;
        let tip = page.text("#tooltip").await;
        assert!(tip.starts_with("runtime.main"), "{tip}");
        assert!(tip.contains("100.00% of the total"), "{tip}");

        // Click to zoom on a node.
        let node = page
            .js("return protoprof.flameData.names.indexOf('main.fastFunction')")
            .await;
        let node = page
            .js(&format!("return protoprof.flameData.name.indexOf({node})"))
            .await
            .as_u64()
            .unwrap();
        page.point_at_node(node, Some(0)).await;
        assert_eq!(page.js("return protoprof.flame.zoom").await, json!(node));

        // Right-click, focus: the URL carries pprof's f= and the graph is
        // what `folded --focus` gives.
        page.point_at_node(node, Some(MOUSE_BUTTON_RIGHT)).await;
        assert_eq!(page.text("#menu-name").await, "main.fastFunction");
        page.click("#menu [data-action=f]").await;
        page.ready("flamegraph").await;
        let url = page.client.current_url().await.unwrap();
        let f = url
            .query_pairs()
            .find(|(k, _)| k == "f")
            .map(|(_, v)| v.into_owned());
        assert_eq!(f.as_deref(), Some("^main\\.fastFunction$"));
        let focused = folded_total(&dir, &["--focus", "^main\\.fastFunction$", &file]);
        assert_eq!(
            page.js("return protoprof.flameData.total").await,
            json!(focused)
        );
        assert!(page
            .text("#filters")
            .await
            .contains("f=^main\\.fastFunction$"));

        // Callers of a function: the graph turned over at it.
        page.show(
            &format!("{}/ui/flamegraph?pivot=%5Emain%5C.work%24", server.url),
            "flamegraph",
        )
        .await;
        let roots = page
            .js("const d = protoprof.flameData; return d.parent.flatMap((p, i) => p < 0 ? [d.names[d.name[i]]] : [])")
            .await;
        assert_eq!(roots, json!(["main.work"]));
        page.close().await;
    });
}

#[test]
fn top_peek_traces_tags_and_graph_equal_the_cli() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = workspace_root();
    let file = corpus_file(&corpus, "pprof/real/go-cpu-labels-exemplars.pb.gz");
    let server = Server::start(&dir, &[&file]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/ui/top?g=lines", server.url), "top")
            .await;
        let (header, rows) = cli_top(&dir, &["--granularity", "lines", &file]);
        assert_eq!(page.text("#top-view pre").await, header.join("\n"));
        assert_eq!(page_top_rows(&page, "#top-view").await, rows);
        // Sortable: by cum.
        page.click("#top-view th[data-sort=cum]").await;
        let cums: Vec<String> = page_top_rows(&page, "#top-view")
            .await
            .iter()
            .map(|r| r[3].clone())
            .collect();
        let (_, by_cum) = cli_top(&dir, &["--granularity", "lines", "--cum", &file]);
        let expect: Vec<String> = by_cum.iter().map(|r| r[3].clone()).collect();
        assert_eq!(cums, expect);
        page.screenshot("top").await;

        // Peek, as pprof's web UI: the search regexp focuses and peeks.
        page.show(&format!("{}/ui/peek?f=main%5C.work", server.url), "peek")
            .await;
        let peek = ok(
            &dir,
            &["peek", "main\\.work", "--focus", "main\\.work", &file],
        );
        assert_eq!(page.text("#text").await, peek);
        for (view, command) in [("traces", "traces"), ("tags", "tags")] {
            page.show(&format!("{}/ui/{view}", server.url), view).await;
            assert_eq!(
                page.text("#text").await,
                ok(&dir, &[command, &file]),
                "{view}"
            );
        }
        page.screenshot("tags").await;

        // Tag focus from the label picker.
        page.show(&format!("{}/ui/flamegraph", server.url), "flamegraph")
            .await;
        page.js("const k = document.getElementById('tagkey'); k.value = 'function'; k.dispatchEvent(new Event('change'));").await;
        page.js("document.getElementById('tagvalue').value = 'fast'")
            .await;
        page.click("[data-tag=tf]").await;
        page.ready("flamegraph").await;
        let focused = folded_total(&dir, &["--tagfocus", "function=^fast$", &file]);
        assert_eq!(
            page.js("return protoprof.flameData.total").await,
            json!(focused)
        );

        // The call graph, drawn by Graphviz.
        page.show(&format!("{}/ui/graph", server.url), "graph")
            .await;
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let width = page.js("const i = document.querySelector('#graph-box img'); return i && i.complete ? i.naturalWidth : 0").await;
            if width.as_u64().unwrap_or(0) > 100 {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "no call graph: {}",
                page.text("#graph-box").await
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        page.screenshot("graph").await;
        page.close().await;
    });
}

/// A profile whose every string is markup that would run if written as HTML.
fn hostile_profile(dir: &Path) -> PathBuf {
    use protobuf::Message;
    use protoprof_model_pprof::perftools::profiles::{
        Function, Label, Line, Location, Profile, Sample, ValueType,
    };
    let strings = [
        "",
        "samples",
        "count",
        "<img src=x onerror=\"window.pwned=1\">",
        "<script>window.pwned=2</script>",
        "</pre><svg onload=window.pwned=3>",
        "\"><iframe src=javascript:window.pwned=4>",
    ];
    let function = |id: u64, name: i64| Function {
        id,
        name,
        // No system name: the names are shown as they are, not simplified
        // as demangled C++ (which markup can look like).
        filename: 5,
        ..Default::default()
    };
    let location = |id: u64| Location {
        id,
        line: vec![Line {
            function_id: id,
            line: 1,
            ..Default::default()
        }],
        ..Default::default()
    };
    let p = Profile {
        sample_type: vec![ValueType {
            type_: 1,
            unit: 2,
            ..Default::default()
        }],
        sample: vec![Sample {
            location_id: vec![1, 2],
            value: vec![5],
            label: vec![Label {
                key: 6,
                str: 3,
                ..Default::default()
            }],
            ..Default::default()
        }],
        location: vec![location(1), location(2)],
        function: vec![function(1, 3), function(2, 4)],
        string_table: strings.map(String::from).to_vec(),
        comment: vec![5],
        ..Default::default()
    };
    let path = dir.join("hostile.pb");
    std::fs::write(&path, p.write_to_bytes().unwrap()).unwrap();
    path
}

#[test]
fn profile_strings_are_shown_as_text_and_never_run() {
    let Some(chromium) = chromium() else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let temp = tempfile::tempdir().unwrap();
    let file = hostile_profile(temp.path());
    let server = Server::start(temp.path(), &[file.to_str().unwrap()]);
    block_on(async {
        let page = Page::open(&chromium).await;
        let views = [
            "flamegraph",
            "flamegraph?tagroot=%22%3E%3Ciframe%20src%3Djavascript%3Awindow.pwned%3D4%3E",
            "top",
            "peek?f=img",
            "traces",
            "tags",
            "message",
            "graph",
        ];
        for view in views {
            let name = view.split('?').next().unwrap();
            page.show(&format!("{}/ui/{view}", server.url), name).await;
            page.point_at_node_if_flame().await;
            assert_eq!(
                page.js("return window.pwned === undefined").await,
                json!(true),
                "{view}"
            );
            let injected = page.js("return document.querySelectorAll('main img:not(#graph-box img), main script, main svg, main iframe').length").await;
            assert_eq!(injected, json!(0), "{view}");
        }
        // The names are there, as text.
        page.show(&format!("{}/ui/top", server.url), "top").await;
        let names: Vec<String> = page_top_rows(&page, "#top-view")
            .await
            .iter()
            .map(|r| r[5].clone())
            .collect();
        assert!(
            names.contains(&"<img src=x onerror=\"window.pwned=1\">".to_string()),
            "{names:?}"
        );
        page.show(&format!("{}/ui/traces", server.url), "traces")
            .await;
        assert!(page
            .text("#text")
            .await
            .contains("<script>window.pwned=2</script>"));
        page.close().await;
    });
}

impl Page {
    /// On the flame graph, hovers the first node (its tooltip is drawn too).
    async fn point_at_node_if_flame(&self) {
        if self.js("return document.body.dataset.view").await == json!("flamegraph")
            && self
                .js("return protoprof.flame.boxes.length")
                .await
                .as_u64()
                > Some(0)
        {
            self.point_at_node(0, None).await;
            self.point_at_node(0, Some(MOUSE_BUTTON_RIGHT)).await;
        }
    }
}

#[test]
fn compare_breakdown_and_message_views() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = workspace_root();
    // A Go CPU profile with its stacks cut at 64 frames, and repaired:
    // the same total, moved between call paths.
    let new = corpus_file(&corpus, "pprof/real/go-cpu-truncated-stacks-fixed.pb.gz");
    let base = corpus_file(&corpus, "pprof/real/go-cpu-truncated-stacks.pb.gz");
    let server = Server::start(&dir, &["--diff-base", &base, &new]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/ui/flamegraph", server.url), "flamegraph")
            .await;
        // Differential: the profile's widths, each node's base value beside.
        let data = page.js("const d = protoprof.flameData; return [d.total, d.base_total, d.base.length === d.value.length]").await;
        let si = page.js("return document.getElementById('si').value").await;
        let si = si.as_str().unwrap();
        assert_eq!(
            data[0],
            json!(folded_total(&dir, &["--sample-index", si, &new]))
        );
        assert_eq!(
            data[1],
            json!(folded_total(&dir, &["--sample-index", si, &base]))
        );
        assert_eq!(data[2], json!(true));
        page.screenshot("compare-differential").await;
        // Side by side: the base's own graph beside.
        page.js("const c = document.getElementById('compare'); c.value = 'side'; c.dispatchEvent(new Event('change'));").await;
        page.ready("flamegraph").await;
        assert_eq!(
            page.js("return document.getElementById('base-box').hidden")
                .await,
            json!(false)
        );
        assert_eq!(page.js("return protoprof.base.data.total").await, data[1]);
        page.screenshot("compare-side-by-side").await;
        page.close().await;
    });
    drop(server);

    // OTLP: broken down by a resource attribute.
    let otlp = corpus_file(
        &corpus,
        "otlp/v1development/v1development-1.10-ebpf-export-request.pb",
    );
    let server = Server::start(&dir, &[&otlp]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/ui/flamegraph", server.url), "flamegraph")
            .await;
        page.js("const k = document.getElementById('tagroot'); k.value = 'process.executable.name'; k.dispatchEvent(new Event('change'));").await;
        page.ready("flamegraph").await;
        let roots = page
            .js("const d = protoprof.flameData; return d.parent.flatMap((p, i) => p < 0 ? [d.names[d.name[i]]] : [])")
            .await;
        let tags = ok(
            &dir,
            &["tags", "--tagshow", "process.executable.name", &otlp],
        );
        for name in ["xdg-desktop-portal", "containerd", "kwin_wayland"] {
            assert!(tags.contains(name));
            // The value as a frame, as pprof's -tagroot names it.
            assert!(roots.as_array().unwrap().contains(&json!(name)), "{roots}");
        }
        page.screenshot("otlp-breakdown").await;
        page.close().await;
    });
    drop(server);

    // The message: validation's findings on the paths they name.
    let broken = corpus_file(&corpus, "malformed/duplicate-location-id.pb");
    let server = Server::start(&dir, &[&broken]);
    let (_, report, _) = common::run(&dir, &["validate", "--format", "json", &broken]);
    let report: Value = serde_json::from_str(&report).unwrap();
    let diagnostics = report[0]["report"]["diagnostics"]
        .as_array()
        .unwrap()
        .clone();
    assert!(!diagnostics.is_empty());
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/ui/message", server.url), "message")
            .await;
        let findings = page
            .js("return document.querySelectorAll('#findings .finding').length")
            .await;
        assert_eq!(findings, json!(diagnostics.len()));
        message_action(
            &page,
            "document.querySelector('#findings .finding').click()",
        )
        .await;
        let current = page
            .js("return document.querySelector('#message-tree .current').dataset.path")
            .await;
        assert_eq!(current, diagnostics[0]["path"]);
        page.screenshot("message").await;
        page.close().await;
    });
}

#[test]
fn the_server_answers_loopback_names_only_and_refuses_bad_requests() {
    let Some(corpus) = corpus_dir() else {
        return;
    };
    let dir = workspace_root();
    let file = corpus_file(&corpus, "pprof/real/go-cpu.pb.gz");
    let server = Server::start(&dir, &[&file]);
    let (status, rest) = server.get("/api/meta", "localhost:1234");
    assert!(status.ends_with("200 OK"), "{status}");
    assert!(rest.contains("content-security-policy: default-src 'none'; script-src 'self'"));
    // DNS rebinding: a page of another name that resolves to 127.0.0.1.
    let (status, _) = server.get("/api/meta", "attacker.example:8080");
    assert!(status.ends_with("403 Forbidden"), "{status}");
    let (status, _) = server.raw("POST /api/meta HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
    assert!(status.ends_with("405 Method Not Allowed"), "{status}");
    // Changes (the message editor's) come from the page only: JSON (a
    // cross-origin page must ask first, and its preflight is refused), of
    // the server's own origin, at most 1 MiB; save takes a name, not a path.
    let post = |path: &str, headers: &str, body: &str| {
        server.raw(&format!(
            "POST {path} HTTP/1.1\r\nHost: localhost\r\n{headers}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        ))
    };
    let json_type = "Content-Type: application/json\r\n";
    let (status, _) = post(
        "/api/message/save",
        "Content-Type: text/plain\r\n",
        r#"{"file":"x"}"#,
    );
    assert!(status.ends_with("403 Forbidden"), "{status}");
    let from_elsewhere = format!("{json_type}Origin: http://attacker.example\r\n");
    let (status, _) = post("/api/message/edit", &from_elsewhere, "{}");
    assert!(status.ends_with("403 Forbidden"), "{status}");
    let (status, _) = server
        .raw("OPTIONS /api/message/edit HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    assert!(status.ends_with("405 Method Not Allowed"), "{status}");
    let (status, body) = post(
        "/api/message/save",
        json_type,
        r#"{"file":"../escaped.pb"}"#,
    );
    assert!(
        status.ends_with("400 Bad Request") && body.contains("without directories"),
        "{body}"
    );
    let (status, body) = post(
        "/api/message/edit",
        json_type,
        r#"{"op":"set","path":"period","value":"ten"}"#,
    );
    assert!(
        status.ends_with("400 Bad Request") && body.contains("\\\"ten\\\" is not"),
        "{body}"
    );
    let (status, _) = post("/api/message/edit", json_type, &"x".repeat(2 << 20));
    assert!(status.ends_with("413 Payload Too Large"), "{status}");
    // No file is served but the embedded ones.
    for path in [
        "/ui/../Cargo.toml",
        "/ui/%2e%2e/Cargo.toml",
        "/etc/passwd",
        "/ui/app.js.map",
    ] {
        let (status, _) = server.get(path, "localhost");
        assert!(status.ends_with("404 Not Found"), "{path}: {status}");
    }
    let (status, body) = server.get("/api/top?f=(", "localhost");
    assert!(status.ends_with("400 Bad Request"), "{status}");
    assert!(body.contains(r#"{"error":"f: regex parse error"#), "{body}");
    let (status, body) = server.get("/api/top?si=nothing", "localhost");
    assert!(
        status.ends_with("400 Bad Request") && body.contains("si: no sample type"),
        "{body}"
    );
}

#[test]
fn source_view_lists_what_list_lists_from_the_allowed_path_only() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = workspace_root();
    let file = corpus_file(&corpus, "pprof/go/go-cpu.pb.gz");
    let source = corpus.join("../tools/gen-go-profiles");
    let source = source.to_str().unwrap();
    let list = [
        "list",
        "main\\.burn",
        "--source-path",
        source,
        "--focus",
        "main\\.burn",
    ];
    let listing = ok(&dir, &[&list[..], &[file.as_str()]].concat());
    let server = Server::start(&dir, &["--source-path", source, &file]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(
            &format!("{}/ui/source?f=main%5C.burn", server.url),
            "source",
        )
        .await;
        assert!(listing.contains("func burn("), "{listing}");
        assert_eq!(page.text("#text").await, listing);
        page.screenshot("source").await;
        page.close().await;
    });
    drop(server);
    // Confined: the profile names /go/src/corpus/shared/tools/gen-go-profiles/main.go,
    // an absolute path outside the allowed directory: it is not opened.
    let elsewhere = tempfile::tempdir().unwrap();
    let allowed = elsewhere.path().to_str().unwrap();
    let server = Server::start(&dir, &["--source-path", allowed, &file]);
    let (status, body) = server.get("/api/source?f=main%5C.burn", "localhost");
    assert!(status.ends_with("200 OK"), "{status}");
    let body: Value = serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    let text = body["text"].as_str().unwrap();
    assert!(text.contains(" Error: /go/src/corpus/shared/tools/gen-go-profiles/main.go is outside the source path"), "{text}");
    // As pprof's web view, the lines with samples are still shown, each
    // with its values and `???` for the text it could not read: the same
    // lines and values `list` shows beside the real source.
    let sampled = |text: &str, placeholder: bool| -> Vec<String> {
        text.lines()
            .filter(|l| l.ends_with(":???") == placeholder && l.contains(':'))
            .filter_map(|l| {
                let (numbers, _) = l.split_once(':')?;
                let fields: Vec<&str> = numbers.split_whitespace().collect();
                let sampled = fields.len() == 3 && (fields[0] != "." || fields[1] != ".");
                sampled.then(|| fields.join(" "))
            })
            .collect()
    };
    let placeholders = sampled(text, true);
    assert!(!placeholders.is_empty(), "{text}");
    assert_eq!(placeholders, sampled(&listing, false), "{text}\n{listing}");
}

/// `callgraph --format svg` pans and zooms in a browser, as pprof's `-svg`
/// does: the wheel zooms around the pointer, dragging pans, a double click
/// resets; the drawing fills the window.
#[test]
fn a_saved_call_graph_pans_and_zooms() {
    let Some(chromium) = chromium() else {
        return;
    };
    if protoprof_web::dot_to_svg("digraph { a }").is_err() {
        return; // no Graphviz
    }
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let cpu = workspace_root().join("examples/cpu.pb.gz");
    let svg = dir.path().join("cpu.svg");
    let args = ["callgraph", "--format", "svg", "-o", svg.to_str().unwrap()];
    ok(dir.path(), &[&args[..], &[cpu.to_str().unwrap()]].concat());
    block_on(async {
        let page = Page::open(&chromium).await;
        page.client
            .goto(&format!("file://{}", svg.display()))
            .await
            .unwrap();
        let transform =
            "return document.getElementById('viewport')?.getAttribute('transform') ?? null";
        let first = json!("scale(0.5,0.5) translate(0,0)");
        assert_eq!(page.js(transform).await, first, "pprof's first view");
        let size = page
            .js("const r = document.documentElement.getBoundingClientRect(); return [r.width, r.height]")
            .await;
        assert!(
            size[0].as_f64().unwrap() > 1000.0,
            "fills the window: {size}"
        );
        page.js(
            "const e = new WheelEvent('wheel', {deltaY: -300, clientX: 500, clientY: 400, \
             bubbles: true, cancelable: true}); document.documentElement.dispatchEvent(e);",
        )
        .await;
        let zoomed = page.js(transform).await;
        let zoomed = zoomed.as_str().unwrap().to_string();
        assert!(zoomed.contains("scale(0.9"), "{zoomed}");
        page.js(
            "const d = document.documentElement;
             d.dispatchEvent(new MouseEvent('mousedown', {button: 0, clientX: 100, clientY: 100, bubbles: true}));
             window.dispatchEvent(new MouseEvent('mousemove', {clientX: 160, clientY: 130, bubbles: true}));
             window.dispatchEvent(new MouseEvent('mouseup', {clientX: 160, clientY: 130, bubbles: true}));",
        )
        .await;
        let panned = page.js(transform).await.as_str().unwrap().to_string();
        assert!(panned != zoomed && panned.contains("scale(0.9"), "{panned}");
        page.js(
            "document.documentElement.dispatchEvent(new MouseEvent('dblclick', {bubbles: true}));",
        )
        .await;
        assert_eq!(page.js(transform).await, first);
        page.close().await;
    });
}

/// A `weblist` page in the browser: a line with instructions shows them
/// when clicked and hides them when clicked again; a line without any
/// does nothing; the page runs nothing from the profile.
#[test]
fn a_weblist_page_shows_a_lines_instructions_on_click() {
    let Some(chromium) = chromium() else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let cpu = workspace_root().join("examples/cpu.pb.gz");
    let html = dir.path().join("list.html");
    let args = ["weblist", "main\\.", "-o", html.to_str().unwrap()];
    ok(dir.path(), &[&args[..], &[cpu.to_str().unwrap()]].concat());
    block_on(async {
        let page = Page::open(&chromium).await;
        (page
            .client
            .goto(&format!("file://{}", html.display()))
            .await)
            .unwrap();
        let shown = "return [...document.querySelectorAll('.asm')]
                     .filter(a => getComputedStyle(a).display !== 'none').length";
        let blocks = page
            .js("return document.querySelectorAll('.asm').length")
            .await;
        assert!(blocks.as_u64().unwrap() > 3, "{blocks}");
        assert_eq!(page.js(shown).await, json!(0), "hidden at first");
        page.click(".livesrc").await;
        assert_eq!(page.js(shown).await, json!(1));
        let first =
            "return getComputedStyle(document.querySelector('.livesrc').nextSibling).display";
        assert_eq!(page.js(first).await, json!("block"));
        let calls = page.text(".asm .inlinesrc + .unimportant").await;
        assert!(calls.contains(".go:"), "{calls}");
        page.click(".deadsrc").await;
        assert_eq!(
            page.js(shown).await,
            json!(1),
            "a line without instructions"
        );
        page.click(".livesrc").await;
        assert_eq!(page.js(shown).await, json!(0));
        page.close().await;
    });
}

/// A store of three services' corpus profiles in `dir/fleet`.
fn store_of_services(corpus: &Path, dir: &Path) {
    let services = [
        ("checkout", "pprof/real/go-cpu.pb.gz"),
        ("checkout", "pprof/go/go-cpu.pb.gz"),
        ("search", "pprof/real/go-cpu-span-id-labels.pb.gz"),
    ];
    for (service, file) in services {
        let path = corpus_file(corpus, file);
        ok(dir, &["store", "add", "fleet", "--service", service, &path]);
    }
}

impl Page {
    /// Waits until the store bar has its labels and chart.
    async fn store_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.js("return document.body.dataset.storeReady").await != json!("yes") {
            assert!(Instant::now() < deadline, "the store bar never loaded");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Sets input `id` to `value` (as typed) and presses button `button`.
    async fn fill_and_press(&self, fields: &[(&str, &str)], button: &str) {
        for (id, value) in fields {
            let script = format!("document.getElementById({id:?}).value = {value:?}");
            self.js(&script).await;
        }
        self.click(button).await;
    }
}

#[test]
fn a_store_is_selected_charted_and_compared_in_the_page() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    store_of_services(&corpus, d);
    let server = Server::start(d, &["--store", "fleet"]);
    let checkout = r#"service.name="checkout""#;
    let search = r#"service.name="search""#;
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/", server.url), "flamegraph").await;
        page.store_ready().await;
        // The selector offers the services there are; the chart has bars.
        let offered = page
            .js("return [...document.querySelectorAll('#store-labels option')].map(o => o.value)")
            .await;
        for service in [checkout, search] {
            assert!(
                offered.as_array().unwrap().contains(&json!(service)),
                "{offered}"
            );
        }
        let bars = page
            .js("return document.querySelectorAll('#store-chart rect').length")
            .await;
        assert!(bars.as_u64() > Some(0), "no bars");
        // The chart's bars sum to every sample of the chosen type.
        let charted = page
            .js("return protoprof.storeSeries().points.reduce((a, p) => a + p.value, 0)")
            .await;
        let sample_type = page.js("return protoprof.storeSeries().sample_type").await;
        let all = [
            "--store",
            "fleet",
            "--sample-type",
            sample_type.as_str().unwrap(),
        ];
        assert_eq!(charted, json!(folded_total(d, &all)));

        // Grouped by service: a colour and a legend entry for each.
        page.js("const by = document.getElementById('store-by'); by.value = 'service.name'; by.dispatchEvent(new Event('change'))").await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while !page.text("#store-legend").await.contains("search") {
            assert!(Instant::now() < deadline, "no legend");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let groups = page
            .js("return new Set([...document.querySelectorAll('#store-chart rect')].map(r => r.getAttribute('fill'))).size")
            .await;
        assert!(groups.as_u64() >= Some(2), "{groups}");
        page.screenshot("store").await;

        // A selection: the flame graph is that service's, as the CLI counts it.
        page.fill_and_press(
            &[
                ("store-select", search),
                ("store-from", ""),
                ("store-to", ""),
            ],
            "#store-apply",
        )
        .await;
        page.ready("flamegraph").await;
        let total = page.js("return protoprof.flameData.total").await;
        assert_eq!(
            total,
            json!(folded_total(d, &["--store", "fleet", "--select", search]))
        );
        assert!(page.text("#title").await.contains(search));

        // Compared with another: the base's total beside the profile's.
        page.fill_and_press(
            &[("store-select", checkout), ("store-bselect", search)],
            "#store-compare",
        )
        .await;
        page.ready("flamegraph").await;
        let base_total = page.js("return protoprof.flameData.base_total").await;
        let new_total = page.js("return protoprof.flameData.total").await;
        assert_eq!(
            base_total,
            json!(folded_total(d, &["--store", "fleet", "--select", search]))
        );
        assert_eq!(
            new_total,
            json!(folded_total(d, &["--store", "fleet", "--select", checkout]))
        );
        assert!(page.text("#title").await.contains("compared with"));
        page.screenshot("store-compare").await;

        // A selector that does not parse: one line on the page, no profile.
        page.fill_and_press(&[("store-select", "service.name=")], "#store-apply")
            .await;
        let deadline = Instant::now() + Duration::from_secs(30);
        while page.text("#error").await.is_empty() {
            assert!(Instant::now() < deadline, "no error shown");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(
            page.text("#error").await.contains("select"),
            "{}",
            page.text("#error").await
        );
        page.close().await;
    });
}

/// Dispatches a key press to the page, as a user's would reach it.
async fn press(page: &Page, key: &str) {
    let script = format!(
        "document.dispatchEvent(new KeyboardEvent('keydown', {{ key: {key:?}, bubbles: true }}))"
    );
    page.js(&script).await;
}

/// Deeper stacks than the screen holds: a marker at the fold says how
/// many levels are cut, and goes once they are scrolled to.
async fn fold_is_marked(page: &Page) {
    let fold = page
        .js("const c = protoprof.flame.canvas.getBoundingClientRect();
             const f = document.getElementById('flame-fold');
             const rows = protoprof.flame.maxDepth + 2;
             return [c.top + rows * ROW > window.innerHeight, !f.hidden,
                     f.getBoundingClientRect().bottom <= window.innerHeight + 1, f.textContent,
                     rows - Math.floor((window.innerHeight - c.top) / ROW)]")
        .await;
    assert_eq!(fold[0], json!(true), "go-cpu fits the screen: {fold}");
    assert_eq!(fold[1], json!(true), "{fold}");
    assert_eq!(fold[2], json!(true), "the marker is off the screen: {fold}");
    let cut = fold[4].as_i64().unwrap();
    assert!(
        fold[3].as_str().unwrap().contains(&format!("{cut} of ")),
        "{fold}"
    );
    page.screenshot("flamegraph-first-screen").await;
    page.js(
        "window.scrollTo(0, document.body.scrollHeight); window.dispatchEvent(new Event('scroll'))",
    )
    .await;
    assert_eq!(
        page.js("return document.getElementById('flame-fold').hidden")
            .await,
        json!(true)
    );
    page.js("window.scrollTo(0, 0); window.dispatchEvent(new Event('scroll'))")
        .await;
}

/// A name too long for its frame is shown without its package path first,
/// as pprof shortens it, and cut with an ellipsis after.
async fn long_names_are_shortened_then_cut(page: &Page) {
    let labels = page
        .js(
            "const g = document.createElement('canvas').getContext('2d');
             g.font = '12px ui-monospace, monospace';
             const go = 'github.com/prometheus/prometheus/web.(*Handler).testReady.func1';
             const short = 'web.(*Handler).testReady.func1';
             const w = g.measureText(short).width;
             return [fit(g, go, w + 1), fit(g, go, w / 2).endsWith('…'),
                     fit(g, 'java.util.HashMap.get', 1e4), shortName('java.util.HashMap.get'),
                     shortName('net/http.HandlerFunc.ServeHTTP')]",
        )
        .await;
    assert_eq!(
        labels,
        json!([
            "web.(*Handler).testReady.func1",
            true,
            "java.util.HashMap.get",
            "HashMap.get",
            "http.HandlerFunc.ServeHTTP"
        ])
    );
}

#[test]
fn the_first_screen_shows_the_root_packages_apart_whole_names_and_peek() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = workspace_root();
    let file = corpus_file(&corpus, "pprof/real/go-cpu.pb.gz");
    let server = Server::start(&dir, &[&file]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.client.set_window_size(1600, 1000).await.unwrap();
        page.show(&format!("{}/", server.url), "flamegraph").await;
        // The root bar on top, carrying the total; every top-level frame
        // below it inside the first screen.
        let root = page.js("return protoprof.flame.rootBox").await;
        assert_eq!(root["y"], json!(0), "{root}");
        let total = folded_total(&dir, &[&file]);
        let label = page.js("return protoprof.flame.options.rootLabel").await;
        let shown_total = page
            .js("return formatValue(protoprof.flameData.total, protoprof.flameData.unit)")
            .await;
        assert!(
            label
                .as_str()
                .unwrap()
                .contains(shown_total.as_str().unwrap()),
            "{label}"
        );
        assert_eq!(
            page.js("return protoprof.flameData.total").await,
            json!(total)
        );
        let below_fold = page
            .js(
                "const top = document.getElementById('flame').getBoundingClientRect().top;
                 return protoprof.flame.boxes
                   .filter(([i]) => protoprof.flameData.parent[i] < 0)
                   .filter(([, b]) => top + b.y + 18 > window.innerHeight).length",
            )
            .await;
        assert_eq!(below_fold, json!(0), "top-level frames below the fold");
        fold_is_marked(&page).await;
        long_names_are_shortened_then_cut(&page).await;
        let roots_drawn = page
            .js("return protoprof.flame.boxes.filter(([i]) => protoprof.flameData.parent[i] < 0).length")
            .await;
        assert!(roots_drawn.as_u64() > Some(0));

        // The heaviest packages in colours of their own, named in the
        // legend, and their frames painted so.
        let legend = page.js("return protoprof.flame.legend()").await;
        let legend = legend.as_array().unwrap();
        assert!(legend.len() >= 2, "{legend:?}");
        let colours: std::collections::HashSet<&str> =
            legend.iter().map(|e| e[1].as_str().unwrap()).collect();
        assert_eq!(
            colours.len(),
            legend.len(),
            "two packages share a colour: {legend:?}"
        );
        let shown = page.text("#flame-legend").await;
        for entry in &legend[..2] {
            let package = entry[0].as_str().unwrap();
            assert!(shown.contains(package), "{shown}");
            let painted = page
                .js(&format!(
                    "const d = protoprof.flameData;
                     const i = d.name.findIndex(n => packageOf(d.names[n]) === {package:?});
                     return protoprof.flame.colour(i, d.names[d.name[i]], 0)"
                ))
                .await;
            assert_eq!(painted, entry[1], "{package}");
        }
        // The top table beside it shows every name whole.
        let cut = page
            .js("return [...document.querySelectorAll('#side-top td.name')]
                   .filter(td => td.scrollWidth > td.clientWidth + 1).map(td => td.textContent)")
            .await;
        assert_eq!(cut, json!([]), "names cut");
        let (_, rows) = cli_top(&dir, &[&file]);
        let longest = rows
            .iter()
            .map(|r| r[5].clone())
            .max_by_key(|n| n.len())
            .unwrap();
        let shown: Vec<String> = page_top_rows(&page, "#side-top")
            .await
            .into_iter()
            .map(|r| r[5].clone())
            .collect();
        assert!(shown.contains(&longest), "{longest} not shown whole");

        // Keys: down from the root's heaviest frame, then Esc.
        press(&page, "ArrowDown").await;
        press(&page, "ArrowDown").await;
        assert!(!page.text("#flame-cursor").await.is_empty());
        assert!(page.js("return protoprof.flame.cursor").await.is_number());
        press(&page, "Escape").await;
        assert!(page.js("return protoprof.flame.cursor").await.is_null());

        // Sorted by cum%, as by cum.
        page.click("#side-top th:nth-child(5)").await;
        let first = &page_top_rows(&page, "#side-top").await[0];
        let by_cum = ok(&dir, &["top", "--cum", "-n", "1", &file]);
        assert!(
            by_cum.lines().last().unwrap().ends_with(&first[5]),
            "{by_cum} vs {first:?}"
        );

        // Peek before any search: the heaviest functions, as pprof's peek.
        page.show(&format!("{}/ui/peek", server.url), "peek").await;
        let peek = page.text("#text").await;
        let heaviest = rows[0][5].split_whitespace().next().unwrap();
        assert!(peek.contains(heaviest), "{peek}");
        page.close().await;
    });
}

/// Runs `script`, which starts one action of the message view, and waits
/// until the view says it is done.
async fn message_action(page: &Page, script: &str) {
    let count = "return Number(document.body.dataset.messageActions || 0)";
    let before = page.js(count).await.as_u64().unwrap();
    page.js(script).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    while page.js(count).await.as_u64().unwrap() <= before {
        assert!(Instant::now() < deadline, "{script}: never done");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Clicks the message view's row for `path`.
fn click_row(path: &str) -> String {
    format!("document.querySelector('#message-tree .mrow[data-path=\"{path}\"]').click()")
}

/// `go tool pprof -raw`'s first sample's location ids, and each
/// location's function name by id.
fn go_raw_samples(file: &str) -> (Vec<u64>, std::collections::HashMap<u64, String>) {
    let output = Command::new("go")
        .args(["tool", "pprof", "-raw", file])
        .env("HOME", std::env::temp_dir())
        .output()
        .expect("go tool pprof -raw");
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    let samples = text.split("Samples:").nth(1).unwrap();
    let first = samples.lines().nth(2).unwrap();
    let ids = first.split(':').nth(1).unwrap().split_whitespace();
    let ids = ids.map(|id| id.parse().unwrap()).collect();
    let locations = text.split("Locations").nth(1).unwrap();
    let locations = locations.split("Mappings").next().unwrap();
    let names = locations
        .lines()
        .filter_map(|line| {
            let (id, rest) = line.trim().split_once(": ")?;
            let name = rest.split_whitespace().nth(2)?;
            Some((id.parse().ok()?, name.to_string()))
        })
        .collect();
    (ids, names)
}

#[test]
fn the_message_view_summarises_links_pages_searches_edits_and_saves() {
    let (Some(corpus), Some(chromium)) = (corpus_dir(), chromium()) else {
        return;
    };
    if !protoprof_tests::go_available("go tool pprof -raw") {
        return;
    }
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("cpu.pb.gz");
    std::fs::copy(corpus.join("pprof/real/go-cpu.pb.gz"), &input).unwrap();
    let (ids, names) = go_raw_samples(input.to_str().unwrap());
    let server = Server::start(dir.path(), &["cpu.pb.gz"]);
    block_on(async {
        let page = Page::open(&chromium).await;
        page.client.set_window_size(1600, 1000).await.unwrap();
        page.show(&format!("{}/ui/message", server.url), "message")
            .await;
        // A sample's line names its leaf function, as Go's pprof reads it.
        message_action(&page, &click_row("sample")).await;
        let line = page
            .text("#message-tree .mrow[data-path=\"sample[0]\"]")
            .await;
        assert!(
            line.contains(&names[&ids[0]]),
            "{line} lacks {}",
            names[&ids[0]]
        );
        page.screenshot("message-samples").await;

        // An index links to its target.
        message_action(&page, &click_row("sample[0]")).await;
        message_action(&page, &click_row("sample[0].location_id")).await;
        let link = "#message-tree .mrow[data-path=\"sample[0].location_id[0]\"] a.ref";
        message_action(&page, &format!("document.querySelector('{link}').click()")).await;
        let current = page
            .js("return document.querySelector('#message-tree .current').dataset.path")
            .await;
        let current = current.as_str().unwrap().to_string();
        assert!(current.starts_with("location["), "{current}");
        message_action(&page, &click_row(&current)).await;
        let id = page
            .text(&format!(
                "#message-tree .mrow[data-path=\"{current}.id\"] .text"
            ))
            .await;
        assert_eq!(id, ids[0].to_string());

        // Paging: 287 locations, 100 at a time.
        let shown = "return document.querySelectorAll('#message-tree .mrow[data-path^=\"location[\"]:not([data-path*=\".\"])').length";
        assert_eq!(page.js(shown).await, json!(100));
        message_action(
            &page,
            "document.querySelector('.mrow[data-path=\"location\"] + .children > .more').click()",
        )
        .await;
        assert_eq!(page.js(shown).await, json!(200));

        search_reveals_a_function(&page, &names).await;
        edit_and_save(&page, dir.path(), &input, &corpus).await;
        page.close().await;
    });
}

/// The message view's search, for the longest function name: its hit
/// clicked, the function's row is the current one.
async fn search_reveals_a_function(page: &Page, names: &std::collections::HashMap<u64, String>) {
    // Search: a function of the last page, revealed where it is.
    let wanted = names.values().max_by_key(|n| n.len()).unwrap().clone();
    page.js(&format!(
        "const s = document.getElementById('message-search'); s.value = {wanted:?};"
    ))
    .await;
    message_action(page, "document.getElementById('message-search').dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter' }))").await;
    let hit = page
        .js("return [...document.querySelectorAll('#search-hits .hit')].map(h => h.textContent).find(t => /^function\\[\\d+\\]\\.name:/.test(t))")
        .await;
    let hit = hit
        .as_str()
        .unwrap_or_else(|| panic!("no function hit for {wanted}"))
        .to_string();
    assert!(hit.contains(&wanted), "{hit}");
    message_action(page, "[...document.querySelectorAll('#search-hits .hit')].find(h => /^function\\[\\d+\\]\\.name:/.test(h.textContent)).click()").await;
    let current = page
        .js("return document.querySelector('#message-tree .current').dataset.path")
        .await;
    assert_eq!(current, json!(hit.split(':').next().unwrap()));
    page.screenshot("message-search").await;
}

/// An edit that breaks a reference, then save: validate agrees with the
/// page, and the input is untouched.
async fn edit_and_save(page: &Page, dir: &Path, input: &Path, corpus: &Path) {
    // An edit that breaks a reference shows validation's finding.
    message_action(page, &click_row("sample[0].location_id[0]")).await;
    page.js("document.getElementById('edit-value').value = '999999'")
        .await;
    message_action(page, "document.getElementById('edit-set').click()").await;
    let findings = page.js("return messageView.state.findings").await;
    let broken = findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["path"] == json!("sample[0].location_id[0]"))
        .unwrap_or_else(|| panic!("{findings}"));
    assert_eq!(broken["rule"], json!("PPROF-REF-003"));
    let flagged = page.js("return document.querySelector('#message-tree .mrow[data-path=\"sample[0].location_id[0]\"]').classList.contains('flagged')").await;
    assert_eq!(flagged, json!(true));
    page.screenshot("message-edit").await;

    // Save writes a new file; validate agrees with the page.
    page.js("document.getElementById('save-name').value = 'edited.pb.gz'")
        .await;
    message_action(page, "document.getElementById('save').click()").await;
    let status = page.text("#message-status").await;
    assert!(status.contains("wrote"), "{status}");
    let saved = dir.join("edited.pb.gz");
    let (_, report, _) = common::run(
        dir,
        &["validate", "--format", "json", saved.to_str().unwrap()],
    );
    let report: Value = serde_json::from_str(&report).unwrap();
    let from_cli: Vec<(Value, Value)> = report[0]["report"]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["path"].clone(), d["code"].clone()))
        .collect();
    let on_page: Vec<(Value, Value)> = findings
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["path"].clone(), f["rule"].clone()))
        .collect();
    assert_eq!(from_cli, on_page);
    // The input is untouched.
    assert_eq!(
        std::fs::read(input).unwrap(),
        std::fs::read(corpus.join("pprof/real/go-cpu.pb.gz")).unwrap()
    );
}

/// A message of the user's own schema, not a profile: the page is its
/// message view alone, and an edit saved decodes as protoc's schema says.
#[test]
fn a_message_of_the_users_schema_is_viewed_edited_and_saved() {
    let Some(chromium) = chromium() else {
        return;
    };
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let schemas = workspace_root().join("crates/cli/tests/schemas");
    let proto = schemas.join("shop/kinds.proto");
    let schema_args = [
        "--proto",
        proto.to_str().unwrap(),
        "-I",
        schemas.to_str().unwrap(),
    ];
    let text =
        "id: 7\nname: \"widget\"\nparts { id: 8 name: \"bolt\" }\nparts { id: 9 name: \"nut\" }\n";
    std::fs::write(dir.path().join("item.txtpb"), text).unwrap();
    let encode = [
        &[
            "encode",
            "--type",
            "shop.v1.Item",
            "item.txtpb",
            "-o",
            "item.bin",
        ][..],
        &schema_args,
    ]
    .concat();
    ok(dir.path(), &encode);
    let server = Server::start(dir.path(), &[&schema_args[..], &["item.bin"]].concat());
    block_on(async {
        let page = Page::open(&chromium).await;
        page.show(&format!("{}/", server.url), "message").await;
        let other_views = page
            .js("return [...document.querySelectorAll('nav a')].filter(a => a.offsetParent !== null).map(a => a.dataset.view)")
            .await;
        assert_eq!(other_views, json!(["message"]));
        message_action(&page, &click_row("parts")).await;
        let line = page
            .text("#message-tree .mrow[data-path=\"parts[1]\"]")
            .await;
        assert!(line.contains("nut"), "{line}");
        message_action(&page, &click_row("parts[1]")).await;
        message_action(&page, &click_row("parts[1].name")).await;
        page.js("document.getElementById('edit-value').value = 'screw'")
            .await;
        message_action(&page, "document.getElementById('edit-set').click()").await;
        page.js("document.getElementById('save-name').value = 'item2.bin'")
            .await;
        message_action(&page, "document.getElementById('save').click()").await;
        page.screenshot("message-user-schema").await;
        page.close().await;
    });
    let decode = [
        &["decode", "--type", "shop.v1.Item", "item2.bin"][..],
        &schema_args,
    ]
    .concat();
    let decoded = ok(dir.path(), &decode);
    assert!(decoded.contains("name: \"screw\""), "{decoded}");
    assert!(decoded.contains("name: \"bolt\""), "{decoded}");
}
