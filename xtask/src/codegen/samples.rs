//! `samples.rs`: decoded profiles as `protoprof_model_meta::SampleSource`.
//!
//! Validation, conversion and analysis read samples through that trait, so
//! the codec's view (samples left in the input bytes) and the decoded model
//! go through the same code. A message qualifies when it holds tables (it is
//! the target of references) and has a repeated message field `sample` whose
//! message has a repeated `value`: pprof's `Profile` and OTLP's
//! pprof-extended `Profile`.

use proc_macro2::{Ident, Span, TokenStream};
use quote::{format_ident, quote};

use super::schema::{MessageInfo, ParsedCrate};

fn type_path(info: &MessageInfo) -> TokenStream {
    super::rust_names::type_path(info)
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
            let alias_doc = format!(
                " Anything that gives a `{root}` and its samples one at a time: the decoded \
                 message, or a view that keeps the samples encoded (the codec's `PprofView`)."
            );
            let alias = format_ident!("{}Samples", info.nesting.join(""));
            Some(quote! {
                #[doc = #alias_doc]
                pub trait #alias: SampleSource<Profile = #profile_ty, Sample = #sample_ty> {}

                impl<S: SampleSource<Profile = #profile_ty, Sample = #sample_ty>> #alias for S {}

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
        //! Profiles as `SampleSource`s. The decoded model holds every sample,
        //! so reading one needs no buffer; the `*Samples` trait names any source
        //! of the profile's samples, for functions that take either.

        use protoprof_model_meta::{Fields, SampleSource};

        #(#impls)*
    })
}
