//! `fields.rs`: every field number as a constant, and `strings.rs`: the
//! string-table lookups of the messages that hold one.
//!
//! Code that reads or writes the wire by hand (the codec's fast paths, the
//! bridge's direct encoder, `Fields` sets of samples) names fields by these
//! constants, so a number is written once, in the .proto file.

use std::collections::BTreeMap;

use anyhow::{bail, Result};
use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::rust_names::{ident, snake, type_path};
use super::schema::{MessageInfo, ParsedCrate};

/// The field-number constants, in modules that mirror the protobuf packages:
/// `perftools::profiles::sample::LOCATION_ID`.
pub fn fields_rs(parsed: &ParsedCrate) -> Result<Option<TokenStream>> {
    let mut root = PackageModules::default();
    for (full_name, info) in &parsed.messages {
        let node = root.package(&info.package);
        let module = info
            .nesting
            .iter()
            .map(|n| snake(n))
            .collect::<Vec<_>>()
            .join("_");
        let entry = (full_name.clone(), message_module(full_name, info));
        if node.messages.insert(module.clone(), entry).is_some() {
            bail!(
                "two messages of package {} give the module name `{module}`",
                info.package
            );
        }
    }
    if parsed.messages.is_empty() {
        return Ok(None);
    }
    let tree = root.tokens("");
    Ok(Some(quote! {
        //! The number of every field, by package and message
        //! (`<package>::<message>::<FIELD>`; a nested message's module joins
        //! the names of its enclosing messages with `_`).

        #tree
    }))
}

fn message_module(full_name: &str, info: &MessageInfo) -> TokenStream {
    let constants = info.fields.iter().map(|f| {
        let name = Ident::new(&f.name.to_uppercase(), Span::call_site());
        let number = proc_macro2::Literal::u32_unsuffixed(f.number);
        let doc = format!(" `{full_name}.{}`.", f.name);
        quote! { #[doc = #doc] pub const #name: u32 = #number; }
    });
    quote! { #(#constants)* }
}

/// Packages as nested modules, each with its messages' modules.
#[derive(Default)]
struct PackageModules {
    children: BTreeMap<String, PackageModules>,
    /// Module name -> (the message's full name, its constants).
    messages: BTreeMap<String, (String, TokenStream)>,
}

impl PackageModules {
    fn package(&mut self, package: &str) -> &mut PackageModules {
        let mut node = self;
        for segment in package.split('.').filter(|s| !s.is_empty()) {
            node = node.children.entry(segment.to_string()).or_default();
        }
        node
    }

    fn tokens(&self, package: &str) -> TokenStream {
        let messages = self.messages.iter().map(|(name, (full_name, constants))| {
            let doc = format!(" Field numbers of `{full_name}`.");
            let name = ident(name);
            quote! { #[doc = #doc] pub mod #name { #constants } }
        });
        let children = self.children.iter().map(|(name, child)| {
            let full = match package {
                "" => name.clone(),
                _ => format!("{package}.{name}"),
            };
            let doc = format!(" Package `{full}`.");
            let inner = child.tokens(&full);
            let name = ident(name);
            quote! { #[doc = #doc] pub mod #name { #inner } }
        });
        quote! { #(#messages)* #(#children)* }
    }
}

/// `StringTable` for every message with a repeated string field
/// `string_table` that references point into.
pub fn strings_rs(parsed: &ParsedCrate) -> Option<TokenStream> {
    let impls: Vec<TokenStream> = parsed
        .messages
        .iter()
        .filter(|(full_name, _)| {
            parsed
                .references
                .iter()
                .any(|r| &r.table.message == *full_name && r.table.field == "string_table")
        })
        .filter_map(|(full_name, info)| {
            info.fields
                .iter()
                .find(|f| f.name == "string_table" && f.repeated && f.string)?;
            let ty = type_path(info);
            let doc = format!(" Strings of a `{full_name}` by index.");
            Some(quote! {
                #[doc = #doc]
                impl StringTable for #ty {
                    #[inline]
                    fn strings(&self) -> &[String] {
                        &self.string_table
                    }
                }
            })
        })
        .collect();
    if impls.is_empty() {
        return None;
    }
    Some(quote! {
        //! String-table lookups (`string(i)`, `string_at(i)`) on the messages
        //! that hold a string table, through `protoprof_model_meta::StringTable`.

        use protoprof_model_meta::StringTable;

        #(#impls)*
    })
}
