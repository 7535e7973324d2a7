//! Writes the scenario's types from schema.toml, the one declaration of every key.
//!
//! Each section becomes a struct (`network` one per network kind, the kind its serde tag), each
//! key a field with its help as the doc comment, each `enum` an enum whose variants are its
//! choices in CamelCase, named on the wire as the schema names them. The engine includes the
//! result in src/scenario.rs. Defaults, ranges and the kinds a key applies to stay data: the
//! engine reads them from the same file at run time (src/schema.rs).

use std::fmt::Write as _;
use toml::{Table, Value};

/// The struct of each section (and of each network kind), in the engine's names.
const SECTIONS: [(&str, &str); 12] = [
    ("upstream", "Upstream"),
    ("modems", "ModemGroup"),
    ("tcp", "Tcp"),
    ("receiver", "Receiver"),
    ("flows", "Flow"),
    ("pings", "Ping"),
    ("web", "Web"),
    ("video", "Video"),
    ("games", "Game"),
    ("calls", "Call"),
    ("rpm", "Rpm"),
    ("sim", "Sim"),
];

fn main() {
    println!("cargo:rerun-if-changed=schema.toml");
    let text = std::fs::read_to_string("schema.toml").expect("schema.toml");
    let schema: Table = text.parse().expect("schema.toml is TOML");
    let mut out = String::from("// Written by build.rs from schema.toml: edit that file, not this one.\n\n");
    enums(&schema, &mut out);
    let network = schema["network"].as_table().unwrap();
    let kinds: Vec<&str> = network["kind"]["choices"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    for kind in &kinds {
        let keys = network.iter().filter(|(name, key)| *name != "kind" && applies(key, kind));
        section_struct(
            &camel(kind),
            &format!("The `network` section with `network.kind = \"{kind}\"`."),
            keys,
            &mut out,
        );
    }
    out.push_str("/// The network model and its keys, tagged by `network.kind`.\n");
    out.push_str("#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]\n");
    out.push_str("#[serde(tag = \"kind\", deny_unknown_fields)]\npub enum Network {\n");
    for kind in &kinds {
        writeln!(out, "    #[serde(rename = \"{kind}\")]\n    {0}({0}),", camel(kind)).unwrap();
    }
    out.push_str("}\n\n");
    for (section, name) in SECTIONS {
        let keys = schema[section].as_table().unwrap().iter();
        section_struct(name, &format!("The `{section}` section."), keys, &mut out);
    }
    let path = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("schema_types.rs");
    std::fs::write(path, out).unwrap();
}

/// Whether a key applies to a network kind (no `networks` = every kind).
fn applies(key: &Value, kind: &str) -> bool {
    key.get("networks").and_then(Value::as_array).is_none_or(|ks| ks.iter().any(|k| k.as_str() == Some(kind)))
}

/// "ieee802.14" -> Ieee80214, "docsis_pie" -> DocsisPie, "net3-rfc5681" -> Net3Rfc5681.
fn camel(name: &str) -> String {
    name.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|part| !part.is_empty())
        .map(|part| part[..1].to_ascii_uppercase() + &part[1..])
        .collect()
}

/// Each `[enums.NAME]`: its choices are the union of those of the keys naming it, in order.
fn enums(schema: &Table, out: &mut String) {
    for (name, decl) in schema["enums"].as_table().unwrap() {
        let mut choices: Vec<&str> = Vec::new();
        for section in schema.values().filter_map(Value::as_table) {
            for key in section.values().filter(|k| k.get("enum").and_then(Value::as_str) == Some(name)) {
                for c in key["choices"].as_array().unwrap() {
                    let c = c.as_str().unwrap();
                    if !choices.contains(&c) {
                        choices.push(c);
                    }
                }
            }
        }
        assert!(!choices.is_empty(), "enum {name}: no key names it");
        writeln!(out, "#[doc = {:?}]", decl["doc"].as_str().unwrap()).unwrap();
        out.push_str("#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]\n");
        writeln!(out, "pub enum {name} {{").unwrap();
        for c in &choices {
            writeln!(out, "    #[serde(rename = {c:?})]\n    {},", camel(c)).unwrap();
        }
        writeln!(out, "}}\n\nimpl {name} {{\n    /// The schema's name of this choice.\n    pub fn as_str(self) -> &'static str {{\n        match self {{").unwrap();
        for c in &choices {
            writeln!(out, "            {name}::{} => {c:?},", camel(c)).unwrap();
        }
        out.push_str("        }\n    }\n}\n\n");
    }
}

fn section_struct<'a>(name: &str, doc: &str, keys: impl Iterator<Item = (&'a String, &'a Value)>, out: &mut String) {
    writeln!(out, "#[doc = {doc:?}]").unwrap();
    out.push_str("#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]\n");
    writeln!(out, "#[serde(deny_unknown_fields)]\npub struct {name} {{").unwrap();
    for (field, key) in keys {
        if key.get("engine").and_then(Value::as_bool) == Some(false) {
            continue; // Python's: expanded before the engine sees the document
        }
        let ty = rust_type(field, key);
        let optional = key.get("optional").and_then(Value::as_bool) == Some(true);
        let ty = if optional { format!("Option<{ty}>") } else { ty };
        writeln!(out, "    #[doc = {:?}]\n    pub {field}: {ty},", key["help"].as_str().unwrap()).unwrap();
    }
    out.push_str("}\n\n");
}

/// float: f64; int: u32 when its upper bound fits 32 bits, else u64 (or the key's `rust`); bool;
/// str: its enum; list: Vec<u32>; schedule: Vec<(f64, f64)>.
fn rust_type(field: &str, key: &Value) -> String {
    let number = |k: &str| key.get(k).and_then(|v| v.as_float().or(v.as_integer().map(|i| i as f64)));
    match key["type"].as_str().unwrap() {
        "float" => "f64".into(),
        "int" => match key.get("rust").and_then(Value::as_str) {
            Some(ty) => ty.into(),
            None if number("le").is_some_and(|le| le <= u32::MAX as f64) => "u32".into(),
            None => "u64".into(),
        },
        "bool" => "bool".into(),
        "str" => {
            key.get("enum").and_then(Value::as_str).unwrap_or_else(|| panic!("{field}: a str key needs an enum")).into()
        }
        "list" => "Vec<u32>".into(),
        "schedule" => "Vec<(f64, f64)>".into(),
        other => panic!("{field}: unknown type {other}"),
    }
}
