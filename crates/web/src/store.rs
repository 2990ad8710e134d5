//! A profile store behind the page (`serve --store`): the selection the
//! URL names (`sel`, `from`, `to`) and a second one to compare with
//! (`bsel`, `bfrom`, `bto`), resolved through the caller's [`StorePane`]
//! and kept.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::params::Params;
use crate::served::{Compare, StorePane, StoreSelection};
use crate::served_profile::ServedProfile;
use crate::WebError;

/// A selection resolved: its profile, and the two sides when compared.
pub(crate) struct Selected {
    pub(crate) profile: ServedProfile,
    pub(crate) compare: Option<Compare>,
    pub(crate) title: String,
}

/// How many resolved selections are kept.
const KEPT: usize = 8;

/// A selection and the base it is compared with, as the URL names them.
type SelectionKey = (StoreSelection, Option<StoreSelection>);

/// Resolved selections by their URL fields.
#[derive(Default)]
pub(crate) struct Selections {
    kept: Mutex<HashMap<SelectionKey, Arc<Selected>>>,
}

impl Selections {
    /// The selection `params` names, resolved through `pane`; `None` when
    /// the URL names none (the server's own profile is read).
    pub(crate) fn resolve(
        &self,
        pane: &dyn StorePane,
        params: &Params,
    ) -> Result<Option<Arc<Selected>>, WebError> {
        let Some((selection, base)) = fields(params) else {
            return Ok(None);
        };
        let key = (selection, base);
        if let Some(kept) = self.lock().get(&key) {
            return Ok(Some(kept.clone()));
        }
        let (profile, compare) = pane
            .select(&key.0, key.1.as_ref())
            .map_err(WebError::Analysis)?;
        let title = match &key.1 {
            Some(base) => format!("{} − {}", key.0.title(), base.title()),
            None => key.0.title(),
        };
        let selected = Arc::new(Selected {
            profile: profile.into(),
            compare,
            title,
        });
        let mut kept = self.lock();
        if kept.len() >= KEPT {
            kept.clear();
        }
        kept.insert(key, selected.clone());
        Ok(Some(selected))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<SelectionKey, Arc<Selected>>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The selection and base the URL names, if it names any.
pub(crate) fn fields(params: &Params) -> Option<SelectionKey> {
    let side = |select: &str, from: &str, to: &str| {
        let get = |name: &str| params.get(name).unwrap_or("").trim().to_string();
        let selection = StoreSelection {
            select: get(select),
            from: get(from),
            to: get(to),
        };
        let named = [select, from, to].iter().any(|n| params.get(n).is_some());
        named.then_some(selection)
    };
    let selection = side("sel", "from", "to");
    let base = side("bsel", "bfrom", "bto");
    match (selection, base) {
        (None, None) => None,
        (selection, base) => Some((selection.unwrap_or_default(), base)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_names_a_selection_and_a_base() {
        assert!(fields(&Params::parse("si=cpu&f=main")).is_none());
        let (selection, base) =
            fields(&Params::parse("sel=service.name%3D%22a%22&from=-1h")).unwrap();
        assert_eq!(selection.select, r#"service.name="a""#);
        assert_eq!(
            (selection.from.as_str(), selection.to.as_str()),
            ("-1h", "")
        );
        assert!(base.is_none());
        let (selection, base) = fields(&Params::parse("bfrom=-2h&bto=-1h")).unwrap();
        assert_eq!(selection, StoreSelection::default());
        assert_eq!(base.unwrap().to, "-1h");
        assert_eq!(selection.title(), "{}");
    }
}
