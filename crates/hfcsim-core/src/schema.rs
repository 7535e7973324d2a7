//! The scenario schema at run time: schema.toml, the one declaration of every key, read once.
//!
//! `resolve` turns a JSON document into the one the engine's types take: every key of its network
//! kind present (absent = the key's default), each checked against its declaration (type, range,
//! choices, the network kinds it applies to) and against the cross-key rules the declaration holds as
//! data (`requires`, `lt_key` / `le_key` / `ge_key`, `excludes`). Python checks the same declarations
//! first with its own messages; this check is for every caller, and Python calls it too
//! (`_core.check`). Errors are one line naming the key.

use serde_json::{Map, Value};
use std::sync::OnceLock;

/// The sections of a scenario document, in order; `LISTS` are lists of tables.
pub const SECTIONS: [&str; 13] = [
    "network", "upstream", "modems", "tcp", "receiver", "flows", "pings", "games", "calls", "web", "video", "rpm",
    "sim",
];
const LISTS: [&str; 8] = ["modems", "flows", "pings", "games", "calls", "web", "video", "rpm"];

/// One key as schema.toml declares it (the fields the engine needs; `help` and the document rules
/// are Python's).
#[derive(Debug)]
pub struct Key {
    pub section: String,
    pub name: String,
    ty: String,
    default: Value,
    network_defaults: Map<String, Value>,
    bounds: [Option<f64>; 4], // ge, gt, le, lt
    choices: Vec<Value>,
    optional: bool,
    networks: Vec<String>,
    engine: bool,
    requires: Vec<(String, Vec<Value>)>,
    relations: Vec<(&'static str, String)>, // ("<", "sim.time_limit_s"), ...
    excludes: Option<String>,
    /// Why the cross-key rules hold, appended to their refusals (": ..." or "").
    note: String,
}

pub struct Schema {
    pub keys: Vec<Key>,
    /// `[presets.NAME]`: section tables laid under a scenario's own (each whole: its base's under it).
    pub presets: Map<String, Value>,
    /// The presets and each one's `description`, `base` and `sources` (key -> where its value comes
    /// from), as JSON in the file's order (Python's `hfcsim.schema` reads them).
    presets_text: String,
    /// `[stacks.NAME]`: the TCP stack profiles (Python resolves them; `with_stack` below).
    pub stacks: Map<String, Value>,
}

/// Where a resolved key's value comes from (`Schema::origin`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// The TCP stack's profile gives it.
    Stack,
    /// The schema's default, where the stack gives none.
    Default,
    /// The scenario (or its preset) set it.
    Own,
}

/// The schema, parsed on first use.
pub fn schema() -> &'static Schema {
    static SCHEMA: OnceLock<Schema> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        // toml keeps the file's order (preserve_order); serde_json's maps would sort the keys.
        let doc: toml::Table = crate::SCHEMA_TOML.parse().expect("schema.toml parses");
        let json = |v: &toml::Value| serde_json::to_value(v).unwrap();
        let mut keys = Vec::new();
        for section in SECTIONS {
            for (name, declared) in doc[section].as_table().expect("a section table") {
                let k = json(declared);
                let num = |b: &str| k.get(b).and_then(Value::as_f64);
                let list = |f: &str| k.get(f).and_then(Value::as_array).cloned().unwrap_or_default();
                let strings = |f: &str| list(f).iter().map(|v| v.as_str().unwrap().to_string()).collect();
                keys.push(Key {
                    section: section.into(),
                    name: name.clone(),
                    ty: k["type"].as_str().unwrap().into(),
                    default: k.get("default").cloned().unwrap_or(Value::Null),
                    network_defaults: k.get("network_defaults").and_then(Value::as_object).cloned().unwrap_or_default(),
                    bounds: [num("ge"), num("gt"), num("le"), num("lt")],
                    choices: list("choices"),
                    optional: k.get("optional").and_then(Value::as_bool).unwrap_or(false),
                    networks: strings("networks"),
                    engine: k.get("engine").and_then(Value::as_bool).unwrap_or(true),
                    // In the file's order (serde_json's map would sort them): the first unmet is named.
                    requires: declared.get("requires").and_then(toml::Value::as_table).map_or_else(Vec::new, |r| {
                        r.iter()
                            .map(|(other, allowed)| (other.clone(), json(allowed).as_array().unwrap().clone()))
                            .collect()
                    }),
                    note: k.get("note").and_then(Value::as_str).map(|n| format!(": {n}")).unwrap_or_default(),
                    relations: [("<", "lt_key"), ("<=", "le_key"), (">=", "ge_key")]
                        .into_iter()
                        .filter_map(|(op, f)| k.get(f).map(|o| (op, o.as_str().unwrap().to_string())))
                        .collect(),
                    excludes: k.get("excludes").and_then(Value::as_str).map(str::to_string),
                });
            }
        }
        let (presets, notes) = with_bases(doc["presets"].as_table().expect("a presets table"));
        let presets = toml::Value::Table(presets);
        let both = toml::Table::from_iter([("presets".to_string(), presets.clone()), ("notes".into(), notes.into())]);
        let presets_text = serde_json::to_string(&both).unwrap();
        let presets = json(&presets).as_object().cloned().unwrap();
        let stacks = json(&doc["stacks"]).as_object().cloned().unwrap_or_default();
        Schema { keys, presets, presets_text, stacks }
    })
}

impl Key {
    pub fn key(&self) -> String {
        let star = if LISTS.contains(&self.section.as_str()) { ".*" } else { "" };
        format!("{}{star}.{}", self.section, self.name)
    }

    /// Whether `key` is this key's dotted name (`key()`), without building it: the rules look keys up
    /// by name on every scenario check.
    pub fn is(&self, key: &str) -> bool {
        let Some(rest) = key.strip_prefix(self.section.as_str()) else { return false };
        let rest = if LISTS.contains(&self.section.as_str()) {
            match rest.strip_prefix(".*") {
                Some(r) => r,
                None => return false,
            }
        } else {
            rest
        };
        rest.strip_prefix('.') == Some(self.name.as_str())
    }

    fn applies_to(&self, kind: &str) -> bool {
        self.networks.is_empty() || self.networks.iter().any(|k| k == kind)
    }

    pub fn default_for(&self, kind: &str) -> &Value {
        self.network_defaults.get(kind).unwrap_or(&self.default)
    }

    /// `Err(what is allowed)` if `v` is not a value of this key.
    fn check(&self, v: &Value) -> Result<(), String> {
        if v.is_null() && self.optional {
            return Ok(());
        }
        let in_range = |x: f64| {
            let [ge, gt, le, lt] = self.bounds;
            ge.is_none_or(|b| x >= b)
                && gt.is_none_or(|b| x > b)
                && le.is_none_or(|b| x <= b)
                && lt.is_none_or(|b| x < b)
        };
        let ok = match self.ty.as_str() {
            "float" => v.as_f64().is_some_and(in_range),
            "int" => v.as_u64().is_some_and(|x| in_range(x as f64)),
            "bool" => v.is_boolean(),
            "str" => self.choices.contains(v),
            "list" => v.as_array().is_some_and(|xs| xs.iter().all(|x| x.as_u64().is_some_and(|x| in_range(x as f64)))),
            "schedule" => v.as_array().is_some_and(|xs| {
                let mut last = 0.0;
                xs.iter().all(|pair| {
                    match pair.as_array().map(|p| (p.len(), p[0].as_f64(), p.get(1).and_then(Value::as_f64))) {
                        Some((2, Some(t), Some(bps))) if t > last && t <= 1e9 && bps >= 1.0 => {
                            last = t;
                            true
                        }
                        _ => false,
                    }
                })
            }),
            other => unreachable!("schema type {other}"),
        };
        ok.then_some(()).ok_or_else(|| self.allowed())
    }

    fn allowed(&self) -> String {
        let noun = match self.ty.as_str() {
            "float" => "a number",
            "int" => "an integer",
            "bool" => "true or false",
            "list" => "a list of integers, each",
            "schedule" => return "a list of [time_s, bps]: time_s increasing in (0, 1e9], bps >= 1".into(),
            _ => return format!("must be one of {}", or_list(&self.choices, ", ")),
        };
        let [ge, gt, le, lt] = self.bounds;
        let low = ge.map(|b| format!("[{}", num(b))).or(gt.map(|b| format!("({}", num(b))));
        let high = le.map(|b| format!("{}]", num(b))).or(lt.map(|b| format!("{})", num(b))));
        let range = match (low, high) {
            (Some(l), Some(h)) => format!(" in {l}, {h}"),
            (Some(l), None) => format!(" {} {}", if l.starts_with('[') { ">=" } else { ">" }, &l[1..]),
            (None, Some(h)) => format!(" {} {}", if h.ends_with(']') { "<=" } else { "<" }, &h[..h.len() - 1]),
            (None, None) => String::new(),
        };
        format!("must be {noun}{range}{}", if self.optional { " (or absent)" } else { "" })
    }
}

/// A bound as a person writes it: 0, 65535, 0.01, 1e9, 1e-9.
fn num(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `"a", "b"` (values as JSON) joined by `sep`.
fn or_list(values: &[Value], sep: &str) -> String {
    values.iter().map(Value::to_string).collect::<Vec<_>>().join(sep)
}

/// `key = value: what` (the value as JSON), the one-line form of every refusal.
pub fn refuse(key: &str, value: &Value, what: &str) -> String {
    format!("{key} = {}: {what}", json_text(value))
}

/// A value as Python's `json.dumps` writes it, so a refusal reads the same from either side. A
/// float is Python's `repr`: its shortest digits, in scientific notation below 1e-4 and from 1e16
/// on with a signed exponent of two digits at least (1e-05, 1e+16), else with a decimal point.
pub fn json_text(value: &Value) -> String {
    let Some(x) = value.as_f64().filter(|_| value.is_f64()) else { return value.to_string() };
    let scientific = format!("{x:e}"); // shortest digits: 1e-5, 3.0341646e7
    let (mantissa, exp) = scientific.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    if x != 0.0 && !(-4..16).contains(&exp) {
        format!("{mantissa}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
    } else if x.fract() == 0.0 {
        format!("{x:.1}")
    } else {
        format!("{x}")
    }
}

fn table<'a>(doc: &'a mut Map<String, Value>, section: &str) -> Result<&'a mut Map<String, Value>, String> {
    doc.entry(section)
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| format!("{section}: must be a table"))
}

impl Schema {
    /// `doc` with `preset`'s tables laid under its own (explicit keys win).
    /// The presets, each whole, and their notes, as JSON (Python's `hfcsim.schema` reads them so).
    pub fn presets_json(&self) -> &str {
        &self.presets_text
    }

    pub fn with_preset(&self, doc: Value, preset: &str) -> Value {
        lay_under(doc, &self.presets[preset])
    }

    /// `doc` with a stack's `tcp` and `receiver` values laid under its own, for Rust callers
    /// (benches, tests), as Python resolves a stack (python/hfcsim/stacks.py): key by key in the
    /// schema's order, each rule the stack gives (`stack_value`) where the document has none.
    pub fn with_stack(&self, mut doc: Value, stack: &str) -> Value {
        if !doc.is_object() {
            return doc;
        }
        doc["tcp"] = doc.get("tcp").cloned().unwrap_or_else(|| Value::Object(Map::new()));
        doc["tcp"]["stack"] = stack.into();
        for section in ["tcp", "receiver"] {
            if !doc.get(section).is_some_and(Value::is_object) {
                doc[section] = Value::Object(Map::new());
            }
            for k in self.keys.iter().filter(|k| k.section == section) {
                if doc[section].get(&k.name).is_some() {
                    continue;
                }
                if let Some(v) = self.stack_value(&doc, section, &k.name) {
                    doc[section][&k.name] = v;
                }
            }
        }
        doc
    }

    /// The value the document's TCP stack (`tcp.stack`, else the default) gives `section.name`, or
    /// None where it gives none (the schema's default stands). As python/hfcsim/stacks.py `rule`:
    /// its `when` table for `tcp.variant` wins; `{ seconds = S }` is S in ticks of `tcp.tick_s`,
    /// rounded up, within the key's range; `{ true_if = { KEY = V } }` is true when each KEY (of
    /// the section, or of tcp) is V, or one of V if V is a list, else None. A
    /// `tcp.congestion_control` condition holds when a flow runs one of them: each flow's own
    /// (`flows.*.congestion_control`), else the stack's (a rule of one control follows the flows that
    /// run it, issue 36). Keys the document lacks read as their defaults.
    pub fn stack_value(&self, doc: &Value, section: &str, name: &str) -> Option<Value> {
        let default_stack = self.key_named("tcp.stack").map(|k| k.default.clone()).unwrap_or(Value::Null);
        let stack = doc["tcp"].get("stack").unwrap_or(&default_stack).as_str()?;
        let table = self.stacks.get(stack)?;
        let variant = self.value_of(doc, "tcp", "variant");
        let when = variant.as_str().and_then(|v| table.get("when")?.get(v)?.get(section)?.get(name));
        let raw = when.or_else(|| table.get(section)?.get(name))?;
        // `{ unless_set = "KEY" }` (Linux's buffer autotuning): laid only where the document does not
        // set KEY of the same section, whose setsockopt locks the buffer.
        if let Some(key) = raw.get("unless_set").and_then(Value::as_str) {
            if doc.get(section).and_then(|t| t.get(key)).is_some_and(|v| !v.is_null()) {
                return None;
            }
            if raw.get("true_if").is_none() {
                return Some(Value::Bool(true));
            }
        }
        if let Some(cond) = raw.get("true_if").and_then(Value::as_object) {
            let holds = cond.iter().all(|(key, want)| {
                let matches = |have: &Value| want.as_array().map_or(want == have, |vs| vs.contains(have));
                if section == "tcp" && key == "congestion_control" {
                    return self.flow_controls(doc).iter().any(matches);
                }
                let have = if self.key_named(&format!("{section}.{key}")).is_some() {
                    self.value_of(doc, section, key)
                } else {
                    self.value_of(doc, "tcp", key)
                };
                matches(&have)
            });
            return holds.then_some(Value::Bool(true));
        }
        if let Some(seconds) = raw.get("seconds").and_then(Value::as_f64) {
            let key = self.key_named(&format!("{section}.{name}"))?;
            let tick = self.value_of(doc, "tcp", "tick_s").as_f64()?;
            let [ge, _, le, _] = key.bounds;
            let ticks = (seconds / tick - 1e-9).ceil().max(ge.unwrap_or(0.0)).min(le.unwrap_or(f64::MAX));
            return Some((ticks as u64).into());
        }
        Some(raw.clone())
    }

    /// Where the value of `key` ("tcp.sack", "flows.0.congestion_control") in a document comes
    /// from, as far as its values tell: the stack gives it, it is the schema's default where the
    /// stack gives none, or the scenario set it (a scenario that sets a stack's own value reads as
    /// the stack's). A refusal names a key the scenario set (issue 36, defect 4).
    pub fn origin(&self, doc: &Value, key: &str) -> Origin {
        let mut parts = key.split('.');
        let section = parts.next().unwrap_or_default();
        let (item, name) = match (parts.next(), parts.next()) {
            (Some(i), Some(n)) => (i.parse::<usize>().ok(), n),
            (Some(n), None) => (None, n),
            _ => return Origin::Own,
        };
        let value = match item {
            Some(i) => doc[section][i].get(name).cloned().unwrap_or(Value::Null),
            None => self.value_of(doc, section, name),
        };
        match self.stack_value(doc, section, name) {
            Some(v) if v == value => Origin::Stack,
            Some(_) => Origin::Own,
            None => {
                let kind = doc["network"]["kind"].as_str().unwrap_or("hfc");
                let star = if item.is_some() { format!("{section}.*.{name}") } else { key.to_string() };
                let default = self.key_named(&star).map_or(&Value::Null, |k| k.default_for(kind));
                if *default == value {
                    Origin::Default
                } else {
                    Origin::Own
                }
            }
        }
    }

    /// The document's value of `section.name` (a table section), else the key's default.
    fn value_of(&self, doc: &Value, section: &str, name: &str) -> Value {
        if let Some(v) = doc.get(section).and_then(|t| t.get(name)) {
            return v.clone();
        }
        let kind = doc["network"]["kind"].as_str().unwrap_or("hfc");
        self.key_named(&format!("{section}.{name}")).map_or(Value::Null, |k| k.default_for(kind).clone())
    }

    /// Each flow's congestion control: its own, else the document's `tcp.congestion_control`; one
    /// flow when the document has none (the default flow).
    fn flow_controls(&self, doc: &Value) -> Vec<Value> {
        let stack_wide = self.value_of(doc, "tcp", "congestion_control");
        match doc.get("flows").and_then(Value::as_array) {
            Some(flows) if !flows.is_empty() => flows
                .iter()
                .map(|f| f.get("congestion_control").filter(|v| !v.is_null()).unwrap_or(&stack_wide).clone())
                .collect(),
            _ => vec![stack_wide],
        }
    }

    pub(crate) fn key_named(&self, key: &str) -> Option<&Key> {
        self.keys.iter().find(|k| k.is(key))
    }

    /// Every key present and checked, or one line naming the first bad key.
    pub fn resolve(&self, mut doc: Value) -> Result<Value, String> {
        let root = doc.as_object_mut().ok_or("scenario: must be a JSON object")?;
        if let Some(k) = root.keys().find(|k| !SECTIONS.contains(&k.as_str())) {
            return Err(format!("unknown key {k}"));
        }
        let kind = table(root, "network")?.entry("kind").or_insert_with(|| "hfc".into()).clone();
        let kind_key = self.keys.iter().find(|k| k.is("network.kind")).unwrap();
        kind_key.check(&kind).map_err(|what| refuse("network.kind", &kind, &what))?;
        let kind = kind.as_str().unwrap().to_string();
        if !root.contains_key("flows") {
            root.insert("flows".into(), Value::Array(vec![Value::Object(Map::new())]));
        }
        for section in SECTIONS {
            let keys: Vec<&Key> = self.keys.iter().filter(|k| k.section == section && k.engine).collect();
            if !LISTS.contains(&section) {
                self.fill(table(root, section)?, section, &keys, &kind)?;
                continue;
            }
            let items = root.entry(section).or_insert_with(|| Value::Array(vec![]));
            let items = items.as_array_mut().ok_or_else(|| format!("{section}: must be a list of tables"))?;
            if !items.is_empty() && keys.iter().all(|k| !k.applies_to(&kind)) {
                return Err(format!(
                    "{section}: only valid with {} (network.kind is \"{kind}\")",
                    kinds(&keys[0].networks)
                ));
            }
            for (i, item) in items.iter_mut().enumerate() {
                let item = item.as_object_mut().ok_or_else(|| format!("{section}.{i}: must be a table"))?;
                self.fill(item, &format!("{section}.{i}"), &keys, &kind)?;
            }
        }
        let apps = ["web", "video", "rpm"].iter().any(|s| root[*s].as_array().is_some_and(|a| !a.is_empty()));
        if root["flows"].as_array().is_some_and(Vec::is_empty) && !apps {
            return Err("flows = []: at least one flow or application ([[web]], [[video]], [[rpm]]) is required".into());
        }
        self.cross_key(&doc, &kind)?;
        Ok(doc)
    }

    /// One table: unknown keys refused, each key checked, absent ones filled with their default.
    /// A key that does not apply to the network kind is refused when off its default (a network
    /// section has no field for it at all).
    fn fill(&self, t: &mut Map<String, Value>, prefix: &str, keys: &[&Key], kind: &str) -> Result<(), String> {
        if let Some(name) = t.keys().find(|n| !keys.iter().any(|k| &k.name == *n)) {
            return Err(format!("unknown key {prefix}.{name}"));
        }
        for k in keys {
            if prefix == "network" && k.name == "kind" {
                continue;
            }
            let applies = k.applies_to(kind);
            if !applies && prefix == "network" {
                if let Some(v) = t.get(&k.name) {
                    let what = format!("only valid with {} (network.kind is \"{kind}\")", kinds(&k.networks));
                    return Err(refuse(&format!("{prefix}.{}", k.name), v, &what));
                }
                continue;
            }
            let v = t.entry(k.name.clone()).or_insert_with(|| k.default_for(kind).clone());
            // The key's name is written only for a refusal (a million flows: issue 26, defect 3).
            let key = || format!("{prefix}.{}", k.name);
            k.check(v).map_err(|what| refuse(&key(), v, &what))?;
            if !applies && v != k.default_for(kind) {
                let what = format!("only valid with {} (network.kind is \"{kind}\")", kinds(&k.networks));
                return Err(refuse(&key(), v, &what));
            }
        }
        Ok(())
    }

    /// The cross-key rules declared as data, over a resolved document.
    fn cross_key(&self, doc: &Value, kind: &str) -> Result<(), String> {
        for k in self.keys.iter().filter(|k| k.engine && k.applies_to(kind)) {
            // Names are written only for a refusal (a million flows: issue 26, defect 3).
            let items: Vec<(Option<usize>, &Value)> = if LISTS.contains(&k.section.as_str()) {
                let list = doc[&k.section].as_array().unwrap();
                list.iter().enumerate().map(|(i, t)| (Some(i), t)).collect()
            } else {
                vec![(None, &doc[&k.section])]
            };
            for (index, t) in items {
                let prefix = || match index {
                    Some(i) => format!("{}.{i}", k.section),
                    None => k.section.clone(),
                };
                let v = &t[&k.name];
                let key = || format!("{}.{}", prefix(), k.name);
                // Another key's value and its full name; "modems.*.x" is the same item's x.
                let other = |name: &str| -> &Value {
                    let (section, rest) = name.split_once('.').unwrap();
                    match rest.strip_prefix("*.") {
                        Some(leaf) => &t[leaf],
                        None => &doc[section][rest],
                    }
                };
                let oname = |name: &str| -> String {
                    match name.split_once('.').unwrap().1.strip_prefix("*.") {
                        Some(leaf) => format!("{}.{leaf}", prefix()),
                        None => name.to_string(),
                    }
                };
                if v != k.default_for(kind) {
                    for (name, allowed) in &k.requires {
                        let ov = other(name);
                        if !allowed.contains(ov) {
                            let oname = oname(name);
                            let needs = format!("{oname} = {}", or_list(allowed, " or "));
                            // Issue 36, defect 4: where the stack set this key and the scenario the
                            // other, the refusal names the scenario's.
                            if self.origin(doc, &key()) == Origin::Stack && self.origin(doc, &oname) == Origin::Own {
                                let what = format!(
                                    "the {} stack's {} = {} needs {needs}",
                                    json_text(&doc["tcp"]["stack"]).trim_matches('"'),
                                    key(),
                                    json_text(v)
                                );
                                return Err(refuse(&oname, ov, &what));
                            }
                            let what = format!("needs {needs} ({oname} is {})", json_text(ov));
                            return Err(refuse(&key(), v, &what));
                        }
                    }
                }
                if let (Some(x), false) = (v.as_f64(), v.is_null()) {
                    for (op, name) in &k.relations {
                        let ov = other(name);
                        let Some(y) = ov.as_f64() else { continue };
                        let holds = match *op {
                            "<" => x < y,
                            "<=" => x <= y,
                            _ => x >= y,
                        };
                        if !holds {
                            let what = format!("must be {op} {} ({}){}", oname(name), json_text(ov), k.note);
                            return Err(refuse(&key(), v, &what));
                        }
                    }
                }
                if let Some(name) = &k.excludes {
                    let ov = other(name);
                    if !v.is_null() && !ov.is_null() {
                        let (oname, key) = (oname(name), key());
                        let what = format!("only one of {oname} and {key} may be set ({oname} = {})", json_text(ov));
                        return Err(refuse(&key, v, &what));
                    }
                }
            }
        }
        Ok(())
    }
}

/// `doc` with each section table of `tables` laid under its own (its own keys win).
/// Presets with `base = "OTHER"` laid over OTHER's values (its own win), so each preset is whole;
/// and apart, each preset's notes (`description`, `base`, `sources` with its base's under its own).
/// A base must be declared before the preset that names it. Tables keep the file's order.
fn with_bases(raw: &toml::Table) -> (toml::Table, toml::Table) {
    let (mut presets, mut notes) = (toml::Table::new(), toml::Table::new());
    for (name, preset) in raw {
        let mut preset = preset.as_table().expect("a preset is a table").clone();
        let mut note = toml::Table::new();
        for field in ["description", "base", "sources"] {
            if let Some(v) = preset.remove(field) {
                note.insert(field.into(), v);
            }
        }
        if let Some(base) = note.get("base").and_then(toml::Value::as_str) {
            let whole = presets.get(base).unwrap_or_else(|| panic!("preset {name}: base {base} first"));
            preset = lay_under_toml(whole.as_table().unwrap(), preset);
            let inherited = notes[base].get("sources").and_then(toml::Value::as_table).cloned().unwrap_or_default();
            let own = note.get("sources").and_then(toml::Value::as_table).cloned().unwrap_or_default();
            note.insert("sources".into(), toml::Value::Table(lay_under_toml(&inherited, own)));
        }
        presets.insert(name.clone(), toml::Value::Table(preset));
        notes.insert(name.clone(), toml::Value::Table(note));
    }
    (presets, notes)
}

/// `base`'s entries, then `own`'s over them (tables merged one level down), in order.
fn lay_under_toml(base: &toml::Table, own: toml::Table) -> toml::Table {
    let mut out = base.clone();
    for (k, v) in own {
        match (out.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => b.extend(o),
            (_, v) => {
                out.insert(k, v);
            }
        }
    }
    out
}

fn lay_under(mut doc: Value, tables: &Value) -> Value {
    for (section, values) in tables.as_object().unwrap() {
        let own = doc.as_object_mut().unwrap().entry(section).or_insert_with(|| Value::Object(Map::new()));
        for (k, v) in values.as_object().unwrap() {
            own.as_object_mut().unwrap().entry(k).or_insert_with(|| v.clone());
        }
    }
    doc
}

/// `network.kind = "hfc" or "docsis"`.
fn kinds(networks: &[String]) -> String {
    let quoted: Vec<String> = networks.iter().map(|k| format!("\"{k}\"")).collect();
    format!("network.kind = {}", quoted.join(" or "))
}

#[cfg(test)]
mod tests {
    use super::{json_text, schema};
    use crate::scenario::{AckRule, Scenario, Stack, TimerKind};
    use serde_json::json;

    #[test]
    fn a_key_is_its_dotted_name_and_no_other() {
        let keys = &schema().keys;
        for k in keys {
            assert!(k.is(&k.key()), "{}", k.key());
            assert_eq!(keys.iter().filter(|o| o.is(&k.key())).count(), 1, "{}", k.key());
        }
        let bytes = keys.iter().find(|k| k.is("flows.*.bytes")).expect("flows.*.bytes");
        for other in ["flows.bytes", "flows.*.bytesx", "flows.*.", "flows", "flowsx.*.bytes", "flows.0.bytes", ""] {
            assert!(!bytes.is(other), "{other}");
        }
        let kind = keys.iter().find(|k| k.is("network.kind")).expect("network.kind");
        assert!(!kind.is("network.*.kind") && !kind.is("network.kin") && !kind.is("networkkind"));
    }

    #[test]
    fn a_stack_lays_its_plain_rules_under_the_document_whose_own_keys_win() {
        let doc = schema().with_stack(json!({"tcp": {"initial_window": 4}}), "linux");
        let sc = Scenario::from_value(doc).unwrap();
        let t = &sc.tcp;
        assert_eq!(
            (t.stack, t.timer, t.sack, t.min_rto_s, t.initial_window),
            (Stack::Linux, TimerKind::Linux, true, 0.2, 4)
        );
        assert_eq!(sc.receiver.ack_rule, AckRule::Linux);
        // `{ true_if = ... }`: HyStart with the stack's CUBIC, none under another control.
        assert!(t.hystart);
        let reno = schema().with_stack(json!({"tcp": {"congestion_control": "reno"}}), "linux");
        assert!(!Scenario::from_value(reno).unwrap().tcp.hystart);
    }

    #[test]
    fn values_read_as_python_writes_them() {
        let cases = [
            (json!(1e-5), "1e-05"),
            (json!(0.0001), "0.0001"),
            (json!(1e16), "1e+16"),
            (json!(1e15), "1000000000000000.0"),
            (json!(30341646.0), "30341646.0"),
            (json!(0.5), "0.5"),
            (json!(1.5e-7), "1.5e-07"),
            (json!(0.0), "0.0"),
            (json!(7), "7"),
            (json!("reno"), "\"reno\""),
            (json!(null), "null"),
        ];
        for (value, text) in cases {
            assert_eq!(json_text(&value), text);
        }
    }
}
