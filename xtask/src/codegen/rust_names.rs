//! Rust names for protobuf names: identifiers, module names, type paths.
//! A leaf module: every emitter uses it, it uses none of them.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::schema::MessageInfo;

/// `name` as an identifier, raw (`r#type`) where it is a keyword.
pub fn ident(name: &str) -> Ident {
    if syn::parse_str::<Ident>(name).is_ok() {
        Ident::new(name, Span::call_site())
    } else {
        Ident::new_raw(name, Span::call_site())
    }
}

/// `CamelCase` -> `camel_case`.
pub fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `crate::pb::<module>::<outer>::<Name>` for a message.
pub fn type_path(info: &MessageInfo) -> TokenStream {
    let module = Ident::new(&info.module, Span::call_site());
    let (name, outer) = info.nesting.split_last().expect("a message has a name");
    let outer = outer
        .iter()
        .map(|o| Ident::new(&snake(o), Span::call_site()));
    let name = Ident::new(name, Span::call_site());
    quote! { crate::pb::#module #(::#outer)* ::#name }
}
