//! Each location's frames, as interned function names: what every analysis
//! walks per stack entry, so built once per profile and kept flat.

use protoprof_model_meta::{IdIndex, StringTable};
use protoprof_model_pprof::perftools::profiles::{Location, Profile};

/// Function names interned once, and each location's frames as name ids,
/// innermost (leaf) first; a location without lines is named by its address.
pub(crate) struct Frames {
    /// Interned names; a frame is an index into this list.
    pub(crate) names: Vec<String>,
    /// Every location's frames laid end to end.
    frames: Vec<u32>,
    /// Location id -> its `frames[start..end]`. As with a map built from
    /// the list, the last location of a repeated id wins.
    by_location: IdIndex<(u32, u32)>,
}

impl Frames {
    pub(crate) fn new(p: &Profile) -> Frames {
        let mut names = Names::default();
        let (functions, _) = IdIndex::positions(p.function.iter().map(|f| f.id));
        let mut frames = Vec::new();
        let mut spans = Vec::with_capacity(p.location.len());
        for location in &p.location {
            let start = frames.len() as u32;
            location_frames(p, location, &functions, &mut names, &mut frames);
            spans.push((location.id, (start, frames.len() as u32)));
        }
        let (by_location, _) = IdIndex::new(&spans);
        Frames {
            names: names.list,
            frames,
            by_location,
        }
    }

    /// The frames of location `id`, leaf first; `None` for an unknown id.
    #[inline]
    pub(crate) fn of_location(&self, id: u64) -> Option<&[u32]> {
        let (start, end) = self.by_location.get(id)?;
        Some(&self.frames[start as usize..end as usize])
    }
}

/// Appends one location's frames: a name per line, or its address.
fn location_frames(
    p: &Profile,
    location: &Location,
    functions: &IdIndex<u32>,
    names: &mut Names,
    out: &mut Vec<u32>,
) {
    for line in &location.line {
        let name = functions
            .get(line.function_id)
            .map_or("", |f| p.string(p.function[f as usize].name));
        out.push(names.intern(name));
    }
    if location.line.is_empty() {
        out.push(names.intern(&format!("{:#x}", location.address)));
    }
}

/// Names in first-seen order, each once.
#[derive(Default)]
struct Names {
    list: Vec<String>,
    ids: std::collections::HashMap<String, u32>,
}

impl Names {
    fn intern(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.list.push(name.to_string());
        let id = self.list.len() as u32 - 1;
        self.ids.insert(name.to_string(), id);
        id
    }
}
