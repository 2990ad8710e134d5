//! Go's `path/filepath` on slash-separated paths, as pprof's reports use
//! it: `Clean` and `Base`.

/// Go's `filepath.Clean`: repeated and trailing separators, `.` elements
/// and `..` after a name removed; `.` for an empty path.
pub(crate) fn clean(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            name => parts.push(name),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Base`: the last element, trailing separators removed;
/// `/` for the root and `.` for an empty path.
pub(crate) fn base(path: &str) -> &str {
    match path.trim_end_matches('/') {
        "" if path.is_empty() => ".",
        "" => "/",
        trimmed => trimmed.rsplit('/').next().unwrap_or(trimmed),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_clean_and_end_as_go_has_them() {
        assert_eq!(clean("./x//y/./z.c"), "x/y/z.c");
        assert_eq!(clean("/a/b/../../../c"), "/c");
        assert_eq!(clean("../a"), "../a");
        assert_eq!(clean(""), ".");
        assert_eq!(base("/src/a.c"), "a.c");
        assert_eq!(base("dir/"), "dir");
        assert_eq!(base("/"), "/");
        assert_eq!(base(""), ".");
    }
}
