//! docs/validation-rules.md lists exactly the rules of `rules::ALL`.
//! Run with PROTOPROF_UPDATE_DOCS=1 to rewrite the table after changing rules.

use protoprof_validate::rules;

fn table() -> String {
    let mut out = String::from("| code | severity | checks | from |\n|---|---|---|---|\n");
    for r in rules::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} | {} |\n",
            r.code,
            r.severity.name(),
            r.summary,
            r.source.replace('|', "\\|")
        ));
    }
    out
}

#[test]
fn the_catalogue_document_lists_every_rule() {
    // The package's root, where cargo runs its tests (not a path fixed at
    // build time: another clone may reuse this binary).
    let path = std::path::Path::new("../../docs/validation-rules.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let (before, rest) = doc
        .split_once("<!-- rules:start -->\n")
        .expect("start marker");
    let (current, after) = rest.split_once("<!-- rules:end -->").expect("end marker");
    let wanted = table();
    if std::env::var_os("PROTOPROF_UPDATE_DOCS").is_some() {
        std::fs::write(
            path,
            format!("{before}<!-- rules:start -->\n{wanted}<!-- rules:end -->{after}"),
        )
        .unwrap();
        return;
    }
    assert_eq!(current, wanted, "docs/validation-rules.md is stale; run PROTOPROF_UPDATE_DOCS=1 cargo test -p protoprof-validate");
}

#[test]
fn codes_are_unique_and_well_formed() {
    let mut codes: Vec<&str> = rules::ALL.iter().map(|r| r.code).collect();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), rules::ALL.len());
    for code in codes {
        let parts: Vec<&str> = code.split('-').collect();
        assert!(
            parts.len() == 3
                && ["PPROF", "OTLP", "OTLPDEV", "RELAY", "JSON"].contains(&parts[0])
                && parts[2].len() == 3,
            "{code}"
        );
    }
}
