//! `#[monoscan::operator]` and `#[monoscan::device]`: one Rust definition of an operator, its
//! CUDA form written from it.

mod lower;

#[cfg(test)]
mod tests;

use lower::{ty_tokens, Lower};
use proc_macro2::TokenStream;
use quote::{format_ident, quote, ToTokens};
use std::collections::HashSet;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{FnArg, ImplItem, ImplItemFn, ItemFn, ItemImpl, Pat, ReturnType, Signature};

fn refuse<T>(at: impl ToTokens, message: impl std::fmt::Display) -> syn::Result<T> {
    Err(syn::Error::new_spanned(
        at,
        format!("#[monoscan::operator]: {message}"),
    ))
}

/// `name = "..."`, the operator's name in kernel names (default: the type's name).
fn parse_args(args: TokenStream) -> syn::Result<Option<String>> {
    let mut name = None;
    if args.is_empty() {
        return Ok(None);
    }
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("name") {
            let v: syn::LitStr = meta.value()?.parse()?;
            name = Some(v.value());
            Ok(())
        } else {
            Err(meta.error("#[monoscan::operator]: the only argument is `name = \"...\"`"))
        }
    });
    syn::parse::Parser::parse2(parser, args)?;
    Ok(name)
}

/// A function's parameters (without `self`) with their IR types, and its return type.
fn signature(sig: &Signature) -> syn::Result<(Vec<String>, Vec<TokenStream>, TokenStream)> {
    if !sig.generics.params.is_empty() {
        return refuse(
            &sig.generics,
            "a translated function cannot have generic parameters of its own; put them on the \
             impl (`impl<T: Float> Op<T>`), which translates per instance",
        );
    }
    if sig.asyncness.is_some() || sig.variadic.is_some() {
        return refuse(sig, "async and variadic functions have no translation");
    }
    let mut names = Vec::new();
    let mut types = Vec::new();
    for arg in &sig.inputs {
        match arg {
            FnArg::Receiver(r) => match &r.kind {
                syn::ReceiverKind::Reference(_, _, None) => {}
                syn::ReceiverKind::Reference(_, _, Some(_)) => {
                    return refuse(r, "`&mut self` has no translation")
                }
                _ => return refuse(r, "translated functions take `&self`"),
            },
            FnArg::Typed(t) => {
                let Pat::Ident(id) = &*t.pat else {
                    return refuse(&t.pat, "parameters must be plain names");
                };
                names.push(id.ident.unraw().to_string());
                types.push(ty_tokens(&t.ty)?);
            }
        }
    }
    let ret = match &sig.output {
        ReturnType::Type(_, t) => ty_tokens(t)?,
        ReturnType::Default => return refuse(sig, "a translated function returns a value"),
    };
    Ok((names, types, ret))
}

/// The IR of `f`, with `helpers` callable from it.
fn function(f: &ImplItemFn, helpers: &HashSet<String>) -> syn::Result<TokenStream> {
    function_parts(&f.sig, &f.block, helpers)
}

fn function_parts(
    sig: &Signature,
    block: &syn::Block,
    helpers: &HashSet<String>,
) -> syn::Result<TokenStream> {
    let (names, types, ret) = signature(sig)?;
    let body = Lower::new(&names, helpers).block(block)?;
    let name = sig.ident.unraw().to_string();
    Ok(quote! {
        ::monoscan::translate::ir::Function::new(
            #name,
            ::std::vec![#((#names, #types)),*],
            #ret,
            #body,
        )
    })
}

/// The names `f` calls as `Self::name(..)` or `self.name(..)`.
fn own_calls(f: &ImplItemFn, candidates: &HashSet<String>) -> HashSet<String> {
    let mut out = HashSet::new();
    fn walk(t: TokenStream, candidates: &HashSet<String>, out: &mut HashSet<String>) {
        let tokens: Vec<proc_macro2::TokenTree> = t.into_iter().collect();
        for (k, tt) in tokens.iter().enumerate() {
            match tt {
                proc_macro2::TokenTree::Group(g) => walk(g.stream(), candidates, out),
                proc_macro2::TokenTree::Ident(i) => {
                    let name = i.unraw().to_string();
                    let called = matches!(tokens.get(k + 1), Some(proc_macro2::TokenTree::Group(g))
                        if g.delimiter() == proc_macro2::Delimiter::Parenthesis);
                    if called && candidates.contains(&name) {
                        out.insert(name);
                    }
                }
                _ => {}
            }
        }
    }
    walk(f.block.to_token_stream(), candidates, &mut out);
    out
}

/// `#[monoscan::operator]` on an `impl Monoid for X` or on an inherent `impl X` block.
pub fn operator(args: TokenStream, item: TokenStream) -> TokenStream {
    match parse_args(args).and_then(|name| expand(name, syn::parse2::<ItemImpl>(item)?)) {
        Ok(tokens) => tokens,
        Err(e) => e.to_compile_error(),
    }
}

fn expand(name: Option<String>, mut block: ItemImpl) -> syn::Result<TokenStream> {
    let fns: Vec<&ImplItemFn> = block
        .items
        .iter()
        .filter_map(|i| match i {
            ImplItem::Fn(f) => Some(f),
            _ => None,
        })
        .collect();
    let find = |n: &str| fns.iter().copied().find(|f| f.sig.ident == n);
    let Some(identity) = find("identity") else {
        return refuse(
            &block.self_ty,
            "the block needs `fn identity(&self) -> Elem`",
        );
    };
    let Some(combine) = find("combine") else {
        return refuse(
            &block.self_ty,
            "the block needs `fn combine(&self, a: &Elem, b: &Elem) -> Elem`",
        );
    };
    if let Some(cuda) = find("cuda") {
        return refuse(
            &cuda.sig.ident,
            "`cuda` is what #[monoscan::operator] writes; remove it (or the attribute, to keep \
             a hand-written CUDA form)",
        );
    }
    let trait_form = match &block.trait_ {
        None => false,
        Some((path, _)) if path.segments.last().is_some_and(|s| s.ident == "Monoid") => true,
        Some((path, _)) => return refuse(path, "expected `impl Monoid for X` or `impl X`"),
    };
    // The operator's own functions: what `combine` reaches through `Self::f` / `self.f`.
    let candidates: HashSet<String> = if trait_form {
        HashSet::new()
    } else {
        fns.iter()
            .map(|f| f.sig.ident.unraw().to_string())
            .filter(|n| n != "identity" && n != "combine")
            .collect()
    };
    let mut reached: HashSet<String> = own_calls(combine, &candidates);
    loop {
        let more: HashSet<String> = reached
            .iter()
            .filter_map(|n| find(n))
            .flat_map(|f| own_calls(f, &candidates))
            .filter(|n| !reached.contains(n))
            .collect();
        if more.is_empty() {
            break;
        }
        reached.extend(more);
    }
    let combine_ir = function(combine, &reached)?;
    let mut helper_irs = Vec::new();
    let mut sorted: Vec<&String> = reached.iter().collect();
    sorted.sort();
    for n in sorted {
        helper_irs.push(function(
            find(n).expect("reached names are functions"),
            &reached,
        )?);
    }
    let self_ty = &block.self_ty;
    let name = name.unwrap_or_else(|| {
        let text = self_ty.to_token_stream().to_string();
        text.split('<')
            .next()
            .unwrap_or("op")
            .trim()
            .rsplit("::")
            .next()
            .unwrap_or("op")
            .trim()
            .to_string()
    });
    let cuda = quote! {
        fn cuda(&self) -> ::monoscan::CudaOp {
            ::monoscan::translate::operator::<<Self as ::monoscan::Monoid>::Elem>(
                #name,
                &<Self as ::monoscan::Monoid>::identity(self),
                #combine_ir,
                ::std::vec![#(#helper_irs),*],
            )
        }
    };
    if trait_form {
        block.items.push(syn::parse2(cuda)?);
        return Ok(block.into_token_stream());
    }
    let elem = match &identity.sig.output {
        ReturnType::Type(_, t) => t.clone(),
        ReturnType::Default => return refuse(&identity.sig, "`identity` returns the element"),
    };
    let (impl_generics, _, where_clause) = block.generics.split_for_impl();
    let span = self_ty.span();
    let id = format_ident!("identity", span = span);
    let co = format_ident!("combine", span = span);
    Ok(quote! {
        #block

        impl #impl_generics ::monoscan::Monoid for #self_ty #where_clause {
            type Elem = #elem;
            fn #id(&self) -> Self::Elem {
                <#self_ty>::identity(self)
            }
            fn #co(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem {
                <#self_ty>::combine(self, a, b)
            }
            #cuda
        }
    })
}

/// `#[monoscan::device]` on a free function: the function, and beside it
/// `__monoscan_device_<name>()`, its IR, which translated operators that call it use.
pub fn device(args: TokenStream, item: TokenStream) -> TokenStream {
    let run = || -> syn::Result<TokenStream> {
        if !args.is_empty() {
            return refuse(args, "#[monoscan::device] takes no arguments");
        }
        let f: ItemFn = syn::parse2(item)?;
        let ir = function_parts(&f.sig, &f.block, &HashSet::new())?;
        let builder = format_ident!("__monoscan_device_{}", f.sig.ident.unraw());
        let vis = &f.vis;
        let doc = format!("The IR of `{}`, for `#[monoscan::operator]`.", f.sig.ident);
        Ok(quote! {
            #f

            #[doc = #doc]
            #[doc(hidden)]
            #vis fn #builder() -> ::monoscan::translate::ir::Function {
                #ir
            }
        })
    };
    run().unwrap_or_else(|e| e.to_compile_error())
}
