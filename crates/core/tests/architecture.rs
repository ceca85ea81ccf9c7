//! The engine's structure, checked: the layering of its top-level modules (each module uses
//! only modules below it, so there is no import cycle and no back-arrow), no import cycle
//! between files inside a module, and no source file of the project over 600 lines.
//!
//! A reference is any `crate::…` path in code (a `use`, a qualified name, a `use crate::{…}`
//! group) or a `super::…` path, outside comments and outside test code (files named
//! `tests.rs` and everything from a file's `#[cfg(test)]` on, the crate's convention for its
//! test modules). Tests may reach across layers; the engine may not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Modules from the top layer to the bottom one; a module may use the modules after it in
/// this list, never one before it, and modules in one entry may not use each other. A
/// module belongs to the longest entry that is a prefix of its path (`mptcp::sched::blest`
/// to `mptcp::sched`, `mptcp::xmit` to `mptcp`). The schedulers and controllers sit below the
/// schema (`config`), which builds them from their own parameter types (config-as-factory),
/// and the schema sits below the endpoints that read it. `tcp::pacing` is Linux's pacing
/// rule alone, which the upstream scheduler evaluates too.
const LAYERS: &[&[&str]] = &[
    &["sim"],
    &["results"],
    &["mptcp"],
    &["app", "tcp"],
    &["config"],
    &["mptcp::sched", "cc"],
    &["registry", "tcp::pacing"],
    &["trace"],
    &["net"],
    &["rng"],
    &["units"],
];

/// The most lines a source file of the project may have.
const MAX_LINES: usize = 600;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir).expect("read dir").map(|e| e.expect("entry").path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The code of a file without its test module and comments.
fn code(text: &str) -> String {
    let text = text.find("#[cfg(test)]").map_or(text, |i| &text[..i]);
    text.lines()
        .map(|l| match l.find("//") {
            // A `//` inside a string literal (odd number of quotes before it) is not a comment.
            Some(i) if l[..i].matches('"').count() % 2 == 0 => &l[..i],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The module path of a file (`tcp/subflow/mod.rs` → `["tcp", "subflow"]`, `lib.rs` → `[]`).
fn module_of(rel: &Path) -> Vec<String> {
    let mut parts: Vec<String> = rel.iter().map(|s| s.to_string_lossy().into_owned()).collect();
    let last = parts.pop().expect("file name");
    match last.as_str() {
        "mod.rs" | "lib.rs" => {}
        f => parts.push(f.trim_end_matches(".rs").to_string()),
    }
    parts
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The paths a file's code names, as module paths from the crate root: `crate::a::b::C` and
/// each member of `crate::a::{b, c::D}`; `super::x` resolved against the file's module.
fn references(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    // `super` of module a::b (file `a/b.rs` or `a/b/mod.rs`) is a.
    let parent = module[..module.len().saturating_sub(1)].to_vec();
    for (prefix, base) in [("crate::", Vec::new()), ("super::", parent)] {
        let mut rest = code;
        while let Some(i) = rest.find(prefix) {
            let before = rest[..i].chars().next_back();
            rest = &rest[i + prefix.len()..];
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue; // `x::crate::` or `super::super::` handled from its first segment
            }
            let mut base = base.clone();
            let mut tail = rest;
            while let Some(t) = tail.strip_prefix("super::") {
                base.pop();
                tail = t;
            }
            for path in expand(tail) {
                let mut full = base.clone();
                full.extend(path);
                out.push(full);
            }
        }
    }
    out
}

/// `a::b::C` → [[a, b, C]]; `{a, b::{c, d}}` → [[a], [b, c], [b, d]] (one level of groups is
/// enough for the crate's code; deeper ones are expanded the same way).
fn expand(s: &str) -> Vec<Vec<String>> {
    let mut path = Vec::new();
    let mut s = s;
    loop {
        if let Some(group) = s.strip_prefix('{') {
            let mut depth = 1;
            let mut end = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    _ => {}
                }
                if depth == 0 {
                    end = i;
                    break;
                }
            }
            let inner = &group[..end];
            let mut items = Vec::new();
            let (mut depth, mut start) = (0, 0);
            for (i, c) in inner.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        items.push(&inner[start..i]);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            items.push(&inner[start..]);
            let mut out = Vec::new();
            for item in items.into_iter().map(str::trim).filter(|i| !i.is_empty() && *i != "self") {
                for p in expand(item) {
                    let mut full = path.clone();
                    full.extend(p);
                    out.push(full);
                }
            }
            return out;
        }
        let end = s.find(|c: char| !is_ident(c)).unwrap_or(s.len());
        if end == 0 {
            return vec![path];
        }
        path.push(s[..end].to_string());
        match s[end..].strip_prefix("::") {
            Some(next) => s = next,
            None => return vec![path],
        }
    }
}

/// The file a module path names: the longest prefix of it that is a module file.
fn file_of(path: &[String], modules: &BTreeMap<Vec<String>, PathBuf>) -> Option<PathBuf> {
    (1..=path.len()).rev().find_map(|n| modules.get(&path[..n]).cloned())
}

struct Crate {
    /// Module path → file (relative to `src/`).
    modules: BTreeMap<Vec<String>, PathBuf>,
    /// File → the module paths its code names.
    refs: BTreeMap<PathBuf, Vec<Vec<String>>>,
}

fn load() -> Crate {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut modules = BTreeMap::new();
    let mut refs = BTreeMap::new();
    for f in files {
        let rel = f.strip_prefix(src()).expect("under src").to_path_buf();
        if rel.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let module = module_of(&rel);
        let text = std::fs::read_to_string(&f).expect("read");
        refs.insert(rel.clone(), references(&code(&text), &module));
        modules.insert(module, rel);
    }
    Crate { modules, refs }
}

/// The layer entry a module path belongs to, and the layer's position in [`LAYERS`].
fn layer_of(path: &[String]) -> Option<(String, usize)> {
    let joined = path.join("::");
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, l)| l.iter().map(move |m| (*m, i)))
        .filter(|(m, _)| joined == *m || joined.starts_with(&format!("{m}::")))
        .max_by_key(|(m, _)| m.len())
        .map(|(m, i)| (m.to_string(), i))
}

#[test]
fn every_module_uses_only_the_layers_below_it() {
    let c = load();
    let mut wrong = BTreeSet::new();
    let module_of_file: BTreeMap<&PathBuf, &Vec<String>> = c.modules.iter().map(|(m, f)| (f, m)).collect();
    for (file, refs) in &c.refs {
        let module = module_of_file[file];
        if module.is_empty() {
            continue; // lib.rs: the crate's table of contents
        }
        let Some((from, from_layer)) = layer_of(module) else {
            panic!("{}: module `{}` is missing from LAYERS", file.display(), module.join("::"));
        };
        for r in refs {
            // Only references to modules count (not to items of the crate root).
            if r.is_empty() || !c.modules.contains_key(&r[..1]) {
                continue;
            }
            let (to, to_layer) =
                layer_of(r).unwrap_or_else(|| panic!("module `{}` is missing from LAYERS", r.join("::")));
            if to != from && to_layer <= from_layer {
                wrong.insert(format!("{} uses {} ({from} may not use {to})", file.display(), r.join("::")));
            }
        }
    }
    assert!(wrong.is_empty(), "references against the layering:\n{}", wrong.into_iter().collect::<Vec<_>>().join("\n"));
}

#[test]
fn no_import_cycle_between_files() {
    let c = load();
    let mut graph: BTreeMap<PathBuf, BTreeSet<PathBuf>> = BTreeMap::new();
    for (file, refs) in &c.refs {
        let out = graph.entry(file.clone()).or_default();
        for r in refs {
            if let Some(to) = file_of(r, &c.modules) {
                // A module file naming its own children (`pub mod x; pub use x::Y`) is the
                // module's table of contents, not a dependency.
                let parent = |p: &Path| p.parent().map(Path::to_path_buf);
                let declares = file.file_name().is_some_and(|n| n == "mod.rs" || n == "lib.rs")
                    && (parent(&to) == parent(file) || to.starts_with(parent(file).unwrap_or_default()));
                if to != *file && !declares {
                    out.insert(to);
                }
            }
        }
    }
    // Depth-first search for a back edge.
    fn visit(
        n: &PathBuf,
        g: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, u8>,
        stack: &mut Vec<PathBuf>,
    ) -> Option<Vec<PathBuf>> {
        state.insert(n.clone(), 1);
        stack.push(n.clone());
        for m in g.get(n).into_iter().flatten() {
            match state.get(m) {
                Some(1) => {
                    let i = stack.iter().position(|x| x == m).expect("on stack");
                    let mut cycle = stack[i..].to_vec();
                    cycle.push(m.clone());
                    return Some(cycle);
                }
                Some(_) => {}
                None => {
                    if let Some(c) = visit(m, g, state, stack) {
                        return Some(c);
                    }
                }
            }
        }
        stack.pop();
        state.insert(n.clone(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for n in graph.keys() {
        if !state.contains_key(n) {
            let cycle = visit(n, &graph, &mut state, &mut Vec::new());
            assert!(
                cycle.is_none(),
                "import cycle: {}",
                cycle.unwrap().iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" -> ")
            );
        }
    }
}

#[test]
fn no_source_file_is_over_600_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else { return };
        for p in entries.map(|e| e.expect("entry").path()) {
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if p.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "__pycache__" {
                    walk(&p, out);
                }
            } else if p.extension().is_some_and(|x| x == "rs" || x == "py") {
                out.push(p);
            }
        }
    }
    for dir in ["crates", "python", "tests", "scripts"] {
        walk(&root.join(dir), &mut files);
    }
    assert!(files.len() > 50, "found only {} source files under {}", files.len(), root.display());
    let long: Vec<String> = files
        .iter()
        .filter_map(|f| {
            let n = std::fs::read_to_string(f).expect("read").lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", f.strip_prefix(&root).unwrap_or(f).display()))
        })
        .collect();
    assert!(long.is_empty(), "files over {MAX_LINES} lines:\n{}", long.join("\n"));
}
