//! Usage errors for `go tool pprof` habits, said before clap reads the
//! arguments: `-nodecount=5` (pprof's single dash), which clap would read
//! as `-n odecount=5`, and `serve --http ADDR` (pprof's `-http`).

use clap::Command;

/// What to say of `args` (without the program name) when they carry a
/// pprof habit `command` (protoprof's) would misread or refuse.
pub fn habit(command: &Command, args: &[String]) -> Option<String> {
    let (sub, words, rest) = subcommand(command, args)?;
    if sub.get_name() == "pprof" {
        return None;
    }
    let path = format!("protoprof {}", words.join(" "));
    for arg in rest.iter().take_while(|a| *a != "--") {
        if let Some(long) = single_dash_long(sub, arg) {
            let (name, value) = arg[1..].split_once('=').unwrap_or((&arg[1..], ""));
            let fixed = match value {
                "" => format!("--{long}"),
                value => format!("--{long}={value}"),
            };
            return Some(format!(
                "{arg}: {path}'s options take two dashes ({fixed}); pprof's own command line \
                 is `protoprof pprof` (protoprof pprof -top -{name}{}{value} FILE)",
                if value.is_empty() { "" } else { "=" }
            ));
        }
        let http = arg == "--http" || arg.starts_with("--http=");
        if http && sub.get_name() == "serve" {
            return Some(format!(
                "{arg}: {path} takes the address to listen on as --listen ADDR (go tool pprof's \
                 -http): protoprof serve --listen 127.0.0.1:8080 FILE"
            ));
        }
    }
    None
}

/// The innermost subcommand `args` name, its words (`store add`), and
/// the arguments after it.
fn subcommand<'c, 'a>(
    command: &'c Command,
    args: &'a [String],
) -> Option<(&'c Command, Vec<&'c str>, &'a [String])> {
    let (mut at, mut words, mut after) = (command, Vec::new(), None);
    for (i, arg) in args.iter().enumerate() {
        if arg.starts_with('-') {
            if after.is_some() {
                break;
            }
            continue;
        }
        match at.find_subcommand(arg) {
            Some(sub) => {
                (at, after) = (sub, Some(i + 1));
                words.push(sub.get_name());
            }
            None => break,
        }
    }
    after.map(|i| (at, words, &args[i..]))
}

/// The long option `arg` names with one dash (`-nodecount=5`,
/// `-sample_index=cpu`: pprof's underscores read as dashes), if any.
fn single_dash_long(command: &Command, arg: &str) -> Option<String> {
    let word = arg.strip_prefix('-').filter(|w| !w.starts_with('-'))?;
    let name = word.split('=').next()?.replace('_', "-");
    if name.chars().count() < 2 {
        return None;
    }
    command.get_arguments().find_map(|a| {
        let mut longs = (a.get_long().into_iter()).chain(a.get_all_aliases().into_iter().flatten());
        longs
            .any(|l| l == name)
            .then(|| a.get_long().unwrap_or(&name).to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn said(line: &str) -> Option<String> {
        let args: Vec<String> = line.split(' ').map(str::to_string).collect();
        habit(&crate::cli::Cli::command(), &args)
    }

    #[test]
    fn single_dash_long_options_are_named_with_two() {
        let top = said("top -nodecount=5 cpu.pb.gz").unwrap();
        assert!(top.contains("(--nodecount=5)"), "{top}");
        assert!(top.contains("protoprof pprof -top -nodecount=5"), "{top}");
        let index = said("top -sample_index=alloc_space heap.pb.gz").unwrap();
        assert!(index.contains("--sample-index=alloc_space"), "{index}");
        let focus = said("peek -focus main cpu.pb.gz").unwrap();
        assert!(focus.contains("(--focus)"), "{focus}");
    }

    #[test]
    fn what_clap_reads_as_meant_is_left_to_it() {
        for fine in [
            "top -n 5 cpu.pb.gz",
            "top --nodecount=5 cpu.pb.gz",
            "pprof -top -nodecount=5 cpu.pb.gz",
            "top --store fleet --from -1h",
            "serve --listen :9090 cpu.pb.gz",
            "top -- -nodecount",
        ] {
            assert_eq!(said(fine), None, "{fine}");
        }
    }

    #[test]
    fn serve_http_points_at_listen() {
        let serve = said("serve --http :9090 cpu.pb.gz").unwrap();
        assert!(serve.contains("--listen"), "{serve}");
        assert!(said("serve --http=:9090 cpu.pb.gz")
            .unwrap()
            .contains("--listen"));
        assert_eq!(said("receive --http 127.0.0.1:4318"), None);
    }
}
