//! The command line, declared with clap.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser, Debug)]
#[command(
    name = "protoprof",
    version,
    about = "View, edit, convert, validate and analyse profiles (pprof, OTLP Profiles) and relay captures",
    after_help = "Input form (gzip, binary, JSON, text, framed) and message type are detected; --type overrides.\n\
                  `-` reads standard input or writes standard output. Exit status: 0 success, 1 the data is\n\
                  invalid or a check failed, 2 usage, I/O or decode error."
)]
pub struct Cli {
    /// When to colour output.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Print no warnings (errors are still printed).
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(flatten)]
    pub limits: LimitArgs,
    #[command(flatten)]
    pub fetch: FetchArgs,
    #[command(flatten)]
    pub schemas: SchemaArgs,
    /// Read binary OTLP profiles v1development as this revision (1.4 to
    /// 1.11) instead of the one the bytes look like.
    #[arg(long, global = true, value_name = "REVISION", value_parser = parse_revision)]
    pub otlp_revision: Option<protoprof_codec::otlp::revision::OtlpRevision>,
    #[command(subcommand)]
    pub command: Command,
}

/// The help of the subcommand `words` name (none: the top level), each
/// global section (limits, URL inputs, user schemas, `--otlp-revision`)
/// listed only where it applies (given elsewhere, such an option is still
/// accepted, and changes nothing). Only for printing: the hidden options
/// are edited into a built command, which then parses no more.
pub fn help_of(words: &[String]) -> Option<String> {
    use clap::CommandFactory;
    let mut command = Cli::command();
    command.build();
    hide_sections(&mut command, "");
    let mut at = &mut command;
    for word in words {
        at = at.find_subcommand_mut(word)?;
    }
    Some(at.render_help().to_string())
}

/// Commands that read no profile file: what they read is a store's Parquet
/// files, SQL or nothing, so neither URLs nor the codec's limits apply.
const READ_NO_PROFILE: [&str; 7] = [
    "completions",
    "query",
    "store",
    "store get",
    "store series",
    "store compact",
    "store executor",
];

/// Whether the global options under `section` (a help heading, or the id
/// of an option without one) mean anything to `command` (`relay watch`).
fn section_applies(section: &str, command: &str) -> bool {
    match section {
        "Your own schemas" => matches!(
            command,
            "inspect" | "view" | "decode" | "encode" | "edit" | "frames" | "relay watch"
        ),
        "Inputs from URLs" => {
            !READ_NO_PROFILE.contains(&command)
                && !matches!(
                    command,
                    "edit" | "receive" | "relay" | "relay serve" | "relay watch"
                )
        }
        "Limits" => !READ_NO_PROFILE.contains(&command),
        "otlp_revision" => !matches!(
            command,
            "completions" | "relay" | "relay serve" | "relay push" | "relay watch"
        ),
        // pprof's label filters of the label reports.
        "tagshow" | "taghide" => matches!(command, "traces" | "tags" | "serve"),
        _ => true,
    }
}

/// What option `id` means in `command`, where that differs from command
/// to command: `--timeout` bounds a URL fetch, `relay push`'s wait for
/// the relay, `send`'s attempts.
fn help_in(id: &str, command: &str) -> Option<&'static str> {
    match (id, command) {
        ("timeout", "relay push") => Some("Seconds to wait for the relay's answer [default: 30]."),
        ("timeout", "send") => Some("Seconds to wait for each attempt [default: 10]."),
        _ => None,
    }
}

/// Hides, in every subcommand of `command` (whose words are `path`), the
/// global options that do not apply to it.
fn hide_sections(command: &mut clap::Command, path: &str) {
    for sub in command.get_subcommands_mut() {
        let name = match path {
            "" => sub.get_name().to_string(),
            path => format!("{path} {}", sub.get_name()),
        };
        let applies = |a: &clap::Arg| {
            let heading = a.get_help_heading();
            let id = a.get_id().as_str();
            heading.is_none_or(|h| section_applies(h, &name)) && section_applies(id, &name)
        };
        let hidden: Vec<clap::Id> = (sub.get_arguments())
            .filter(|a| !applies(a))
            .map(|a| a.get_id().clone())
            .collect();
        let worded: Vec<(clap::Id, &str)> = (sub.get_arguments())
            .filter_map(|a| Some((a.get_id().clone(), help_in(a.get_id().as_str(), &name)?)))
            .collect();
        let mut edited = std::mem::take(sub);
        for id in hidden {
            edited = edited.mut_arg(id, |a| a.hide(true));
        }
        for (id, help) in worded {
            edited = edited.mut_arg(id, |a| a.help(help));
        }
        hide_sections(&mut edited, &name);
        *sub = edited;
    }
}

// The codec's limits, each an option and an environment variable. Sizes take
// a unit: 600MB, 2GiB, 4096 (bytes).
#[derive(Args, Debug, Clone, Default)]
pub struct LimitArgs {
    /// Largest input accepted (the compressed size for gzip) [default: 1GiB].
    #[arg(long, global = true, value_name = "SIZE", env = "PROTOPROF_MAX_INPUT_SIZE", value_parser = parse_size, help_heading = "Limits")]
    pub max_input_size: Option<u64>,
    /// Largest size gzip input may inflate to [default: 512MiB].
    #[arg(long, global = true, value_name = "SIZE", env = "PROTOPROF_MAX_INFLATED_SIZE", value_parser = parse_size, help_heading = "Limits")]
    pub max_inflated_size: Option<u64>,
    /// Deepest nesting of messages accepted [default: 100].
    #[arg(
        long,
        global = true,
        value_name = "LEVELS",
        env = "PROTOPROF_MAX_DEPTH",
        help_heading = "Limits"
    )]
    pub max_depth: Option<u32>,
    /// Largest single frame of a framed stream [default: 256MiB].
    #[arg(long, global = true, value_name = "SIZE", env = "PROTOPROF_MAX_FRAME_SIZE", value_parser = parse_size, help_heading = "Limits")]
    pub max_frame_size: Option<u64>,
}

// The user's own schemas: with any of them, messages are read as (and
// --type names) messages of these schemas instead of protoprof's own.
#[derive(Args, Debug, Clone, Default)]
pub struct SchemaArgs {
    /// A .proto file of your own schema (repeatable); its imports are found
    /// under the --proto-path directories, as protoc finds them.
    #[arg(
        long = "proto",
        global = true,
        value_name = "FILE.proto",
        help_heading = "Your own schemas"
    )]
    pub protos: Vec<PathBuf>,
    /// A directory imports are found under (repeatable; default: each
    /// --proto file's directory). google/protobuf/*.proto resolve here first,
    /// else from copies built into protoprof.
    #[arg(
        short = 'I',
        long = "proto-path",
        global = true,
        value_name = "DIR",
        help_heading = "Your own schemas"
    )]
    pub proto_paths: Vec<PathBuf>,
    /// A binary FileDescriptorSet (`protoc --descriptor_set_out`, `buf build -o`) (repeatable).
    #[arg(
        long = "descriptor-set",
        global = true,
        value_name = "FILE",
        help_heading = "Your own schemas"
    )]
    pub descriptor_sets: Vec<PathBuf>,
}

impl SchemaArgs {
    /// What the codec loads.
    pub fn sources(&self) -> protoprof_codec::user::SchemaSources {
        protoprof_codec::user::SchemaSources {
            protos: self.protos.clone(),
            proto_paths: self.proto_paths.clone(),
            descriptor_sets: self.descriptor_sets.clone(),
        }
    }
}

// How inputs named by a URL are fetched, as `go tool pprof` fetches them.
#[derive(Args, Debug, Clone, Default)]
pub struct FetchArgs {
    /// For a URL input: how long the profile should take (a CPU or trace
    /// profile), set as the URL's `seconds` (pprof's -seconds).
    #[arg(
        long,
        global = true,
        value_name = "N",
        help_heading = "Inputs from URLs"
    )]
    pub seconds: Option<u64>,
    // `relay push` and `send` say what they wait for instead (`help_in`).
    /// Seconds to wait for a URL input [default: 1.5 × --seconds, or 60].
    #[arg(
        long,
        global = true,
        value_name = "N",
        help_heading = "Inputs from URLs"
    )]
    pub timeout: Option<u64>,
    /// PEM file of the CA that signs an HTTPS server's certificate (instead
    /// of the WebPKI roots); `https+insecure://` checks no certificate.
    #[arg(
        long,
        global = true,
        value_name = "PEM",
        help_heading = "Inputs from URLs"
    )]
    pub tls_ca: Option<PathBuf>,
    /// PEM file of a client certificate for HTTPS.
    #[arg(
        long,
        global = true,
        value_name = "PEM",
        help_heading = "Inputs from URLs"
    )]
    pub tls_cert: Option<PathBuf>,
    /// PEM file of the client certificate's key [default: in --tls-cert].
    #[arg(
        long,
        global = true,
        value_name = "PEM",
        help_heading = "Inputs from URLs"
    )]
    pub tls_key: Option<PathBuf>,
}

impl LimitArgs {
    /// The codec's limits: the defaults, with what was given instead.
    pub fn limits(&self) -> protoprof_codec::Limits {
        let default = protoprof_codec::Limits::DEFAULT;
        protoprof_codec::Limits {
            max_input_bytes: self.max_input_size.unwrap_or(default.max_input_bytes),
            max_inflated_bytes: self.max_inflated_size.unwrap_or(default.max_inflated_bytes),
            max_depth: self.max_depth.unwrap_or(default.max_depth),
            max_frame_bytes: self.max_frame_size.unwrap_or(default.max_frame_bytes),
        }
    }
}

/// An opentelemetry-proto release that wrote OTLP profiles v1development.
pub fn parse_revision(text: &str) -> Result<protoprof_codec::otlp::revision::OtlpRevision, String> {
    protoprof_codec::otlp::revision::OtlpRevision::from_release(text)
        .ok_or_else(|| format!("{text:?} is not a v1development release (1.4 to 1.11)"))
}

/// A size: a number of bytes with an optional unit (B, KB, MB, GB, TB in
/// powers of 1000; KiB, MiB, GiB, TiB in powers of 1024; case-insensitive).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let number: u64 = digits
        .parse()
        .map_err(|_| format!("{text:?} is not a size (e.g. 600MB, 2GiB, 4096)"))?;
    let factor: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "mb" => 1_000_000,
        "gb" => 1_000_000_000,
        "tb" => 1_000_000_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        "gib" => 1 << 30,
        "tib" => 1 << 40,
        other => {
            return Err(format!(
                "unknown size unit {other:?} (B, KB, MB, GB, KiB, MiB, GiB)"
            ))
        }
    };
    number
        .checked_mul(factor)
        .ok_or_else(|| format!("{text:?} is too large"))
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

/// Human text or JSON: the output of reports, and the text forms of
/// `decode --to` and `encode --from` (protobuf text format or OTLP/JSON).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputFormat {
    Text,
    Json,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Pprof,
    Otlp,
}

/// The OTLP profiles package `convert --to otlp` writes.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum OtlpVersion {
    /// `opentelemetry.proto.profiles.v1development`, current revision (v1.10/v1.11).
    V1development,
    /// `opentelemetry.proto.profiles.v1experimental`.
    V1experimental,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Binary,
    Json,
    Text,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FramingChoice {
    Grpc,
    Delimited,
    /// 4-byte big-endian lengths (the OpenTelemetry Collector's file exporter).
    FileExporter,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// What is this file? Form, message type, sizes and a summary.
    #[command(
        after_help = "Examples:\n  protoprof inspect cpu.pb.gz\n  protoprof inspect --format json export.otlp.json\n  protoprof inspect --tls-ca ca.pem https://host:6060/debug/pprof/heap"
    )]
    Inspect(InspectArgs),
    /// The whole message as text, with every index resolved in place.
    #[command(
        after_help = "Examples:\n  protoprof view cpu.pb.gz\n  protoprof view --raw cpu.pb.gz | less"
    )]
    View(ViewArgs),
    /// Binary (or gzip) to text format or OTLP/JSON.
    #[command(
        after_help = "Examples:\n  protoprof decode cpu.pb.gz > cpu.txt\n  protoprof decode --to json export.pb\n  protoprof decode --raw unknown.bin"
    )]
    Decode(DecodeArgs),
    /// Text format or OTLP/JSON to binary.
    #[command(
        after_help = "Example:\n  protoprof encode --type perftools.profiles.Profile cpu.txt -o cpu.pb.gz --gzip"
    )]
    Encode(EncodeArgs),
    /// Edit a profile as text in $VISUAL/$EDITOR; it is validated before it replaces the file.
    #[command(after_help = "Example:\n  EDITOR=vim protoprof edit cpu.pb.gz")]
    Edit(EditArgs),
    /// pprof to OTLP, OTLP to pprof, one OTLP version or revision to another.
    #[command(
        after_help = "Examples:\n  protoprof convert --to otlp cpu.pb.gz -o cpu.otlp.pb --resource service.name=checkout\n  protoprof convert --to otlp --format json cpu.pb.gz -o -\n  protoprof convert --to otlp --otlp-version v1experimental cpu.pb.gz -o cpu.v1exp.pb\n  protoprof convert --to otlp old-revision.otlp.pb -o current.otlp.pb\n  protoprof convert --to pprof export.otlp.pb -o cpu.pb.gz --gzip"
    )]
    Convert(ConvertArgs),
    /// Check files against every rule of their schema.
    #[command(
        after_help = "Examples:\n  protoprof validate cpu.pb.gz heap.pb.gz\n  protoprof validate --strict --format json export.otlp.pb\n  protoprof validate localhost:6060/debug/pprof/heap"
    )]
    Validate(ValidateArgs),
    /// Flat and cumulative value per function, as `go tool pprof -top`.
    #[command(
        after_help = "Examples:\n  protoprof top cpu.pb.gz\n  protoprof top -n 20 --cum --sample-index alloc_space heap.pb.gz\n  protoprof top --format json cpu.pb.gz\n  protoprof top --seconds 5 --timeout 30 http://localhost:6060/debug/pprof/profile"
    )]
    Top(TopArgs),
    /// Every sample with its labels and stack, as `go tool pprof -traces`.
    #[command(
        after_help = "Examples:\n  protoprof traces cpu.pb.gz\n  protoprof traces --focus 'main\\.burn' --format json cpu.pb.gz"
    )]
    Traces(TracesArgs),
    /// Every label with the share of the total each value carries, as `go tool pprof -tags`.
    #[command(after_help = "Example:\n  protoprof tags --sample-index alloc_space heap.pb.gz")]
    Tags(TracesArgs),
    /// Callers and callees of the functions matching REGEX, as `go tool pprof -peek`.
    #[command(after_help = "Example:\n  protoprof peek 'main\\.burn' cpu.pb.gz")]
    Peek(PeekArgs),
    /// Every node of the call graph with its callers and callees, as `go tool pprof -tree`.
    #[command(
        after_help = "Examples:\n  protoprof tree cpu.pb.gz\n  protoprof tree -n 20 --granularity lines --format json cpu.pb.gz"
    )]
    Tree(TreeArgs),
    /// The source of the functions matching REGEX, each line with its values, as `go tool pprof -list`.
    #[command(
        after_help = "Examples:\n  protoprof list 'main\\.burn' cpu.pb.gz\n  protoprof list --source-path ~/src/app --trim-path /build 'app\\.' cpu.pb.gz"
    )]
    List(ListArgs),
    /// Assembly of the functions matching REGEX, each instruction with its samples, as upstream pprof's -disasm (objdump and nm, LLVM's preferred).
    #[command(after_help = "Example:\n  protoprof disasm 'work$' cpu.prof")]
    Disasm(DisasmArgs),
    /// The source of the functions matching REGEX with the instructions of each line, as an HTML page, as upstream pprof's -weblist.
    #[command(
        after_help = "Examples:\n  protoprof weblist 'work$' cpu.prof -o work.html\n  protoprof weblist --view browser 'work$' cpu.prof"
    )]
    Weblist(WeblistArgs),
    /// The profile's comments, one per line, as go tool pprof -comments.
    Comments(CommentsArgs),
    /// The call graph in Graphviz's DOT, or drawn as SVG, as `go tool pprof -dot` and `-svg`.
    #[command(
        after_help = "Examples:\n  protoprof callgraph cpu.pb.gz > cpu.dot\n  protoprof callgraph --format svg -o cpu.svg cpu.pb.gz"
    )]
    Callgraph(CallgraphArgs),
    /// The call graph in callgrind's format (for KCachegrind), as `go tool pprof -callgrind`.
    #[command(
        after_help = "Example:\n  protoprof callgrind cpu.pb.gz > cpu.callgrind && kcachegrind cpu.callgrind"
    )]
    Callgrind(CallgrindArgs),
    /// Collapsed stacks (`a;b;c 42`) for flame-graph tools.
    #[command(after_help = "Example:\n  protoprof folded cpu.pb.gz | flamegraph.pl > cpu.svg")]
    Folded(FoldedArgs),
    /// An interactive flame graph (SVG).
    #[command(after_help = "Example:\n  protoprof flamegraph cpu.pb.gz -o cpu.svg")]
    Flamegraph(FlamegraphArgs),
    /// Per-function changes of NEW against BASE, largest first, as shares of BASE's total.
    #[command(
        after_help = "Examples:\n  protoprof diff before.pb.gz after.pb.gz\n  protoprof diff -n 10 --format json before.pb.gz after.pb.gz"
    )]
    Diff(DiffArgs),
    /// go tool pprof's command line (`-top -nodecount=10 heap.pb.gz`), as the protoprof report that prints the same.
    #[command(
        after_help = "Examples:\n  protoprof pprof -top -nodecount=10 -sample_index=alloc_space heap.pb.gz\n  \
                      protoprof pprof -peek 'main\\.' -lines cpu.pb.gz\n  \
                      protoprof pprof -http=:8080 cpu.pb.gz\n\n\
                      `alias pprof='protoprof pprof'`: pprof's flags, single dash, -flag=value or -flag value."
    )]
    Pprof(PprofArgs),
    /// The web UI: flame graph, top, call graph, peek, traces, tags and the
    /// message, in a browser, as `go tool pprof -http`.
    #[command(
        after_help = "Examples:\n  protoprof serve cpu.pb.gz\n  protoprof serve --listen :9090 --open cpu.pb.gz\n  protoprof serve --diff-base before.pb.gz after.pb.gz"
    )]
    Serve(ServeArgs),
    /// The profile the filters keep (bases subtracted, several inputs merged), written as pprof, as `go tool pprof -proto`.
    #[command(
        after_help = "Examples:\n  protoprof filter --focus 'main\\.handle' cpu.pb.gz -o focused.pb.gz\n  protoprof filter --base before.pb.gz after.pb.gz -o change.pb.gz"
    )]
    Filter(FilterArgs),
    /// The profile the filters keep, as `go tool pprof -raw` prints it: samples, locations, mappings.
    #[command(after_help = "Example:\n  protoprof raw --focus main cpu.pb.gz | less")]
    Raw(RawArgs),
    /// Merge compatible profiles (same sample types), as pprof merges.
    #[command(after_help = "Example:\n  protoprof merge a.pb.gz b.pb.gz -o merged.pb.gz --gzip")]
    Merge(MergeArgs),
    /// Native frames given functions, files and lines from their binaries
    /// (found as pprof finds them, or by build id), as pprof symbolizes them.
    #[command(
        after_help = "Examples:\n  protoprof symbolize cpu.pb.gz -o cpu.symbolized.pb.gz\n  PPROF_BINARY_PATH=~/builds protoprof symbolize --symbolize local:force heap.pb.gz -o heap.sym.pb.gz\n\nBinaries are looked for in PPROF_BINARY_PATH (default $HOME/pprof/binaries) by build id and by name,\nin /usr/lib/debug/.build-id, and at the mapping's own path; a file of another build id is passed over."
    )]
    Symbolize(SymbolizeArgs),
    /// A profile store: many profiles in Parquet, read by every report with --store.
    #[command(
        subcommand,
        after_help = "Examples:\n  protoprof store add fleet/ --service checkout cpu-*.pb.gz\n  \
                      protoprof top --store fleet/ --select 'service.name=\"checkout\"' --from -1h\n  \
                      protoprof store get fleet/ --profile-id 3f2a… -o one.pb.gz"
    )]
    Store(StoreCommand),
    /// SQL over a profile store, run by Apache DataFusion (tables and views in docs/store.md).
    #[command(
        after_help = "Examples:\n  protoprof query --store fleet/ \"SELECT service_name, sum(value) FROM samples WHERE sample_type = 'cpu' GROUP BY 1\"\n  \
                      protoprof query --store fleet/ --format csv \"SELECT function_name, sum(value) AS flat FROM samples JOIN stack_leaf USING (stack_id) WHERE sample_type = 'cpu' GROUP BY 1 ORDER BY 2 DESC LIMIT 20\"\n  \
                      protoprof query --store fleet/ \"SHOW TABLES\""
    )]
    Query(QueryArgs),
    /// List and decode each frame of a captured stream (gRPC or varint-delimited).
    #[command(
        after_help = "Examples:\n  protoprof frames relay-capture.bin\n  protoprof frames --framing delimited --type envoy.service.discovery.v3.DiscoveryRequest requests.bin"
    )]
    Frames(FramesArgs),
    /// Run a relay, upstream to one as a management server, or watch one as a proxy.
    #[command(
        subcommand,
        after_help = "Examples:\n  protoprof relay serve --listen 127.0.0.1:18000\n  protoprof relay push --relay 127.0.0.1:18000 --hold clusters.txt\n  protoprof relay watch --relay 127.0.0.1:18000 --type-url type.googleapis.com/quilkin.config.v1alpha1.Cluster"
    )]
    Relay(RelayCommand),
    /// Export profiles to an OTLP receiver as an OpenTelemetry exporter does (pprof converted to v1development).
    #[command(
        after_help = "Settings come from OTEL_EXPORTER_OTLP_{ENDPOINT,PROTOCOL,HEADERS,COMPRESSION,TIMEOUT,CERTIFICATE,\n\
                      CLIENT_CERTIFICATE,CLIENT_KEY,INSECURE} (their _PROFILES_ forms first); the options win.\n\
                      Exit status 1 when the receiver rejected anything.\n\n\
                      Examples:\n  protoprof send cpu.pb.gz --endpoint http://127.0.0.1:4318\n  \
                      protoprof send --protocol grpc --endpoint 127.0.0.1:4317 --resource service.name=checkout heap.pb.gz\n  \
                      OTEL_EXPORTER_OTLP_COMPRESSION=gzip protoprof send export.otlp.pb"
    )]
    Send(SendArgs),
    /// Receive OTLP profiles as the Collector's OTLP receiver does, validating each request; stops on SIGINT/SIGTERM.
    #[command(
        after_help = "Without --grpc or --http both listen, on 127.0.0.1:4317 and 127.0.0.1:4318.\n\
                      A request that breaks a validation rule is answered with partial_success.\n\n\
                      Examples:\n  protoprof receive\n  protoprof receive --http 127.0.0.1:4318 --out requests/\n  \
                      protoprof receive --grpc 0.0.0.0:4317 --out-framed profiles.pb --forward http://backend:4318 --format json"
    )]
    Receive(ReceiveArgs),
    /// Shell completion script.
    #[command(
        after_help = "Example:\n  protoprof completions bash > /etc/bash_completion.d/protoprof"
    )]
    Completions {
        /// The shell to write the script for.
        shell: clap_complete::Shell,
    },
}

impl Command {
    /// How a report symbolizes what it reads (`--symbolize`); `None` for
    /// the commands that are not reports, which leave profiles as they are.
    pub fn report_symbolization(&self) -> Option<&str> {
        match self {
            Command::Diff(args) => Some(&args.symbolize),
            other => other.input_args().map(|input| input.symbolize.as_str()),
        }
    }

    /// The inputs of a command that reads profiles as the reports do.
    fn input_args(&self) -> Option<&InputArgs> {
        Some(match self {
            Command::Top(args) => &args.input,
            Command::Traces(args) | Command::Tags(args) => &args.input,
            Command::Peek(args) => &args.input,
            Command::Tree(args) => &args.input,
            Command::Serve(args) => &args.input,
            Command::Filter(args) => &args.input,
            Command::Raw(args) => &args.input,
            Command::List(args) => &args.input,
            Command::Disasm(args) => &args.input,
            Command::Weblist(args) => &args.input,
            Command::Comments(args) => &args.input,
            Command::Callgraph(args) => &args.input,
            Command::Callgrind(args) => &args.input,
            Command::Folded(args) => &args.input,
            Command::Flamegraph(args) => &args.input,
            _ => return None,
        })
    }

    /// Refuses a store option given without `--store`, which would
    /// otherwise change nothing (docs/cli.md, "One option, two names").
    pub fn store_options_need_store(&self) -> Result<(), String> {
        let Some(input) = self.input_args().filter(|i| i.store.is_none()) else {
            return Ok(());
        };
        let given = [
            ("--select", input.select.is_some()),
            ("--from", input.from.is_some()),
            ("--to", input.to.is_some()),
            ("--base-select", input.base_select.is_some()),
            ("--base-from", input.base_from.is_some()),
            ("--base-to", input.base_to.is_some()),
            ("--cluster", input.cluster.is_some()),
            ("--explain", input.explain),
            ("--strict", input.strict),
        ];
        match given.iter().find(|(_, given)| *given) {
            Some((option, _)) => Err(format!(
                "{option} chooses profiles of a store: it needs --store DIR (files are named as arguments)"
            )),
            None => Ok(()),
        }
    }

    /// `--sample-index` (pprof's) and `--sample-type` (the store's) are one
    /// option under two names: a report given `--sample-type TYPE` alone
    /// reports on TYPE, and a report on a store given `--sample-index NAME`
    /// reads only NAME's rows (docs/cli.md). Other commands take
    /// `--sample-type` with `--store` only.
    pub fn one_sample_type_option(&mut self) -> Result<(), String> {
        let (input, index, selection) = match self {
            Command::Top(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Traces(a) | Command::Tags(a) => {
                (&mut a.input, &mut a.sample_index, &a.selection)
            }
            Command::Peek(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Tree(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::List(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Disasm(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Weblist(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Callgraph(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Callgrind(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Folded(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            Command::Flamegraph(a) => (&mut a.input, &mut a.sample_index, &a.selection),
            other => return other.store_only_sample_type(),
        };
        if let ([only], None) = (&input.sample_type[..], &index) {
            *index = Some(only.clone());
        }
        // --mean divides by the first sample type: every type is read then.
        let named = index.as_ref().filter(|i| i.parse::<usize>().is_err());
        let store = input.store.is_some() && input.sample_type.is_empty() && !selection.mean;
        if let (Some(name), true) = (named, store) {
            input.sample_type = vec![name.clone()];
        }
        Ok(())
    }

    /// Refuses `--sample-type` without `--store` where it names no report's
    /// sample type (`serve`, `filter`, `raw`, `comments`).
    fn store_only_sample_type(&self) -> Result<(), String> {
        let Some(input) = self.input_args() else {
            return Ok(());
        };
        match (input.sample_type.is_empty(), &input.store) {
            (false, None) => Err(
                "--sample-type chooses a store's sample types: it needs --store \
                 (reports take it as --sample-index)"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    /// An output named `*.gz` means `--gzip`, as pprof writes such a name
    /// compressed (docs/cli.md).
    pub fn gzip_outputs_named_gz(&mut self) {
        let named_gz = |path: &std::path::Path| {
            path.extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
        };
        match self {
            Command::Decode(args) => args.gzip |= named_gz(&args.output),
            Command::Encode(args) => args.gzip |= named_gz(&args.output),
            Command::Convert(args) => {
                args.gzip |= args.output.as_deref().is_some_and(named_gz);
            }
            Command::Flamegraph(args) => args.gzip |= named_gz(&args.output),
            Command::Merge(args) => args.gzip |= named_gz(&args.output),
            Command::Store(StoreCommand::Get(args)) => args.gzip |= named_gz(&args.output),
            _ => {}
        }
    }
}

// Arguments of `protoprof inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Show long lines whole (by default a line is cut after 400 characters;
    /// JSON and `decode` never are).
    #[arg(long)]
    pub full: bool,
}

// Arguments of `protoprof view`.
#[derive(Args, Debug)]
pub struct ViewArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Plain protobuf text format (what `decode --to text` prints, cut as below).
    #[arg(long)]
    pub raw: bool,
    /// Show long lines whole (by default a line is cut after 400 characters;
    /// JSON and `decode` never are).
    #[arg(long)]
    pub full: bool,
}

// Arguments of `protoprof decode`.
#[derive(Args, Debug)]
pub struct DecodeArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// The text form written: protobuf text format, or OTLP/JSON.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub to: OutputFormat,
    /// Schema-less: field numbers and values, as `protoc --decode_raw` prints them.
    #[arg(long, conflicts_with_all = ["to", "type"])]
    pub raw: bool,
    /// With --raw: protoprof's reading instead of protoc's, printable
    /// payloads as strings before messages and runs of varints as lists
    /// (`# packed varints?`).
    #[arg(long, requires = "raw")]
    pub guess: bool,
    /// Where to write the text (`-`: standard output); never one of the inputs.
    #[arg(short, long, default_value = "-", value_name = "FILE")]
    pub output: PathBuf,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
}

// Arguments of `protoprof encode`.
#[derive(Args, Debug)]
pub struct EncodeArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Input form; detected when omitted.
    #[arg(long, value_enum)]
    pub from: Option<OutputFormat>,
    /// The file to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
}

// Arguments of `protoprof edit`.
#[derive(Args, Debug)]
pub struct EditArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Write even when the edited profile does not validate.
    #[arg(long)]
    pub force: bool,
}

// Arguments of `protoprof convert`.
#[derive(Args, Debug)]
pub struct ConvertArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// What to convert to: pprof, or OTLP (see --otlp-version).
    #[arg(long, value_enum)]
    pub to: Target,
    /// How to write the result: binary protobuf, OTLP/JSON or text format.
    #[arg(long, value_enum, default_value_t = Encoding::Binary)]
    pub format: Encoding,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
    /// A resource attribute, key=value (repeatable).
    #[arg(long = "resource", value_name = "KEY=VALUE")]
    pub resources: Vec<String>,
    /// The file to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "FILE", required_unless_present = "split")]
    pub output: Option<PathBuf>,
    /// With --to pprof: one pprof file per OTLP profile, written into DIR
    /// (created if missing), instead of one merged file.
    #[arg(long, value_name = "DIR", conflicts_with = "output")]
    pub split: Option<PathBuf>,
    /// Overwrite an input file.
    #[arg(long)]
    pub in_place: bool,
    /// Derive the OTLP profile id from the content (default: random).
    #[arg(long)]
    pub deterministic_id: bool,
    /// The OTLP package `--to otlp` writes (v1development: the current
    /// revision, whatever revision the input was).
    #[arg(long, value_enum, default_value_t = OtlpVersion::V1development)]
    pub otlp_version: OtlpVersion,
    /// Convert OTLP whose samples refer to stacks, locations, attributes or
    /// links that do not exist by leaving those samples out (with a warning
    /// that counts them), instead of refusing: the output lacks them.
    #[arg(long)]
    pub drop_invalid: bool,
}

// Arguments of `protoprof validate`.
#[derive(Args, Debug)]
pub struct ValidateArgs {
    /// The input files (`-` reads standard input); any form protoprof reads.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Warnings fail too.
    #[arg(long)]
    pub strict: bool,
    /// Diagnostics shown per rule.
    #[arg(long, default_value_t = 20)]
    pub max_per_rule: usize,
}

// Arguments of `protoprof top`.
#[derive(Args, Debug)]
pub struct TopArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Rows to show (all by default), pprof's -nodecount.
    #[arg(short = 'n', long = "nodecount", visible_alias = "nodes")]
    pub nodes: Option<usize>,
    /// Leave out nodes whose cum is below this share of the total shown
    /// (pprof's -nodefraction).
    #[arg(long, default_value_t = 0.005, value_name = "FRACTION")]
    pub nodefraction: f64,
    /// Unit of the values printed: minimum (one unit for the report, as
    /// pprof), auto (each its own), or a unit (ms, MB, the sample unit for
    /// exact integers).
    #[arg(long, default_value = "minimum")]
    pub unit: String,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Order by cumulative value, not flat (pprof's -cum).
    #[arg(long)]
    pub cum: bool,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Write the rows as a gzipped pprof profile instead (sample types cum
    /// and flat, one location per row), as pprof's -topproto.
    #[arg(long, conflicts_with = "format")]
    pub topproto: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// The profiles an analysis reads: several are merged as pprof merges
/// them; base profiles are subtracted as pprof's -base and -diff_base.
#[derive(Args, Debug, Clone)]
pub struct InputArgs {
    /// Profiles (pprof or OTLP, any form); several are merged.
    #[arg(required_unless_present = "store", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Read a profile store (`protoprof store add`) instead of files: the
    /// profiles --select, --from, --to and --sample-type choose, merged.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "files",
        help_heading = "Profile store"
    )]
    pub store: Option<PathBuf>,
    /// A label selector, as Pyroscope and Parca take it:
    /// '{service.name="checkout", host.name=~"eu-.*"}' (=, !=, =~, !~).
    #[arg(
        long,
        value_name = "SELECTOR",
        requires = "store",
        help_heading = "Profile store"
    )]
    pub select: Option<String>,
    /// Profiles from this time on: RFC 3339, a day, or relative to now
    /// (-1h, -30m, -7d).
    #[arg(
        long,
        value_name = "TIME",
        requires = "store",
        allow_hyphen_values = true,
        help_heading = "Profile store"
    )]
    pub from: Option<String>,
    /// Profiles before this time (as --from).
    #[arg(
        long,
        value_name = "TIME",
        requires = "store",
        allow_hyphen_values = true,
        help_heading = "Profile store"
    )]
    pub to: Option<String>,
    /// With --store: only this sample type's rows (repeatable), e.g. cpu,
    /// alloc_space. A report takes it as --sample-index, with files too.
    #[arg(long, value_name = "TYPE", help_heading = "Profile store")]
    pub sample_type: Vec<String>,
    /// With --store: show the change from this selection of the same store,
    /// as --diff-base (its --from and --to default to the selection's).
    #[arg(
        long,
        value_name = "SELECTOR",
        requires = "store",
        conflicts_with_all = ["base", "diff_base"],
        help_heading = "Profile store"
    )]
    pub base_select: Option<String>,
    /// With --store: show the change from this time range of the selection
    /// (or of --base-select), from this time on, as --diff-base.
    #[arg(
        long,
        value_name = "TIME",
        requires = "store",
        allow_hyphen_values = true,
        conflicts_with_all = ["base", "diff_base"],
        help_heading = "Profile store"
    )]
    pub base_from: Option<String>,
    /// With --store: the base's time range ends before this time (as --base-from).
    #[arg(
        long,
        value_name = "TIME",
        requires = "store",
        allow_hyphen_values = true,
        conflicts_with_all = ["base", "diff_base"],
        help_heading = "Profile store"
    )]
    pub base_to: Option<String>,
    /// Run the store's queries on an Apache DataFusion Ballista cluster,
    /// given by its scheduler (df://host:50050); its executors must reach
    /// the store at the same path.
    #[arg(
        long,
        value_name = "URL",
        requires = "store",
        help_heading = "Profile store"
    )]
    pub cluster: Option<String>,
    /// With --store: say on stderr which tables the selection read, how
    /// many files of each and how many bytes.
    #[arg(long, requires = "store", help_heading = "Profile store")]
    pub explain: bool,
    /// With --store: fail on a file of the store that does not read,
    /// where reports otherwise warn once and read the rest.
    #[arg(long, requires = "store", help_heading = "Profile store")]
    pub strict: bool,
    /// With --store: read the raw rows only, never the rollups `store
    /// compact` writes of days that are over (the same answer, slower).
    #[arg(long, requires = "store", help_heading = "Profile store")]
    pub no_rollups: bool,
    /// Subtract this profile (repeatable; several are merged), as pprof's -base.
    #[arg(long, value_name = "FILE")]
    pub base: Vec<PathBuf>,
    /// Show the change from this profile (repeatable), as pprof's
    /// -diff_base: percentages are of its total.
    #[arg(long, value_name = "FILE", conflicts_with = "base")]
    pub diff_base: Vec<PathBuf>,
    /// Scale the profiles so each sample type's total is the base's first.
    #[arg(long)]
    pub normalize: bool,
    /// The binary the profile ran: its path replaces the first mapping's
    /// file before symbolization (pprof's `[binary] profile` form).
    #[arg(long, value_name = "FILE")]
    pub executable: Option<PathBuf>,
    /// A free-form comment added to the profile after merging, shown by
    /// reports that show comments and kept by `filter` (pprof's -add_comment).
    #[arg(long, value_name = "TEXT")]
    pub add_comment: Option<String>,
    /// Add frames of these label keys' values at the root of each stack,
    /// the first key at the new root (comma-separated), as pprof's -tagroot.
    #[arg(long, value_name = "KEYS")]
    pub tagroot: Option<String>,
    /// Add frames of these label keys' values at the leaf of each stack,
    /// the last key at the new leaf (comma-separated), as pprof's -tagleaf.
    #[arg(long, value_name = "KEYS")]
    pub tagleaf: Option<String>,
    /// Native frames that are only addresses symbolized from their
    /// binaries, as pprof does by default: local, fastlocal (names only) or
    /// none; `:force` redoes symbolized mappings;
    /// `:demangle=none|full|templates|default` (`protoprof symbolize` says
    /// what it found for each mapping).
    #[arg(long, default_value = SYMBOLIZE_DEFAULT, value_name = "MODE")]
    pub symbolize: String,
}

/// What reports symbolize by default: pprof's `local`.
pub const SYMBOLIZE_DEFAULT: &str = "local";

impl InputArgs {
    /// With `--store`: the base selection `--base-select`, `--base-from`
    /// and `--base-to` ask for, each defaulting to the selection's own;
    /// `None` when none of them is given.
    pub fn store_base(&self) -> Option<InputArgs> {
        let asked = [&self.base_select, &self.base_from, &self.base_to];
        if self.store.is_none() || asked.iter().all(|a| a.is_none()) {
            return None;
        }
        Some(InputArgs {
            select: self.base_select.clone().or_else(|| self.select.clone()),
            from: self.base_from.clone().or_else(|| self.from.clone()),
            to: self.base_to.clone().or_else(|| self.to.clone()),
            ..self.without_base()
        })
    }

    /// These inputs without any base: no files, no store selection.
    pub fn without_base(&self) -> InputArgs {
        InputArgs {
            base: Vec::new(),
            diff_base: Vec::new(),
            base_select: None,
            base_from: None,
            base_to: None,
            ..self.clone()
        }
    }

    /// The label keys of `--tagroot` and `--tagleaf`, empty ones left out.
    pub fn label_frame_keys(&self) -> (Vec<String>, Vec<String>) {
        let keys = |list: &Option<String>| -> Vec<String> {
            list.iter()
                .flat_map(|l| l.split(','))
                .filter(|k| !k.is_empty())
                .map(str::to_string)
                .collect()
        };
        (keys(&self.tagroot), keys(&self.tagleaf))
    }
}

/// pprof's sample filters and granularity, on every analysis command.
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Filters and granularity (as go tool pprof)")]
pub struct SelectionArgs {
    /// Only samples with a frame matching REGEX (function, file or mapping).
    #[arg(long, value_name = "REGEX")]
    pub focus: Option<String>,
    /// Drop samples with a frame matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub ignore: Option<String>,
    /// Remove frames matching REGEX from stacks.
    #[arg(long, value_name = "REGEX")]
    pub hide: Option<String>,
    /// Keep only frames matching REGEX in stacks.
    #[arg(long, value_name = "REGEX")]
    pub show: Option<String>,
    /// Cut stacks above the outermost frame matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub show_from: Option<String>,
    /// Cut stacks beneath the innermost function matching REGEX.
    #[arg(long, value_name = "REGEX")]
    pub prune_from: Option<String>,
    /// Only samples whose labels match: [KEY=]REGEX[,REGEX…] or [KEY=]RANGE (1kb:1mb, :64kb, 4mb:).
    #[arg(long, value_name = "FILTER")]
    pub tagfocus: Option<String>,
    /// Drop samples whose labels match (as --tagfocus).
    #[arg(long, value_name = "FILTER")]
    pub tagignore: Option<String>,
    /// Show only the labels whose key matches REGEX (traces, tags), as pprof's -tagshow.
    #[arg(long, value_name = "REGEX")]
    pub tagshow: Option<String>,
    /// Show no label whose key matches REGEX (traces, tags), as pprof's -taghide.
    #[arg(long, value_name = "REGEX")]
    pub taghide: Option<String>,
    /// Name (and merge) frames by functions, filefunctions, files, lines or addresses.
    #[arg(long, value_enum, default_value_t = GranularityArg::Functions)]
    pub granularity: GranularityArg,
    /// Attribute inlined frames to the function they were inlined into.
    #[arg(long)]
    pub noinlines: bool,
    /// Percentages of the samples the filters keep, not of the whole
    /// profile, as pprof's -relative_percentages.
    #[arg(long)]
    pub relative_percentages: bool,
    /// Mean values: each divided by the first sample type's (a count), as
    /// pprof's -mean (the mean delay of a contention profile).
    #[arg(long)]
    pub mean: bool,
    /// Headers without the profile's labels (file, type, time), as pprof's
    /// -compact_labels.
    #[arg(long)]
    pub compact_labels: bool,
    /// Leave out of graph reports (top, tree, peek, callgraph) the nodes
    /// whose flat value is negative, or zero with a negative cum, as
    /// pprof's -drop_negative.
    #[arg(long)]
    pub drop_negative: bool,
    /// Show values divided by N (percentages unchanged), as pprof's
    /// -divide_by.
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub divide_by: Option<f64>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum GranularityArg {
    #[default]
    Functions,
    Filefunctions,
    Files,
    Lines,
    Addresses,
}

// Arguments of `protoprof traces` and `protoprof tags`.
#[derive(Args, Debug)]
pub struct TracesArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof peek`.
#[derive(Args, Debug)]
pub struct PeekArgs {
    /// Functions (nodes) to show, by regular expression.
    pub regex: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Order by cumulative value, not flat (pprof's -cum).
    #[arg(long)]
    pub cum: bool,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// How the call graph is trimmed, with pprof's defaults (`tree`, `callgraph`).
#[derive(Args, Debug, Clone)]
pub struct GraphTrimArgs {
    /// Nodes to show at most (0: all), pprof's -nodecount: the heaviest by flat for
    /// tree, pprof's visual choice for callgraph.
    #[arg(
        short = 'n',
        long = "nodecount",
        visible_alias = "nodes",
        default_value_t = 80
    )]
    pub nodes: usize,
    /// Leave out nodes whose cum is below this share of the total shown
    /// (pprof's -nodefraction).
    #[arg(long, default_value_t = 0.005, value_name = "FRACTION")]
    pub nodefraction: f64,
    /// Leave out edges whose value is below this share of the total.
    #[arg(long, default_value_t = 0.001, value_name = "FRACTION")]
    pub edgefraction: f64,
}

impl GraphTrimArgs {
    /// The analysis's options, values in `unit`.
    pub fn options(&self, unit: &str) -> protoprof_analysis::TreeOptions {
        protoprof_analysis::TreeOptions {
            node_count: self.nodes,
            node_fraction: self.nodefraction,
            edge_fraction: self.edgefraction,
            unit: unit.to_string(),
        }
    }
}

// Arguments of `protoprof tree`.
#[derive(Args, Debug)]
pub struct TreeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub trim: GraphTrimArgs,
    /// Unit of the values printed: minimum (one unit for the report, as
    /// pprof), auto (each its own), or a unit (ms, MB, the sample unit for
    /// exact integers).
    #[arg(long, default_value = "minimum")]
    pub unit: String,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Where to listen: host:port, :port or a port (loopback unless a host
    /// says otherwise; port 0 picks a free one).
    #[arg(long, default_value = "127.0.0.1:8080", value_name = "ADDRESS")]
    pub listen: String,
    /// Open the page in the desktop's browser.
    #[arg(long)]
    pub open: bool,
    #[command(flatten)]
    pub sources: SourcePathArgs,
}

/// Where source files are read (`list`, and `serve`'s source view).
#[derive(Args, Debug, Clone)]
pub struct SourcePathArgs {
    /// Where to look for source files, `:`-separated, as pprof's
    /// -source_path (default: the current directory; `list` also searches
    /// its parents, `serve` reads nothing above these directories).
    #[arg(long, value_name = "DIRS")]
    pub source_path: Option<String>,
    /// Prefixes to remove from the profile's source paths, `:`-separated,
    /// as pprof's -trim_path.
    #[arg(long, value_name = "PREFIXES")]
    pub trim_path: Option<String>,
}

impl SourcePathArgs {
    /// The files these options name, read as pprof reads them.
    pub fn disk_sources(&self) -> protoprof_analysis::DiskSources {
        protoprof_analysis::DiskSources {
            search_path: self.source_path.clone().unwrap_or_default(),
            trim_path: self.trim_path.clone().unwrap_or_default(),
            confined: false,
        }
    }
}

// Arguments of `protoprof filter`.
#[derive(Args, Debug)]
pub struct FilterArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// The file to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof raw`.
#[derive(Args, Debug)]
pub struct RawArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Functions whose name matches this regular expression.
    pub regex: String,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sources: SourcePathArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof comments`.
#[derive(Args, Debug)]
pub struct CommentsArgs {
    #[command(flatten)]
    pub input: InputArgs,
}

// Arguments of `protoprof disasm`.
#[derive(Args, Debug)]
pub struct DisasmArgs {
    /// Symbols whose name matches this regular expression, or that hold
    /// this address (`0x…`).
    pub regex: String,
    #[command(flatten)]
    pub input: InputArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Where the object tools are, as pprof's -tools: comma-separated
    /// directories, or `nm:PATH` and `objdump:PATH` (default: $PPROF_TOOLS,
    /// then PATH).
    #[arg(long, value_name = "PATHS")]
    pub tools: Option<String>,
    /// Intel syntax instead of AT&T's, as pprof's -intel_syntax.
    #[arg(long)]
    pub intel_syntax: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof weblist`.
#[derive(Args, Debug)]
pub struct WeblistArgs {
    /// Functions whose name, system name or file matches this regular
    /// expression, or the address (`0x…`) of a frame.
    pub regex: String,
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub sources: SourcePathArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Where the object tools are, as pprof's -tools: comma-separated
    /// directories, or `nm:PATH` and `objdump:PATH` (default: $PPROF_TOOLS,
    /// then PATH).
    #[arg(long, value_name = "PATHS")]
    pub tools: Option<String>,
    /// Intel syntax instead of AT&T's, as pprof's -intel_syntax.
    #[arg(long)]
    pub intel_syntax: bool,
    /// Where to write the page (`-`: standard output).
    #[arg(short, long, default_value = "-", value_name = "FILE")]
    pub output: PathBuf,
    /// Open it in a browser instead of writing it, as pprof's -weblist
    /// does without -output.
    #[arg(long, value_enum, value_name = "PROGRAM")]
    pub view: Option<Viewer>,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof callgraph`.
#[derive(Args, Debug)]
pub struct CallgraphArgs {
    #[command(flatten)]
    pub input: InputArgs,
    #[command(flatten)]
    pub trim: GraphTrimArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// DOT text, or drawn by Graphviz's dot (which must be installed): SVG
    /// (with pan and zoom), PNG, PDF, PostScript or GIF.
    #[arg(long, value_enum, default_value_t = GraphFormat::Dot)]
    pub format: GraphFormat,
    /// Where to write it (`-`: standard output).
    #[arg(short, long, default_value = "-", value_name = "FILE")]
    pub output: PathBuf,
    /// A node per call path instead of per function, as pprof's -call_tree.
    #[arg(long)]
    pub call_tree: bool,
    /// Open it in this program (a browser, eog, evince or gv) instead of
    /// writing it, as pprof's -web, -eog, -evince and -gv.
    #[arg(long, value_enum, value_name = "PROGRAM")]
    pub view: Option<Viewer>,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

/// The programs a report can be shown with, as pprof's `-web`, `-eog`,
/// `-evince`, `-gv` and `-kcachegrind`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Viewer {
    /// $BROWSER, Chrome, Chromium, Firefox, sensible-browser or xdg-open.
    Browser,
    Eog,
    Evince,
    Gv,
    Kcachegrind,
}

/// The forms of `protoprof callgraph`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphFormat {
    Dot,
    Svg,
    /// Drawn by Graphviz as pprof's `-png`, `-pdf`, `-ps` and `-gif` draw it.
    Png,
    Pdf,
    Ps,
    Gif,
}

// Arguments of `protoprof callgrind`.
#[derive(Args, Debug)]
pub struct CallgrindArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// A node per call path instead of per function, as pprof's -call_tree.
    #[arg(long)]
    pub call_tree: bool,
    /// Open it in this program (kcachegrind) instead of printing it.
    #[arg(long, value_enum, value_name = "PROGRAM")]
    pub view: Option<Viewer>,
    /// Filters (the granularity is always addresses, as pprof's).
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof folded`.
#[derive(Args, Debug)]
pub struct FoldedArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof flamegraph`.
#[derive(Args, Debug)]
pub struct FlamegraphArgs {
    #[command(flatten)]
    pub input: InputArgs,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long, value_name = "TYPE")]
    pub sample_index: Option<String>,
    /// The SVG file to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// The profile compared against (pprof's -diff_base).
    #[arg(value_name = "BASE")]
    pub base: PathBuf,
    /// The profile whose changes are shown.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Sample type by name or position, as pprof's -sample_index (default:
    /// the profile's default sample type, else its last); --sample-type is
    /// another name for it.
    #[arg(long)]
    pub sample_index: Option<String>,
    /// Scale NEW so each sample type's total is BASE's first (pprof's -normalize).
    #[arg(long)]
    pub normalize: bool,
    /// Rows to show (all by default), pprof's -nodecount.
    #[arg(short = 'n', long = "nodecount", visible_alias = "nodes")]
    pub nodes: Option<usize>,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Native frames that are only addresses symbolized from their
    /// binaries, as pprof does by default: local, fastlocal (names only) or
    /// none; `:force` redoes symbolized mappings;
    /// `:demangle=none|full|templates|default` (`protoprof symbolize` says
    /// what it found for each mapping).
    #[arg(long, default_value = SYMBOLIZE_DEFAULT, value_name = "MODE")]
    pub symbolize: String,
    #[command(flatten)]
    pub selection: SelectionArgs,
}

// Arguments of `protoprof merge`.
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The input files (`-` reads standard input); any form protoprof reads.
    #[arg(required = true, num_args = 2.., value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The file to write (`-`: standard output); never one of the inputs.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
}

// Arguments of `protoprof symbolize`.
#[derive(Args, Debug)]
pub struct SymbolizeArgs {
    /// The profile (pprof in any form protoprof reads; `-` reads standard input).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// The file to write (`-`: standard output); never the input.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
    /// What to read, as pprof's -symbolize: local (functions, files, lines,
    /// inline frames), fastlocal (names only), none; `:force` redoes
    /// mappings already symbolized (`force` alone: local:force);
    /// `:demangle=none|full|templates|default`.
    #[arg(long, default_value = "local", value_name = "MODE")]
    pub symbolize: String,
    /// How names are demangled: none, full, templates or default (no
    /// parameters, no template arguments).
    #[arg(long, value_name = "STYLE")]
    pub demangle: Option<String>,
    /// The report of what was done, per mapping: text or JSON (on standard
    /// error, or standard output when the profile is not written there).
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

/// `protoprof store`'s commands.
#[derive(Subcommand, Debug)]
pub enum StoreCommand {
    /// Add profiles (pprof or OTLP, any form) to a store, created if need be.
    #[command(
        after_help = "Example:\n  protoprof store add fleet/ --service checkout --resource host.name=eu-1 cpu.pb.gz"
    )]
    Add(StoreAddArgs),
    /// Merge each partition's files into one (rows once each), swapped in atomically.
    #[command(after_help = "Example:\n  protoprof store compact fleet/")]
    Compact {
        /// The store's directory.
        #[arg(value_name = "DIR")]
        store: PathBuf,
    },
    /// Read every file of a store whole and look up every reference its rows make.
    #[command(
        after_help = "Examples:\n  protoprof store check fleet/\n  protoprof store check fleet/ --repair"
    )]
    Check {
        /// The store's directory.
        #[arg(value_name = "DIR")]
        store: PathBuf,
        /// Move each file that does not read as its table into DIR/.quarantine/.
        #[arg(long)]
        repair: bool,
    },
    /// Totals per time step of a store's selection, grouped by a label, or of one function.
    #[command(
        after_help = "Examples:\n  protoprof store series fleet/ --step 1h --group-by host.name --sample-type cpu\n  \
                      protoprof store series fleet/ --step 10m --function runtime.mallocgc --from -1d"
    )]
    Series(StoreSeriesArgs),
    /// Write one stored profile, as it went in (equal in reports).
    #[command(
        after_help = "Example:\n  protoprof store get fleet/ --profile-id 0123456789abcdef0123456789abcdef -o one.pb.gz"
    )]
    Get(StoreGetArgs),
    /// Run a Ballista executor that can run the store's queries (`--cluster`).
    #[command(
        after_help = "Example (beside Ballista's scheduler, `ballista-scheduler --bind-port 50050`):\n  \
                      protoprof store executor --scheduler 127.0.0.1:50050 --work-dir /var/tmp/ballista"
    )]
    Executor(StoreExecutorArgs),
}

/// Arguments of `protoprof store executor`.
#[derive(Args, Debug)]
pub struct StoreExecutorArgs {
    /// The scheduler to register with.
    #[arg(long, value_name = "HOST:PORT", default_value = "localhost:50050")]
    pub scheduler: String,
    /// The address to listen on.
    #[arg(long, value_name = "HOST", default_value = "0.0.0.0")]
    pub bind: String,
    /// The host name the scheduler and clients reach this executor by.
    #[arg(long, value_name = "HOST")]
    pub external_host: Option<String>,
    /// The Arrow Flight port results are fetched from.
    #[arg(long, value_name = "PORT", default_value_t = 50051)]
    pub port: u16,
    /// The gRPC port the scheduler gives tasks on.
    #[arg(long, value_name = "PORT", default_value_t = 50052)]
    pub grpc_port: u16,
    /// Where task outputs are written (default: a temporary directory).
    #[arg(long, value_name = "DIR")]
    pub work_dir: Option<PathBuf>,
    /// Tasks run at once (default: the machine's cores).
    #[arg(long, value_name = "N")]
    pub concurrent_tasks: Option<usize>,
}

/// Arguments of `protoprof store add`.
#[derive(Args, Debug)]
pub struct StoreAddArgs {
    /// The store's directory.
    #[arg(value_name = "DIR")]
    pub store: PathBuf,
    /// The profiles to add.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The service of profiles whose resource names none (pprof's never do).
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,
    /// A resource attribute, key=value (repeatable), for profiles whose
    /// resource lacks the key.
    #[arg(long = "resource", value_name = "KEY=VALUE")]
    pub resources: Vec<String>,
}

/// How `protoprof query` writes its answer.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryFormat {
    /// An aligned text table.
    Table,
    /// CSV with a header line.
    Csv,
    /// One JSON object per row.
    Json,
    /// A Parquet file (needs -o).
    Parquet,
}

/// Arguments of `protoprof pprof`: everything after it, as pprof reads it.
#[derive(Args, Debug)]
pub struct PprofArgs {
    /// pprof's flags, then sources (files or URLs).
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "PPROF ARGS"
    )]
    pub args: Vec<String>,
}

/// Arguments of `protoprof query`.
#[derive(Args, Debug)]
pub struct QueryArgs {
    /// The store's directory.
    #[arg(long, value_name = "DIR")]
    pub store: PathBuf,
    /// One SQL statement over the tables and views of docs/store.md.
    #[arg(value_name = "SQL")]
    pub sql: String,
    /// Run the store's queries on an Apache DataFusion Ballista cluster,
    /// given by its scheduler (df://host:50050); its executors must reach
    /// the store at the same path.
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
    /// The answer's form.
    #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
    pub format: QueryFormat,
    /// Write the answer here (`-`: standard output, the default).
    #[arg(short, long, value_name = "FILE", default_value = "-")]
    pub output: PathBuf,
}

/// Arguments of `protoprof store series`.
#[derive(Args, Debug)]
pub struct StoreSeriesArgs {
    /// The store's directory.
    #[arg(value_name = "DIR")]
    pub store: PathBuf,
    /// The step: 10s, 1m, 1h, 1d.
    #[arg(long, default_value = "1m")]
    pub step: String,
    /// Group by this label or attribute (a selector's key: service.name, host.name, …).
    #[arg(long, value_name = "KEY")]
    pub group_by: Option<String>,
    /// Only the stacks through the function of this exact name: its cum over time.
    #[arg(long, value_name = "NAME")]
    pub function: Option<String>,
    /// Run the store's queries on an Apache DataFusion Ballista cluster,
    /// given by its scheduler (df://host:50050); its executors must reach
    /// the store at the same path.
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
    /// A label selector, as Pyroscope and Parca take it:
    /// '{service.name="checkout", host.name=~"eu-.*"}' (=, !=, =~, !~).
    #[arg(long, value_name = "SELECTOR")]
    pub select: Option<String>,
    /// Profiles from this time on: RFC 3339, a day, or relative to now
    /// (-1h, -30m, -7d).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub from: Option<String>,
    /// Profiles before this time (as --from).
    #[arg(long, value_name = "TIME", allow_hyphen_values = true)]
    pub to: Option<String>,
    /// Only this sample type (repeatable).
    #[arg(long, value_name = "TYPE")]
    pub sample_type: Vec<String>,
    /// The answer's form (parquet is not offered: the series is small).
    #[arg(long, value_enum, default_value_t = QueryFormat::Table)]
    pub format: QueryFormat,
    /// Read the raw rows only, never the rollups `store compact` writes of
    /// days that are over (the same answer, slower).
    #[arg(long)]
    pub no_rollups: bool,
}

/// Arguments of `protoprof store get`.
#[derive(Args, Debug)]
pub struct StoreGetArgs {
    /// The store's directory.
    #[arg(value_name = "DIR")]
    pub store: PathBuf,
    /// The profile's id, as `store add` prints it (32 hex digits).
    #[arg(long, value_name = "ID")]
    pub profile_id: String,
    /// The file to write (`-`: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// What to write: pprof, or OTLP v1development with the resource the
    /// profile was stored with and its id as the profile id.
    #[arg(long, value_enum, default_value_t = Target::Pprof)]
    pub to: Target,
    /// How to write it: binary protobuf, OTLP/JSON or text format.
    #[arg(long, value_enum, default_value_t = Encoding::Binary)]
    pub format: Encoding,
    /// Compress the output with gzip (implied by an output name ending in .gz).
    #[arg(long)]
    pub gzip: bool,
    /// Run the store's queries on an Apache DataFusion Ballista cluster,
    /// given by its scheduler (df://host:50050); its executors must reach
    /// the store at the same path.
    #[arg(long, value_name = "URL")]
    pub cluster: Option<String>,
}

// Arguments of `protoprof frames`.
#[derive(Args, Debug)]
pub struct FramesArgs {
    /// The input file (`-` reads standard input); any form protoprof reads.
    pub file: PathBuf,
    /// How frames are delimited (detected when omitted).
    #[arg(long, value_enum)]
    pub framing: Option<FramingChoice>,
    /// The message type, e.g. perftools.profiles.Profile or one of --proto's (detected when omitted).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Print each frame's message in text format.
    #[arg(long)]
    pub decode: bool,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

/// `protoprof relay …`.
#[derive(Subcommand, Debug)]
pub enum RelayCommand {
    /// The relay: management servers upstream to it, proxies subscribe to the merge. Stops on SIGINT/SIGTERM.
    #[command(after_help = "Example:\n  protoprof relay serve --listen 127.0.0.1:18000")]
    Serve(RelayServeArgs),
    /// Act as a management server: upstream the resources in FILEs and report each ACK or NACK.
    #[command(
        after_help = "FILEs hold DiscoveryResponses, DeltaDiscoveryResponses or Resources, in any form protoprof\n\
                      reads (binary, gzip, text, JSON, or a gRPC capture such as `watch --capture` writes).\n\
                      Resources are grouped by their own type URL. Exit status 1 when the relay NACKs.\n\n\
                      Example:\n  protoprof relay push --relay 127.0.0.1:18000 --delta --hold clusters.txt"
    )]
    Push(RelayPushArgs),
    /// Act as a proxy: subscribe and print each update as it arrives.
    #[command(
        after_help = "Examples:\n  protoprof relay watch --relay 127.0.0.1:18000 --delta\n  protoprof relay watch --relay 127.0.0.1:18000 --format json --capture stream.bin --count 5"
    )]
    Watch(RelayWatchArgs),
}

// Arguments of `protoprof relay serve`.
#[derive(Args, Debug)]
pub struct RelayServeArgs {
    /// Address to listen on, as 127.0.0.1:PORT (port 0 picks a free one); it is printed.
    #[arg(long, default_value = "127.0.0.1:18000")]
    pub listen: String,
    /// A type URL to ask management servers for from the start (repeatable; default: Quilkin's and
    /// Envoy's main types). Proxies' subscriptions add theirs.
    #[arg(long = "type-url", value_name = "TYPE_URL")]
    pub type_urls: Vec<String>,
    /// Largest message accepted, in bytes.
    #[arg(long, default_value_t = 16 << 20)]
    pub max_message_bytes: usize,
    /// Most resources one management server may provide, over all types.
    #[arg(long, default_value_t = 100_000)]
    pub max_resources_per_server: usize,
    /// Most streams open at once.
    #[arg(long, default_value_t = 10_000)]
    pub max_streams: usize,
    /// The relay's node id upstream and control-plane identifier downstream.
    #[arg(long, default_value = "protoprof-relay")]
    pub identifier: String,
}

// Arguments of `protoprof relay push`.
#[derive(Args, Debug)]
pub struct RelayPushArgs {
    /// The relay, as 127.0.0.1:PORT.
    #[arg(long)]
    pub relay: String,
    /// The input files (`-` reads standard input); any form protoprof reads.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The message type of the files (detected by default).
    #[arg(long)]
    pub r#type: Option<String>,
    /// Upstream incrementally (DeltaAggregatedResources).
    #[arg(long)]
    pub delta: bool,
    /// Keep the stream open, and the resources served, until interrupted.
    #[arg(long)]
    pub hold: bool,
    /// The management server's control-plane identifier.
    #[arg(long, default_value = "protoprof-push")]
    pub identifier: String,
}

// Arguments of `protoprof relay watch`.
#[derive(Args, Debug)]
pub struct RelayWatchArgs {
    /// The relay, as 127.0.0.1:PORT.
    #[arg(long)]
    pub relay: String,
    /// A type URL to subscribe to (repeatable; default: Quilkin's and Envoy's main types).
    #[arg(long = "type-url", value_name = "TYPE_URL")]
    pub type_urls: Vec<String>,
    /// Subscribe incrementally (the relay's SubscribeDeltaResources).
    #[arg(long)]
    pub delta: bool,
    /// With --delta: Envoy's DeltaAggregatedResources instead.
    #[arg(long, requires = "delta")]
    pub ads: bool,
    /// Output: human text, or JSON for machines.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Also write every response received, as gRPC frames (`protoprof frames` reads them).
    #[arg(long, value_name = "FILE")]
    pub capture: Option<PathBuf>,
    /// Stop after this many updates.
    #[arg(long)]
    pub count: Option<u64>,
    /// The proxy's node id.
    #[arg(long, default_value = "protoprof-watch")]
    pub identifier: String,
}

/// The OTLP transport of `send`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendProtocol {
    #[value(name = "grpc")]
    Grpc,
    #[value(name = "http/protobuf")]
    HttpProtobuf,
    #[value(name = "http/json")]
    HttpJson,
}

/// Compression of `send`'s requests.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendCompression {
    Gzip,
    None,
}

// Arguments of `protoprof send`. The global --timeout is the time one
// attempt may take (OTEL_EXPORTER_OTLP_TIMEOUT otherwise).
#[derive(Args, Debug)]
pub struct SendArgs {
    /// Profiles to send: pprof (any form protoprof reads, URLs too) or OTLP
    /// profiles v1development.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The receiver: a base URL as OTEL_EXPORTER_OTLP_ENDPOINT is
    /// (`/v1development/profiles` is appended over HTTP when it has no
    /// path), or host:port for gRPC [default: http://localhost:4318, gRPC
    /// localhost:4317].
    #[arg(long, value_name = "URL")]
    pub endpoint: Option<String>,
    /// The transport [default: http/protobuf, or OTEL_EXPORTER_OTLP_PROTOCOL].
    #[arg(long, value_enum)]
    pub protocol: Option<SendProtocol>,
    /// A request header (gRPC metadata), key=value (repeatable).
    #[arg(long = "header", value_name = "KEY=VALUE")]
    pub headers: Vec<String>,
    /// Compress requests [default: none, or OTEL_EXPORTER_OTLP_COMPRESSION].
    #[arg(long, value_enum)]
    pub compression: Option<SendCompression>,
    /// A resource attribute for converted pprof profiles, key=value (repeatable).
    #[arg(long = "resource", value_name = "KEY=VALUE")]
    pub resources: Vec<String>,
    /// The largest request; larger inputs are split between profiles
    /// [default: 4MiB for gRPC, 20MiB over HTTP, the Collector's limits].
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub max_request_size: Option<u64>,
    /// Output: one line per request, or one JSON object per request.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

// Arguments of `protoprof receive`.
#[derive(Args, Debug)]
pub struct ReceiveArgs {
    /// The OTLP/gRPC listener.
    #[arg(long, value_name = "ADDRESS")]
    pub grpc: Option<std::net::SocketAddr>,
    /// The OTLP/HTTP listener.
    #[arg(long, value_name = "ADDRESS")]
    pub http: Option<std::net::SocketAddr>,
    /// Keep each request (decompressed) as a file in DIR.
    #[arg(long, value_name = "DIR", conflicts_with = "out_framed")]
    pub out: Option<PathBuf>,
    /// Write every valid request's profiles to this profile store (docs/store.md),
    /// synced to disk before the request is answered; a request that cannot be
    /// written is answered 503 (gRPC UNAVAILABLE), so the exporter retries.
    #[arg(long, value_name = "DIR")]
    pub store: Option<PathBuf>,
    /// Append each request to FILE in the Collector file exporter's framing
    /// (every protoprof command reads it as one message).
    #[arg(long, value_name = "FILE")]
    pub out_framed: Option<PathBuf>,
    /// Pass each decoded request on to the OTLP/HTTP receiver at URL.
    #[arg(long, value_name = "URL")]
    pub forward: Option<String>,
    /// Stop after N requests (refusals not counted).
    #[arg(long, value_name = "N")]
    pub count: Option<u64>,
    /// The largest HTTP body, compressed or not.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "20MiB")]
    pub max_request_size: u64,
    /// The largest gRPC message.
    #[arg(long, value_name = "SIZE", value_parser = parse_size, default_value = "4MiB")]
    pub max_message_size: u64,
    /// Requests read and checked at once; more wait up to --read-timeout, then are answered UNAVAILABLE (503).
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub max_concurrent: usize,
    /// Seconds a client may take to send a request's headers, and its body.
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub read_timeout: u64,
    /// Output: one line per request, or one JSON object per event.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use clap::CommandFactory;

    use super::*;

    /// Options whose name means something else in some commands (`*`: in
    /// each its own), with why; every other command's wording must agree.
    const OTHER_MEANINGS: [(&str, &[&str], &str); 23] = [
        (
            "strict",
            &["validate"],
            "warnings of validation, not a store's files",
        ),
        (
            "help",
            &["*"],
            "clap's own, shorter where a command has long help",
        ),
        ("format", &["*"], "each command lists the forms it writes"),
        ("output", &["*"], "each command says what it writes there"),
        (
            "identifier",
            &["*"],
            "each relay command's role names its identifier",
        ),
        ("count", &["relay watch"], "updates, not requests"),
        (
            "delta",
            &["relay push"],
            "another stream of the relay service",
        ),
        ("from", &["encode"], "the input's form, not a time"),
        (
            "to",
            &["decode", "convert", "store get"],
            "the output's form, not a time",
        ),
        ("listen", &["relay serve"], "a full address, printed"),
        (
            "max-request-size",
            &["send"],
            "what a request is split to, not what is refused",
        ),
        (
            "nodecount",
            &["tree", "callgraph"],
            "graph nodes with pprof's default, not rows",
        ),
        (
            "no-rollups",
            &["store series"],
            "its store is its DIR, not --store",
        ),
        ("normalize", &["diff"], "its operands are BASE and NEW"),
        ("raw", &["view"], "text format, not schema-less"),
        ("resource", &["*"], "where each command adds it differs"),
        (
            "sample-type",
            &["store series"],
            "no report's sample index there",
        ),
        (
            "store",
            &["query", "receive"],
            "the store queried, or written",
        ),
        ("symbolize", &["symbolize"], "what the command itself reads"),
        (
            "timeout",
            &["send", "relay push"],
            "what it waits for (help_in)",
        ),
        (
            "type",
            &["relay push"],
            "a relay resource's type, not a profile's",
        ),
        (
            "type-url",
            &["relay watch"],
            "subscribed to, not asked for upstream",
        ),
        ("view", &["*"], "each opens its own kind of viewer"),
    ];

    /// Each visible option of `command` (words `path`) and its subcommands:
    /// its long name, its help, and the command.
    fn wordings(command: &clap::Command, path: &str, out: &mut Vec<(String, String, String)>) {
        for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
            let (Some(long), Some(help)) = (arg.get_long(), arg.get_help()) else {
                continue;
            };
            out.push((long.to_string(), help.to_string(), path.to_string()));
        }
        for sub in command.get_subcommands() {
            let name = format!("{path} {}", sub.get_name());
            wordings(sub, name.trim(), out);
        }
    }

    /// An option that many commands share says the same thing in every
    /// one's help (ripgrep's rule: one declaration, one text).
    #[test]
    fn every_shared_option_has_one_wording() {
        let mut command = Cli::command();
        command.build();
        hide_sections(&mut command, "");
        let mut found = Vec::new();
        wordings(&command, "", &mut found);
        let mut by_option: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
        for (long, help, at) in found {
            let helps = by_option.entry(long).or_default();
            helps.entry(help).or_default().push(at);
        }
        let elsewhere = |long: &str, at: &str| {
            let other = OTHER_MEANINGS.iter().find(|(l, _, _)| *l == long);
            other.is_some_and(|(_, commands, _)| commands.iter().any(|c| *c == "*" || *c == at))
        };
        let differing: Vec<String> = by_option
            .iter()
            .filter_map(|(long, helps)| {
                let agreeing: BTreeMap<&String, Vec<&String>> = (helps.iter())
                    .map(|(help, at)| (help, at.iter().filter(|a| !elsewhere(long, a)).collect()))
                    .filter(|(_, at): &(_, Vec<_>)| !at.is_empty())
                    .collect();
                (agreeing.len() > 1).then(|| format!("--{long}: {agreeing:#?}"))
            })
            .collect();
        assert!(differing.is_empty(), "{}", differing.join("\n"));
    }

    /// Help lists what applies: `query` reads no profile (no URL options,
    /// no input limits), `top` shows no label filters of label reports,
    /// and `--timeout` says what it bounds in each command.
    #[test]
    fn help_shows_what_applies_to_the_command() {
        let help = |words: &[&str]| {
            let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
            help_of(&words).unwrap()
        };
        let query = help(&["query"]);
        for absent in ["--seconds", "--tls-ca", "--max-input-size", "--timeout"] {
            assert!(!query.contains(absent), "query: {absent}\n{query}");
        }
        for (words, absent) in [(&["top"][..], "--tagshow"), (&["diff"][..], "--taghide")] {
            assert!(!help(words).contains(absent), "{words:?}: {absent}");
        }
        assert!(help(&["tags"]).contains("--tagshow"));
        let timeout = |words: &[&str]| {
            let text = help(words);
            let at = text.find("--timeout").unwrap();
            text[at..].lines().take(2).collect::<Vec<_>>().join(" ")
        };
        assert!(
            timeout(&["top"]).contains("URL input"),
            "{}",
            timeout(&["top"])
        );
        assert!(
            !timeout(&["top"]).contains("relay"),
            "{}",
            timeout(&["top"])
        );
        assert!(timeout(&["send"]).contains("each attempt"));
        assert!(timeout(&["relay", "push"]).contains("relay's answer"));
    }
}
