//! `samples.rs`: decoded profiles as `protoprof_model_meta::SampleSource`.
//!
//! Validation, conversion and analysis read samples through that trait, so
//! the codec's view (samples left in the input bytes) and the decoded model
//! go through the same code. A message qualifies when it holds tables (it is
//! the target of references) and has a repeated message field `sample` whose
//! message has a repeated `value`: pprof's `Profile` and OTLP's
//! pprof-extended `Profile`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

use super::schema::{MessageInfo, ParsedCrate};

fn type_path(info: &MessageInfo) -> TokenStream {
    super::walkers::type_path(info)
}

pub fn samples_rs(parsed: &ParsedCrate) -> Option<TokenStream> {
    let roots: std::collections::BTreeSet<&str> = parsed
        .references
        .iter()
        .map(|r| r.table.message.as_str())
        .collect();
    let impls: Vec<TokenStream> = roots
        .iter()
        .filter_map(|root| {
            let info = parsed.messages.get(*root)?;
            let sample_field = info
                .fields
                .iter()
                .find(|f| f.name == "sample" && f.repeated && !f.map)?;
            let sample = parsed.messages.get(sample_field.message_type.as_deref()?)?;
            sample
                .fields
                .iter()
                .find(|f| f.name == "value" && f.repeated && f.message_type.is_none())?;
            let (profile_ty, sample_ty) = (type_path(info), type_path(sample));
            let field = Ident::new("sample", Span::call_site());
            let doc = format!(" A decoded `{root}` holds all its samples.");
            Some(quote! {
                #[doc = #doc]
                impl SampleSource for #profile_ty {
                    type Profile = #profile_ty;
                    type Sample = #sample_ty;

                    fn profile(&self) -> &Self {
                        self
                    }

                    fn sample_count(&self) -> usize {
                        self.#field.len()
                    }

                    fn sample_fields<'s>(
                        &'s self,
                        i: usize,
                        _fields: Fields,
                        _buffer: &'s mut #sample_ty,
                    ) -> &'s #sample_ty {
                        &self.#field[i]
                    }

                    fn value_count(&self, i: usize) -> usize {
                        self.#field[i].value.len()
                    }
                }
            })
        })
        .collect();
    if impls.is_empty() {
        return None;
    }
    Some(quote! {
        //! Decoded profiles as `SampleSource`s: the model holds every sample,
        //! decoded, so reading one needs no buffer.

        use protoprof_model_meta::{Fields, SampleSource};

        #(#impls)*
    })
}
