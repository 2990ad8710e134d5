//! The page and its script and styles, built into the binary: the UI works
//! offline and serves no file from disk.

/// The page every view shares; the script reads the view from the path.
pub(crate) const PAGE: &str = include_str!("../assets/index.html");

/// An asset under `/ui/` by name: its content type and bytes.
pub(crate) fn asset(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "app.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("../assets/app.js"),
        )),
        "flame.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("../assets/flame.js"),
        )),
        "store.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("../assets/store.js"),
        )),
        "message.js" => Some((
            "text/javascript; charset=utf-8",
            include_str!("../assets/message.js"),
        )),
        "app.css" => Some(("text/css; charset=utf-8", include_str!("../assets/app.css"))),
        _ => None,
    }
}
