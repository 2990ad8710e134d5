//! `refs.rs`: the reference table in executable form.
//!
//! For each message that holds tables (`Profile`), a typed walker visits every
//! reference field of it and of the messages below it, and every message's
//! unknown fields, calling a `protoprof_model_meta::ReferenceVisitor`. Only
//! subtrees that hold references are walked in full; other message fields
//! are checked for unknown fields one level down and not entered, which also
//! keeps the walk free of recursion through cyclic types (`AnyValue`).

use std::collections::{BTreeMap, BTreeSet};

use anyhow::{Context, Result};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{format_ident, quote};

use super::rust_names::{snake, type_path};
use super::schema::{MessageInfo, ParsedCrate};

/// Rust ident of a proto field: keywords get a `_` suffix, as in rust-protobuf.
fn field_ident(name: &str) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        Ident::new(name, Span::call_site())
    } else {
        format_ident!("{}_", name)
    }
}

fn fn_name(prefix: &str, full_name: &str) -> Ident {
    format_ident!("{}_{}", prefix, full_name.replace('.', "_").to_lowercase())
}

/// Message fields the walker may follow: singular or repeated message fields
/// of this crate's types (maps and oneof members are not followed).
fn message_fields<'a>(
    info: &'a MessageInfo,
    parsed: &'a ParsedCrate,
) -> impl Iterator<Item = (&'a super::schema::FieldInfo, &'a str)> {
    info.fields.iter().filter_map(move |f| {
        let target = f.message_type.as_deref()?;
        (!f.map && !f.in_oneof && parsed.messages.contains_key(target)).then_some((f, target))
    })
}

/// Messages that hold a reference, directly or below them.
fn holding_references(parsed: &ParsedCrate) -> BTreeSet<String> {
    let mut holding: BTreeSet<String> = parsed
        .references
        .iter()
        .map(|r| r.message.clone())
        .collect();
    loop {
        let before = holding.len();
        for (name, info) in &parsed.messages {
            if message_fields(info, parsed).any(|(_, target)| holding.contains(target)) {
                holding.insert(name.clone());
            }
        }
        if holding.len() == before {
            return holding;
        }
    }
}

pub fn refs_rs(parsed: &ParsedCrate) -> Result<Option<TokenStream>> {
    let roots: BTreeSet<&str> = parsed
        .references
        .iter()
        .map(|r| r.table.message.as_str())
        .collect();
    if roots.is_empty() {
        return Ok(None);
    }
    let mut references_of: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, r) in parsed.references.iter().enumerate() {
        references_of.entry(r.message.as_str()).or_default().push(i);
    }
    let (deep, _) = walked_messages(parsed, &roots);
    let mut roots = roots;
    roots.extend(envelopes_of_unreached(parsed, &deep, &references_of));
    let (deep, shallow) = walked_messages(parsed, &roots);

    let mut functions: Vec<TokenStream> = shallow
        .iter()
        .map(|name| unknown_fields_fn(parsed, name))
        .collect();
    for name in &deep {
        let references = references_of.get(name.as_str()).into_iter().flatten();
        functions.push(visit_fn(parsed, name, references.copied(), &deep));
    }
    let walkers = roots.iter().map(|root| {
        let info = parsed.messages.get(*root).context("a table root is a message of the crate")?;
        let (ty, visit) = (type_path(info), fn_name("visit", root));
        let walker = format_ident!("walk_{}", snake(info.nesting.last().expect("named")));
        let doc = format!(
            " Visits every reference (see `SCHEMA.references`) of a `{root}` and of the messages it \
             holds, and every message with unknown fields. `path` is the root's path; it is \
             extended while walking and restored at the end."
        );
        Ok(quote! {
            #[doc = #doc]
            pub fn #walker<V: ReferenceVisitor>(root: &#ty, path: &mut RefPath, visitor: &mut V) {
                #visit(root, path, visitor);
            }
        })
    });
    let walkers = walkers.collect::<Result<Vec<_>>>()?;
    Ok(Some(quote! {
        //! Reference walkers: the reference table of `meta.rs` as typed code, so
        //! checking every index of a large profile needs no reflection.
        // The casts are generated for every integer type, so some are no-ops.
        #![allow(clippy::unnecessary_cast)]

        use protoprof_model_meta::{RefPath, ReferenceVisitor};

        use crate::meta::SCHEMA;

        #(#walkers)*
        #(#functions)*
    }))
}

/// Top-level messages (no message of the crate holds them) from which a
/// message with references is reached that no table root reaches: where
/// the tables sit beside the data rather than above it (v1development's
/// dictionary next to its profiles), the walker starts at the envelope.
fn envelopes_of_unreached<'a>(
    parsed: &'a ParsedCrate,
    deep: &BTreeSet<String>,
    references_of: &BTreeMap<&str, Vec<usize>>,
) -> Vec<&'a str> {
    let unreached: BTreeSet<&str> = references_of
        .keys()
        .copied()
        .filter(|m| !deep.contains(*m))
        .collect();
    if unreached.is_empty() {
        return Vec::new();
    }
    let held: BTreeSet<&str> = parsed
        .messages
        .values()
        .flat_map(|info| message_fields(info, parsed).map(|(_, target)| target))
        .collect();
    parsed
        .messages
        .keys()
        .map(String::as_str)
        .filter(|name| !held.contains(name))
        .filter(|name| {
            let (reached, _) = walked_messages(parsed, &BTreeSet::from([*name]));
            unreached.iter().any(|m| reached.contains(*m))
        })
        .collect()
}

/// Messages walked in full (they hold references, or messages that do),
/// and those below them only checked for unknown fields.
fn walked_messages(
    parsed: &ParsedCrate,
    roots: &BTreeSet<&str>,
) -> (BTreeSet<String>, Vec<String>) {
    let holding = holding_references(parsed);
    // Messages walked in full, and those only checked for unknown fields.
    let mut deep: BTreeSet<String> = BTreeSet::new();
    let mut shallow: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<String> = roots.iter().map(|r| r.to_string()).collect();
    while let Some(name) = pending.pop() {
        if !deep.insert(name.clone()) {
            continue;
        }
        let info = &parsed.messages[&name];
        for (_, target) in message_fields(info, parsed) {
            if holding.contains(target) {
                pending.push(target.to_string());
            } else {
                shallow.insert(target.to_string());
            }
        }
    }
    let shallow = shallow.difference(&deep).cloned().collect();
    (deep, shallow)
}

/// The function that reports a message's unknown fields.
fn unknown_fields_fn(parsed: &ParsedCrate, name: &str) -> TokenStream {
    let info = &parsed.messages[name];
    let (ty, function) = (type_path(info), fn_name("unknown", name));
    quote! {
        fn #function<V: ReferenceVisitor>(m: &#ty, path: &mut RefPath, v: &mut V) {
            if m.special_fields.unknown_fields().iter().next().is_some() {
                v.unknown_fields(#name, path, m.special_fields.unknown_fields());
            }
        }
    }
}

/// The public `visit_*` function of a message walked in full: its unknown
/// fields, its references (positions in `SCHEMA.references`), then the
/// messages it holds.
fn visit_fn(
    parsed: &ParsedCrate,
    name: &str,
    references: impl Iterator<Item = usize>,
    deep: &BTreeSet<String>,
) -> TokenStream {
    let info = &parsed.messages[name];
    let (ty, function) = (type_path(info), fn_name("visit", name));
    let references: Vec<TokenStream> = references.map(|i| reference_visit(parsed, i)).collect();
    let nested = message_fields(info, parsed).map(|(field, target)| {
        let callee = if deep.contains(target) {
            fn_name("visit", target)
        } else {
            fn_name("unknown", target)
        };
        let (ident, label) = (field_ident(&field.name), &field.name);
        if field.repeated {
            quote! {
                if v.walk_elements(#name, #label, path) {
                    for (i, x) in m.#ident.iter().enumerate() {
                        path.push(#label, Some(i));
                        #callee(x, path, v);
                        path.pop();
                    }
                }
            }
        } else {
            quote! {
                if let Some(x) = m.#ident.as_ref() {
                    path.push(#label, None);
                    #callee(x, path, v);
                    path.pop();
                }
            }
        }
    });
    let doc = format!(
        " Visits one `{name}` at `path` and what it holds, as the `walk_*` walkers do. Public \
         for visitors that hold elements the walked message does not (see \
         `ReferenceVisitor::walk_elements`)."
    );
    quote! {
        #[doc = #doc]
        pub fn #function<V: ReferenceVisitor>(m: &#ty, path: &mut RefPath, v: &mut V) {
            if m.special_fields.unknown_fields().iter().next().is_some() {
                v.unknown_fields(#name, path, m.special_fields.unknown_fields());
            }
            #(#references)*
            #(#nested)*
        }
    }
}

/// The visitor call for reference `i` of `SCHEMA.references`.
fn reference_visit(parsed: &ParsedCrate, i: usize) -> TokenStream {
    let r = &parsed.references[i];
    let index = Literal::usize_unsuffixed(i);
    let field = field_ident(&r.field);
    if let Some(length) = &r.slice_length {
        let length = field_ident(length);
        quote! { v.slice(#index, &SCHEMA.references[#index], path, m.#field as u64, m.#length as u64); }
    } else if r.repeated {
        quote! {
            for (i, x) in m.#field.iter().enumerate() {
                v.reference(#index, &SCHEMA.references[#index], path, Some(i), *x as i128);
            }
        }
    } else {
        quote! { v.reference(#index, &SCHEMA.references[#index], path, None, m.#field as i128); }
    }
}
